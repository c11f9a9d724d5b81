"""pulsar-client 3.13 parity (issue 15): every ``Client`` option is accepted with its type
check, TLS options become the https settings, and the authentication providers' forms."""

from __future__ import annotations

import datetime
import json
import logging

import pytest
from tls_support import Pki, https_server, make_pki

import magnetar as pulsar
from magnetar._transport.long_poll import LongPoll

UNREACHABLE = "http://127.0.0.1:9"  # a request would fail with ConnectError

EVERY_CLIENT_OPTION = {
    "authentication": pulsar.AuthenticationToken("t"), "operation_timeout_seconds": 5,
    "io_threads": 4, "message_listener_threads": 2, "concurrent_lookup_requests": 10,
    "log_conf_file_path": "/etc/pulsar/log.conf", "stats_interval_in_seconds": 60,
    "use_tls": False, "tls_trust_certs_file_path": "/etc/ssl/ca.pem",
    "tls_allow_insecure_connection": False, "tls_validate_hostname": True,
    "logger": logging.getLogger("app"), "connection_timeout_ms": 2000,
    "listener_name": "internal", "tls_private_key_file_path": "/k.pem",
    "tls_certificate_file_path": "/c.pem", "memory_limit_bytes": 1 << 20,
}  # fmt: skip
WRONG_TYPES = {
    "operation_timeout_seconds": ("30", "int"), "io_threads": (1.0, "int"),
    "message_listener_threads": (None, "int"), "concurrent_lookup_requests": ("5", "int"),
    "stats_interval_in_seconds": ("600", "int"), "connection_timeout_ms": (1.5, "int"),
    "memory_limit_bytes": ("1", "int"), "use_tls": (1, "bool"),
    "tls_allow_insecure_connection": ("no", "bool"), "tls_validate_hostname": (0, "bool"),
    "log_conf_file_path": (3, "str"), "tls_trust_certs_file_path": (b"/ca", "str"),
    "listener_name": (1, "str"), "tls_private_key_file_path": (1, "str"),
    "tls_certificate_file_path": (1, "str"),
}  # fmt: skip


def test_client_accepts_every_option_of_pulsar_client_by_name_and_in_its_order():
    pulsar.Client(UNREACHABLE, **EVERY_CLIENT_OPTION).close()
    positional = [EVERY_CLIENT_OPTION[k] for k in list(EVERY_CLIENT_OPTION)[:6]]
    pulsar.Client(UNREACHABLE, *positional, 60).close()  # ... log_conf_file_path, stats


@pytest.mark.parametrize("name", sorted(WRONG_TYPES))
def test_each_client_option_of_the_wrong_type_raises_pulsar_client_s_value_error(name):
    value, expected = WRONG_TYPES[name]
    message = (
        f"Argument {name} is expected to be of type '{expected}' and not '{type(value).__name__}'"
    )
    with pytest.raises(ValueError) as raised:
        pulsar.Client(UNREACHABLE, **{name: value})
    assert str(raised.value) == message


def test_a_logger_of_another_kind_is_refused_and_pulsar_s_loggers_are_taken():
    with pytest.raises(ValueError, match="Logger is expected to be either None, logger.Logger"):
        pulsar.Client(UNREACHABLE, logger="debug")
    console = pulsar.ConsoleLogger(pulsar.LoggerLevel.Warn)
    assert console.log_level == pulsar.LoggerLevel.Warn
    client = pulsar.Client(UNREACHABLE, logger=console)
    assert client._log is console.logger
    with pytest.raises(ValueError, match="Argument log_level is expected"):
        pulsar.ConsoleLogger("info")


def test_use_tls_with_an_http_url_and_a_key_without_its_certificate_are_refused():
    with pytest.raises(ValueError, match="use_tls=True needs an https:// service URL"):
        pulsar.Client(UNREACHABLE, use_tls=True)
    with pytest.raises(ValueError, match="needs tls_certificate_file_path"):
        pulsar.Client("https://127.0.0.1:9", tls_private_key_file_path="/k.pem")


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Pki:
    now = datetime.datetime.now(datetime.UTC)
    return make_pki(tmp_path_factory.mktemp("pki"), now)


@pytest.mark.filterwarnings("ignore:Unverified HTTPS request")
def test_an_untrusted_https_service_is_refused_unless_its_ca_is_given_or_insecure_allowed(pki):
    with https_server(pki) as url:
        default = pulsar.Client(url, use_tls=True)
        with pytest.raises(pulsar.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            default.get_topic_partitions("t")
        trusted = pulsar.Client(url, tls_trust_certs_file_path=str(pki.ca))
        insecure = pulsar.Client(url, tls_allow_insecure_connection=True)

        assert trusted.get_topic_partitions("t") == ["persistent://public/default/t"]
        assert insecure.get_topic_partitions("t") == ["persistent://public/default/t"]
        answer = LongPoll(trusted._t).post("/poll", {"n": 1}, read_timeout=5.0)
        assert answer["path"] == "/poll"
        for client in (default, trusted, insecure):
            client.close()


def test_the_client_certificate_is_presented_to_a_service_that_requires_one(pki):
    with https_server(pki, require_client_cert=True) as url:
        anonymous = pulsar.Client(url, tls_trust_certs_file_path=str(pki.ca))
        with pytest.raises(pulsar.ConnectError):
            anonymous.get_topic_partitions("t")
        with_cert = pulsar.Client(url, tls_trust_certs_file_path=str(pki.ca),
                                  tls_certificate_file_path=str(pki.client_cert),
                                  tls_private_key_file_path=str(pki.client_key))  # fmt: skip

        assert with_cert.get_topic_partitions("t") == ["persistent://public/default/t"]
        assert LongPoll(with_cert._t).post("/poll", {}, read_timeout=5.0)["path"] == "/poll"
        anonymous.close()
        with_cert.close()


def test_token_from_a_file_url_and_from_a_supplier_and_basic_auth_forms_send_headers(svc, tmp_path):
    token_file = tmp_path / "token.txt"
    token_file.write_text("from-file\n")
    params = json.dumps({"username": "u", "password": "p", "method": "oms3.0"})
    providers = [
        pulsar.AuthenticationToken(f"file://{token_file}"),
        pulsar.AuthenticationToken(lambda: "from-supplier"),
        pulsar.AuthenticationBasic("u", "p", method="oms3.0"),
        pulsar.AuthenticationBasic(auth_params_string=params),
    ]
    for i, provider in enumerate(providers):
        client = pulsar.Client(svc.url, authentication=provider)
        client.get_topic_partitions(f"t{i}")
        client.close()

    sent = [r.headers.get("Authorization") for r in svc.recorded("partitions")]
    assert sent == ["Bearer from-file", "Bearer from-supplier", "Basic dTpw", "Basic dTpw"]
    assert providers[3].method == "oms3.0"


def test_authentication_arguments_are_checked_with_pulsar_client_s_messages():
    with pytest.raises(ValueError, match="'str' or a function returning 'str'"):
        pulsar.AuthenticationToken(42)
    with pytest.raises(ValueError, match="Argument method is expected to be of type 'str'"):
        pulsar.AuthenticationBasic("u", "p", method=None)
    with pytest.raises(ValueError, match="Argument username is expected"):
        pulsar.AuthenticationBasic()
    with pytest.raises(ValueError, match='"username": "my-user"'):
        pulsar.AuthenticationBasic(auth_params_string='{"user": "u"}')


def test_producer_consumer_reader_and_send_accept_every_pulsar_client_keyword(client):
    keys = pulsar.CryptoKeyReader("/pub.pem", "/priv.pem")
    consumer = client.subscribe(
        "t", "s", consumer_type=pulsar.ConsumerType.Shared, schema=pulsar.BytesSchema(),
        message_listener=None, receiver_queue_size=10,
        max_total_receiver_queue_size_across_partitions=100, consumer_name="c",
        unacked_messages_timeout_ms=60_000, broker_consumer_stats_cache_time_ms=1000,
        negative_ack_redelivery_delay_ms=100, is_read_compacted=False, properties={"a": "b"},
        pattern_auto_discovery_period=30, initial_position=pulsar.InitialPosition.Earliest,
        crypto_key_reader=keys, replicate_subscription_state_enabled=True,
        max_pending_chunked_message=5, auto_ack_oldest_chunked_message_on_queue_full=True,
        start_message_id_inclusive=True,
        batch_receive_policy=pulsar.ConsumerBatchReceivePolicy(10, 1000, 100),
        key_shared_policy=None, batch_index_ack_enabled=True,
        regex_subscription_mode=pulsar.RegexSubscriptionMode.AllTopics,
        dead_letter_policy=pulsar.ConsumerDeadLetterPolicy(3),
        crypto_failure_action=pulsar.ConsumerCryptoFailureAction.CONSUME,
    )  # fmt: skip
    producer = client.create_producer(
        "t", producer_name="p", schema=pulsar.BytesSchema(), initial_sequence_id=10,
        send_timeout_millis=5000, compression_type=pulsar.CompressionType.ZLib,
        max_pending_messages=10, max_pending_messages_across_partitions=100,
        block_if_queue_full=True, batching_enabled=False, batching_max_messages=10,
        batching_max_allowed_size_in_bytes=1000, batching_max_publish_delay_ms=5,
        chunking_enabled=True, message_routing_mode=pulsar.PartitionsRoutingMode.UseSinglePartition,
        lazy_start_partitioned_producers=True, properties={"app": "x"},
        batching_type=pulsar.BatchingType.KeyBased, encryption_key=None, crypto_key_reader=keys,
        access_mode=pulsar.ProducerAccessMode.Shared, message_router=lambda msg, n: 0,
    )  # fmt: skip
    reader = client.create_reader(
        "t", pulsar.MessageId.earliest, schema=pulsar.BytesSchema(), reader_listener=None,
        receiver_queue_size=10, reader_name="r", subscription_role_prefix="role",
        is_read_compacted=False, crypto_key_reader=keys, start_message_id_inclusive=False,
        crypto_failure_action=pulsar.ConsumerCryptoFailureAction.FAIL,
    )  # fmt: skip

    msg_id = producer.send(b"m", properties={"k": "v"}, partition_key="pk", ordering_key="ok",
                           sequence_id=11, replication_clusters=["other"],
                           disable_replication=True, event_timestamp=123, deliver_at=None,
                           deliver_after=None)  # fmt: skip

    got = consumer.receive(5000)
    assert (got.message_id(), got.partition_key(), got.ordering_key()) == (msg_id, "pk", "ok")
    assert reader.read_next(5000).message_id() == msg_id


def test_athenz_authentication_is_checked_then_refused_as_unsupported():
    with pytest.raises(ValueError, match="Argument auth_params_string is expected"):
        pulsar.AuthenticationAthenz({"tenantDomain": "d"})
    with pytest.raises(pulsar.OperationNotSupported, match="AuthenticationToken"):
        pulsar.Client(UNREACHABLE, authentication=pulsar.AuthenticationAthenz('{"a": 1}'))
