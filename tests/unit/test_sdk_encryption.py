"""End-to-end encryption through the SDK on the memory service: producers encrypt with
``encryption_key(s)``, consumers and readers decrypt with ``crypto_key_reader``, and a
message they cannot decrypt is failed, discarded or consumed as ``crypto_failure_action``
says; the service only ever holds the ciphertext."""

from __future__ import annotations

import base64
import urllib.request

import pytest
from crypto_keys import key_reader
from cryptography.hazmat.primitives.asymmetric import ec, rsa

import magnetar as pulsar
from magnetar._encryption.key_reader import entry_encrypter
from magnetar_core.api.views import messages
from magnetar_core.services.entries import DeliveredEntry
from magnetar_core.services.triggers.delivery import records_of
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.names import TopicName

Action = pulsar.ConsumerCryptoFailureAction
SECRET = b"attack at dawn"


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    """Key readers of one RSA (2048-bit, made once) and two EC key pairs."""
    d = tmp_path_factory.mktemp("keys")
    return {
        "rsa": key_reader(d, "rsa", rsa.generate_private_key(public_exponent=65537, key_size=2048)),
        "ec": key_reader(d, "ec", ec.generate_private_key(ec.SECP256R1())),
        "other": key_reader(d, "other", ec.generate_private_key(ec.SECP256R1())),
    }


class ByName(pulsar.CryptoKeyReader):
    """A key reader with one key pair per key name (overriding public_key / private_key)."""

    def __init__(self, readers: dict[str, pulsar.CryptoKeyReader]) -> None:
        super().__init__("", "")
        self.readers = readers

    def public_key(self, key_name):
        return self.readers[key_name].public_key(key_name)

    def private_key(self, key_name, metadata):
        return self.readers[key_name].private_key(key_name, metadata)


@pytest.mark.parametrize("kind", ["rsa", "ec"])
def test_an_encrypted_message_reaches_a_consumer_and_a_reader_with_the_private_key(
    client, keys, kind
):
    consumer = client.subscribe("t", "s", crypto_key_reader=keys[kind])
    reader = client.create_reader("t", pulsar.MessageId.earliest, crypto_key_reader=keys[kind])
    producer = client.create_producer("t", encryption_key="app", crypto_key_reader=keys[kind],
                                      compression_type=pulsar.CompressionType.LZ4)  # fmt: skip
    producer.send(SECRET, partition_key="pk", properties={"a": "b"})

    for msg in (consumer.receive(5000), reader.read_next(5000)):
        ctx = msg.encryption_context()
        assert (msg.data(), msg.partition_key(), msg.properties()) == (SECRET, "pk", {"a": "b"})
        assert ctx is not None and not ctx.is_decryption_failed()
        assert [k.key for k in ctx.keys()] == ["app"] and ctx.algorithm() == "AES-256-GCM"  # noqa: SIM118
        assert ctx.compression_type() == pulsar.CompressionType.LZ4 and ctx.batch_size() == -1
        assert ctx.uncompressed_message_size() == len(SECRET) and len(ctx.param()) == 12


def test_a_message_encrypted_for_two_keys_is_read_with_either(client, keys):
    both = ByName({"one": keys["rsa"], "two": keys["ec"]})
    only_two = ByName({"one": keys["other"], "two": keys["ec"]})
    first = client.subscribe("t", "first", crypto_key_reader=keys["rsa"])
    second = client.subscribe("t", "second", crypto_key_reader=only_two)
    producer = client.create_producer("t", encryption_keys=["one", "two"], crypto_key_reader=both)
    producer.send(SECRET)

    assert first.receive(5000).data() == SECRET  # the default reader: one pair for every name
    got = second.receive(5000)
    assert got.data() == SECRET
    assert [k.key for k in got.encryption_context().keys()] == ["one", "two"]  # noqa: SIM118


def test_fail_leaves_the_message_undelivered_and_unacknowledged(client, keys):
    wrong = client.subscribe("t", "s", crypto_key_reader=keys["other"],
                             consumer_type=pulsar.ConsumerType.Shared)  # fmt: skip
    client.create_producer("t", encryption_key="k", crypto_key_reader=keys["ec"]).send(SECRET)

    with pytest.raises(pulsar.Timeout):
        wrong.receive(300)
    wrong.close()
    right = client.subscribe("t", "s", crypto_key_reader=keys["ec"],
                             consumer_type=pulsar.ConsumerType.Shared)  # fmt: skip
    assert right.receive(5000).data() == SECRET  # still there: FAIL acknowledged nothing


def test_a_consumer_without_a_key_reader_fails_on_an_encrypted_message_by_default(client, keys):
    plain = client.subscribe("t", "s")
    client.create_producer("t", encryption_key="k", crypto_key_reader=keys["ec"]).send(SECRET)
    with pytest.raises(pulsar.Timeout):
        plain.receive(300)


def test_discard_acknowledges_the_message_and_moves_on(client, keys):
    wrong = client.subscribe("t", "s", crypto_key_reader=keys["other"],
                             crypto_failure_action=Action.DISCARD)  # fmt: skip
    client.create_producer("t", encryption_key="k", crypto_key_reader=keys["ec"]).send(SECRET)
    client.create_producer("t").send(b"clear")

    clear = wrong.receive(5000)
    assert clear.data() == b"clear"
    wrong.acknowledge(clear)
    wrong.close()
    right = client.subscribe("t", "s", crypto_key_reader=keys["ec"])
    client.create_producer("t").send(b"after")
    assert right.receive(5000).data() == b"after"  # the discarded one was acknowledged


def test_consume_delivers_a_batch_as_one_message_with_its_ciphertext(client, keys):
    consumer = client.subscribe("t", "s", crypto_failure_action=Action.CONSUME)
    producer = client.create_producer("t", encryption_key="k", crypto_key_reader=keys["ec"],
                                      batching_enabled=True, batching_max_messages=3,
                                      batching_max_publish_delay_ms=60_000)  # fmt: skip
    for i in range(3):
        producer.send_async(SECRET + bytes([i]), None, partition_key=f"k{i}")
    producer.flush()

    msg = consumer.receive(5000)
    ctx = msg.encryption_context()
    assert ctx.is_decryption_failed() and ctx.batch_size() == 3
    assert SECRET not in msg.data() and len(msg.data()) == 3 * (len(SECRET) + 1) + 16
    assert msg.partition_key() == "k0" and msg.message_id().batch_index() == -1
    consumer.acknowledge(msg)  # the whole entry
    with pytest.raises(pulsar.Timeout):
        consumer.receive(200)


def test_the_service_s_json_receive_and_peek_see_only_the_ciphertext(svc, client, keys):
    client.subscribe("t", "s").close()
    client.create_producer("t", encryption_key="k", crypto_key_reader=keys["ec"]).send(
        SECRET, partition_key="pk"
    )
    base = f"{svc.url}/admin/v2/persistent/public/default/t/subscription/s/position/1"
    with urllib.request.urlopen(base) as answer:
        body, headers = answer.read(), answer.headers
    assert headers["X-Pulsar-Is-Encrypted"] == "true" and SECRET not in body
    assert headers["X-Pulsar-partition-key"] == "pk"


def test_json_receives_and_trigger_records_carry_an_encrypted_entry_as_one_opaque_message(keys):
    batch = [EntryMessage(SECRET, i, 1, key=f"k{i}") for i in range(2)]
    data = encode_entry(batch, producer_name="p", encrypt=entry_encrypter(keys["ec"], ["k"]))
    delivered = DeliveredEntry(TopicName.parse("t"), 1, 7, -1, 0, None, data)

    [item] = messages([delivered])["messages"]
    assert (item["messageId"], item["key"], item["encrypted"], item["batchSize"]) == (
        "1:7:-1:-1", "k0", True, 2)  # fmt: skip
    assert SECRET not in base64.b64decode(item["payload"])
    [record] = records_of([delivered])
    assert record.to_json()["encrypted"] is True and record.message_id == "1:7:-1:-1"
