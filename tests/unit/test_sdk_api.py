"""The SDK's module surface: enums, exceptions, argument checks, topic names, MessageId."""

from __future__ import annotations

import re

import pytest

import magnetar as pulsar


def test_enums_have_pulsar_client_names():
    assert [m.name for m in pulsar.ConsumerType] == ["Exclusive", "Shared", "Failover", "KeyShared"]
    assert [m.name for m in pulsar.CompressionType] == ["NONE", "LZ4", "ZLib", "ZSTD", "SNAPPY"]
    assert [m.name for m in pulsar.InitialPosition] == ["Latest", "Earliest"]
    assert [m.name for m in pulsar.PartitionsRoutingMode] == [
        "UseSinglePartition", "RoundRobinDistribution", "CustomPartition"]  # fmt: skip
    assert [m.name for m in pulsar.BatchingType] == ["Default", "KeyBased"]
    assert [m.name for m in pulsar.ProducerAccessMode] == [
        "Shared", "Exclusive", "WaitForExclusive", "ExclusiveWithFencing"]  # fmt: skip
    assert [m.name for m in pulsar.KeySharedMode] == ["AutoSplit", "Sticky"]
    assert [m.name for m in pulsar.RegexSubscriptionMode] == [
        "PersistentOnly", "NonPersistentOnly", "AllTopics"]  # fmt: skip
    assert [m.name for m in pulsar.LoggerLevel] == ["Debug", "Info", "Warn", "Error"]
    assert pulsar.Result.Ok == 0


@pytest.mark.parametrize("name", [
    "Timeout", "ConnectError", "AuthenticationError", "AuthorizationError", "ConsumerBusy",
    "AlreadyClosed", "InvalidMessage", "ProducerBusy", "ProducerQueueIsFull", "MessageTooBig",
    "TopicNotFound", "SubscriptionNotFound", "InvalidTopicName", "OperationNotSupported",
    "TopicTerminated", "CumulativeAcknowledgementNotAllowedError", "ProducerFenced",
    "NotAllowedError", "ChecksumError", "ServiceUnitNotReady", "Interrupted", "UnknownError",
    "ConsumerNotFound", "TopicAlreadyExists", "TopicBusy", "TooManyRequests",
])  # fmt: skip
def test_every_result_has_an_exception_class_under_pulsar_exception(name):
    cls = getattr(pulsar, name)
    assert issubclass(cls, pulsar.PulsarException)
    assert cls is getattr(pulsar.exceptions, name)
    assert cls("x").result() is pulsar.Result[name]


def test_exception_for_maps_unknown_error_names_to_unknown_error():
    e = pulsar.exceptions.exception_for("NoSuchThing", "boom")
    assert type(e) is pulsar.UnknownError and "NoSuchThing" in str(e)
    assert type(pulsar.exceptions.exception_for("TopicBusy", "m")) is pulsar.TopicBusy


def test_a_pulsar_url_is_rejected_with_a_hint_to_use_the_http_url():
    with pytest.raises(ValueError, match="HTTP URL of the Magnetar API"):
        pulsar.Client("pulsar://localhost:6650")


def test_wrong_argument_types_raise_value_error_with_pulsar_s_message():
    with pytest.raises(ValueError, match=re.escape(
            "Argument operation_timeout_seconds is expected to be of type 'int' and not 'str'")):  # fmt: skip
        pulsar.Client("http://127.0.0.1:1", operation_timeout_seconds="30")
    client = pulsar.Client("http://127.0.0.1:1")
    with pytest.raises(
        ValueError, match="Argument producer_name is expected to be of type 'str' and not 'int'"
    ):
        client.create_producer("t", producer_name=5)
    with pytest.raises(
        ValueError,
        match="Argument consumer_type is expected to be of type 'ConsumerType' and not 'str'",
    ):
        client.subscribe("t", "s", consumer_type="Shared")
    with pytest.raises(ValueError, match="Argument topic is expected to be of a type between"):
        client.subscribe(42, "s")


def test_client_is_lazy_and_connects_only_on_first_use():
    client = pulsar.Client("http://127.0.0.1:9")  # nothing listens on port 9
    with pytest.raises(pulsar.ConnectError):
        client.create_producer("t")
    client.close()


def test_batching_with_chunking_and_short_ack_timeout_raise_value_error():
    client = pulsar.Client("http://127.0.0.1:9")
    with pytest.raises(ValueError, match="can't be enabled together"):
        client.create_producer("t", batching_enabled=True, chunking_enabled=True)
    with pytest.raises(ValueError, match="10000"):
        client.subscribe("t", "s", unacked_messages_timeout_ms=5000)


def test_unsupported_features_raise_operation_not_supported(svc):
    client = pulsar.Client(svc.url)
    with pytest.raises(ValueError, match="start_message_id"):
        client.create_reader("t", "earliest")
    with pytest.raises(ValueError, match="need a crypto_key_reader"):
        client.create_producer("t", encryption_key="k")
    client.close()


@pytest.mark.parametrize("topic, full", [
    ("t", "persistent://public/default/t"),
    ("tn/ns/t", "persistent://tn/ns/t"),
    ("non-persistent://a/b/c", "non-persistent://a/b/c"),
])  # fmt: skip
def test_short_topic_names_are_expanded(topic, full):
    from magnetar._topics import parse_topic

    assert str(parse_topic(topic)) == full


@pytest.mark.parametrize("topic", ["", "a/b", "a/b/c/d", "kafka://a/b/c", "persistent://a/b/",
                                   "persistent://a b/c/d", "with space"])  # fmt: skip
def test_malformed_topic_names_raise_invalid_topic_name_before_any_request(topic):
    client = pulsar.Client("http://127.0.0.1:9")  # unreachable: a request would be ConnectError
    with pytest.raises(pulsar.InvalidTopicName):
        client.create_producer(topic)


def test_get_topic_partitions_lists_partition_names_or_the_topic(svc):
    svc.create_partitioned_topic("persistent/public/default/p", 3)
    client = pulsar.Client(svc.url)
    assert client.get_topic_partitions("p") == [
        f"persistent://public/default/p-partition-{i}" for i in range(3)]  # fmt: skip
    assert client.get_topic_partitions("plain") == ["persistent://public/default/plain"]
    client.close()


def test_after_close_every_use_raises_already_closed(svc):
    client = pulsar.Client(svc.url)
    producer = client.create_producer("t")
    client.close()
    with pytest.raises(pulsar.AlreadyClosed):
        client.create_producer("t")
    with pytest.raises(pulsar.AlreadyClosed):
        client.subscribe("t", "s")
    with pytest.raises(pulsar.AlreadyClosed):
        producer.send(b"x")
    client.shutdown()  # idempotent


def test_server_error_json_maps_to_the_exception_of_that_name(svc):
    client = pulsar.Client(svc.url)
    svc.fail_next("subscribe", 409, "ConsumerBusy", "someone else is here")
    with pytest.raises(pulsar.ConsumerBusy, match="someone else is here"):
        client.subscribe("t", "s")
    svc.fail_next("partitions", 418, "Teapot", "short and stout")
    with pytest.raises(pulsar.UnknownError, match="Teapot"):
        client.get_topic_partitions("t")
    client.close()


def test_authentication_sends_an_authorization_header(svc):
    tokens = iter(["first", "second"])
    client = pulsar.Client(svc.url, authentication=pulsar.AuthenticationToken(lambda: next(tokens)))
    client.get_topic_partitions("a")
    client.get_topic_partitions("b")
    basic = pulsar.Client(svc.url, authentication=pulsar.AuthenticationBasic("u", "p"))
    basic.get_topic_partitions("c")
    auth = [r.headers.get("Authorization") for r in svc.recorded("partitions")]
    assert auth == ["Bearer first", "Bearer second", "Basic dTpw"]
    client.close()
    basic.close()


def test_message_id_orders_by_ledger_entry_batch_and_compares_partition_for_equality():
    a, b = pulsar.MessageId(0, 1, 2, -1), pulsar.MessageId(0, 1, 2, 0)
    assert a < b and b > a and sorted([b, a]) == [a, b]
    assert pulsar.MessageId(1, 1, 2, 0) != b and not (pulsar.MessageId(1, 1, 2, 0) < b)
    assert pulsar.MessageId(0, 1, 2, 0) == b
    assert len({b, pulsar.MessageId(0, 1, 2, 0), a}) == 2
    assert pulsar.MessageId.earliest < a < pulsar.MessageId.latest
    assert (pulsar.MessageId.latest.ledger_id(), pulsar.MessageId.latest.entry_id()) == (
        2**63 - 1,
    ) * 2


def test_message_id_text_form_and_serialize_round_trip():
    mid = pulsar.MessageId(partition=3, ledger_id=7, entry_id=9, batch_index=2)
    assert str(mid) == "7:9:3:2"
    back = pulsar.MessageId.deserialize(mid.serialize(), topic="persistent://public/default/t")
    assert back == mid and back.topic() == "persistent://public/default/t"
    assert (back.partition(), back.ledger_id(), back.entry_id(), back.batch_index()) == (3, 7, 9, 2)
    for special in (pulsar.MessageId.earliest, pulsar.MessageId.latest):
        assert pulsar.MessageId.deserialize(special.serialize()) == special


def test_message_id_rejects_non_int_parts():
    with pytest.raises(ValueError, match="Argument ledger_id is expected to be of type 'int'"):
        pulsar.MessageId(0, "1", 0, 0)


def test_cli_entry_point_is_importable_and_local_is_lazy(monkeypatch):
    from magnetar.cli import main as cli

    calls = []
    fake = type("M", (), {"run": staticmethod(lambda argv: calls.append(argv) or 0)})
    pkg = type("P", (), {"main": fake})
    monkeypatch.setitem(__import__("sys").modules, "magnetar_local", pkg)
    monkeypatch.setitem(__import__("sys").modules, "magnetar_local.main", fake)
    assert cli.main(["local", "--port", "8099"]) == 0
    assert calls == [["--port", "8099"]]
