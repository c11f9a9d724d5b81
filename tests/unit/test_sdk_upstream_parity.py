"""What pulsar-client's own test files expect of the SDK beyond the service (measured with
``tests/upstream/run_upstream.py``): the extension's configuration holders, table views'
callback values, schema versions, Avro evolution and the asyncio API's errors."""

from __future__ import annotations

import asyncio
import threading

import pytest

import magnetar as pulsar
from magnetar import _pulsar


def test_producer_configuration_reads_defaults_and_sets_options_as_the_extension_does():
    conf = _pulsar.ProducerConfiguration()
    assert conf.compression_type() == pulsar.CompressionType.NONE
    assert conf.send_timeout_millis(12) is conf
    assert conf.send_timeout_millis() == 12
    conf.compression_type(pulsar.CompressionType.LZ4).max_pending_messages(120)
    assert (conf.compression_type(), conf.max_pending_messages()) == (pulsar.CompressionType.LZ4, 120)  # fmt: skip


def test_consumer_configuration_reads_defaults_and_sets_options_as_the_extension_does():
    conf = _pulsar.ConsumerConfiguration()
    assert conf.consumer_type() == pulsar.ConsumerType.Exclusive
    assert conf.consumer_name() == ""
    assert conf.replicate_subscription_state_enabled() is False
    conf.consumer_type(pulsar.ConsumerType.Shared).consumer_name("my-name")
    assert (conf.consumer_type(), conf.consumer_name()) == (pulsar.ConsumerType.Shared, "my-name")
    assert _pulsar.ConsumerConfiguration().consumer_name() == ""  # one configuration's values only


def test_closing_an_asyncio_producer_twice_raises_already_closed(svc):
    from magnetar.asyncio import PulsarException

    async def body():
        client = pulsar.asyncio.Client(svc.url)
        try:
            producer = await client.create_producer("t")
            await producer.close()
            with pytest.raises(PulsarException) as raised:
                await producer.close()
            return raised.value.error()
        finally:
            await client.close()

    assert asyncio.run(body()) == pulsar.Result.AlreadyClosed


def test_set_future_settles_from_another_thread_and_leaves_a_done_or_cancelled_future_alone():
    from magnetar.asyncio import PulsarException, _set_future

    async def body():
        loop = asyncio.get_running_loop()
        failed, cancelled, done = loop.create_future(), loop.create_future(), loop.create_future()
        cancelled.cancel()
        done.set_result("first")
        worker = threading.Thread(target=_set_future, args=(failed, pulsar.Result.Timeout, None))
        worker.start()
        worker.join()
        _set_future(cancelled, pulsar.Result.Ok, None)
        _set_future(done, pulsar.Result.Ok, "late")
        with pytest.raises(PulsarException) as raised:
            await failed
        await asyncio.sleep(0)
        return raised.value.error(), cancelled.cancelled(), done.result()

    assert asyncio.run(body()) == (pulsar.Result.Timeout, True, "first")


def test_the_record_base_class_itself_cannot_be_made_as_pulsar_clients_cannot():
    from magnetar.schema import Integer, Record

    class Example(Record):
        a = Integer()

    assert Example(a=1).a == 1
    with pytest.raises(TypeError):
        Record(a=1, c=8)


def test_a_message_s_schema_version_is_the_version_s_8_big_endian_bytes(client):
    from magnetar.schema import AvroSchema, Integer, Record

    class Example(Record):
        a = Integer()

    consumer = client.subscribe("versions", "s", schema=AvroSchema(Example))
    client.create_producer("versions", schema=AvroSchema(Example)).send(Example(a=1))
    client.create_producer("versions").send(b"raw")
    first, second = consumer.receive(5000), consumer.receive(5000)
    assert first.schema_version().encode() == b"\x00" * 8
    assert second.schema_version() == ""


def test_a_bytes_table_view_gives_its_callbacks_text_and_get_bytes_as_pulsar_client_does(client):
    producer = client.create_producer("view")
    producer.send(b"value-0", partition_key="key-0")
    producer.send(b"\xba\xd0", partition_key="key-1")  # not UTF-8
    view = client.create_table_view("view")
    try:
        seen: dict[str, object] = {}
        view.for_each(seen.__setitem__)
        assert seen == {"key-0": "value-0", "key-1": b"\xba\xd0".decode("utf-8", "surrogateescape")}
        assert (view.get("key-0"), view.get("key-1")) == (b"value-0", b"\xba\xd0")
    finally:
        view.close()


def test_a_consumer_of_the_old_record_reads_a_renamed_record_that_evolved_under_forward(
    svc, client
):
    import requests

    from magnetar.schema import AvroSchema, Integer, Record, String

    class User1(Record):
        name = String()
        age = Integer()

    class User2(Record):
        _sorted_fields = True
        name = String()
        age = Integer(required=True)

    strategy = svc.url + "/admin/v2/namespaces/public/default/schemaCompatibilityStrategy"
    assert requests.put(strategy, json="FORWARD", timeout=10).status_code == 204
    consumer = client.subscribe("evolve", "s", schema=AvroSchema(User1))
    client.create_producer("evolve", schema=AvroSchema(User1)).send(User1(name="a", age=1))
    client.create_producer("evolve", schema=AvroSchema(User2)).send(User2(name="b", age=2))
    got = [consumer.receive(5000).value() for _ in range(2)]
    assert [(type(v).__name__, v.name, v.age) for v in got] == [
        ("User1", "a", 1),
        ("User1", "b", 2),
    ]


def test_a_failing_token_supplier_fails_the_request_with_authentication_error_naming_it(svc):
    def supplier() -> str:
        raise RuntimeError("token supplier failed")

    client = pulsar.Client(svc.url, authentication=pulsar.AuthenticationToken(supplier))
    try:
        with pytest.raises(pulsar.AuthenticationError, match="token supplier failed"):
            client.create_producer("t")
    finally:
        client.close()


def test_the_tls_plugin_names_and_their_params_are_authentication_tls(tmp_path):
    params = f"tlsCertFile:{tmp_path}/c.pem,tlsKeyFile:{tmp_path}/k.pem"
    for name in ("tls", "org.apache.pulsar.client.impl.auth.AuthenticationTls"):
        auth = pulsar.Authentication(name, params)
        assert auth._client_cert() == (f"{tmp_path}/c.pem", f"{tmp_path}/k.pem")
        assert auth._headers() == {}
    token = pulsar.Authentication("token", "token:abc")
    assert token._headers() == {"Authorization": "Bearer abc"}


def test_an_unknown_plugin_makes_a_client_whose_requests_raise_connect_error(svc):
    client = pulsar.Client(svc.url, authentication=pulsar.Authentication("someoldjunk.so", "blah"))
    try:
        with pytest.raises(pulsar.ConnectError, match="someoldjunk.so"):
            client.subscribe("t", "s")
    finally:
        client.close()


def test_a_named_listener_is_not_advertised_so_creating_a_producer_or_consumer_through_it_fails(
    svc,
):
    client = pulsar.Client(svc.url, listener_name="test")
    try:
        assert client.get_topic_partitions("t") == ["persistent://public/default/t"]
        with pytest.raises(pulsar.PulsarException, match="no listener named 'test'"):
            client.create_producer("t")
        with pytest.raises(pulsar.PulsarException, match="no listener named 'test'"):
            client.subscribe("t", "s")
    finally:
        client.close()
