"""pulsar-client 3.13 parity (issue 15): send_async without a callback, Message and
MessageId accessors, a reader at latest that includes the last message, the crypto names
accepted on consumers and readers, and ``pulsar._pulsar``."""

from __future__ import annotations

import pytest

import magnetar as pulsar


def test_send_async_with_none_as_callback_sends_the_message(client):
    consumer = client.subscribe("t", "s")
    producer = client.create_producer("t")

    producer.send_async(b"no callback", None)
    producer.flush()

    assert consumer.receive(5000).data() == b"no callback"


def test_send_async_rejects_a_callback_that_is_not_callable(client):
    producer = client.create_producer("t")
    with pytest.raises(ValueError, match="callback"):
        producer.send_async(b"x", "not a function")


def test_ordering_key_comes_back_as_str_and_is_empty_when_unset(client):
    consumer = client.subscribe("t", "s")
    producer = client.create_producer("t")
    producer.send(b"a", ordering_key="customer-7")
    producer.send(b"b")

    keyed, plain = consumer.receive(5000), consumer.receive(5000)

    assert keyed.ordering_key() == "customer-7"
    assert plain.ordering_key() == ""


def test_a_received_message_is_not_encrypted_so_its_encryption_context_is_none(client):
    consumer = client.subscribe("t", "s")
    client.create_producer("t").send(b"plain")

    assert consumer.receive(5000).encryption_context() is None


def test_message_id_has_pulsar_client_s_accessors_comparisons_and_wrap():
    mid = pulsar.MessageId(partition=2, ledger_id=5, entry_id=8, batch_index=1)
    later = pulsar.MessageId(2, 5, 8, 2)

    wrapped = pulsar.MessageId.wrap(mid)
    assert wrapped == mid and wrapped is not mid
    assert (wrapped.partition(), wrapped.ledger_id(), wrapped.entry_id(),
            wrapped.batch_index()) == (2, 5, 8, 1)  # fmt: skip
    assert mid <= later and mid < later and later >= mid and later > mid and mid != later
    assert mid <= wrapped and mid >= wrapped
    assert pulsar.MessageId.deserialize(mid.serialize()) == mid
    earliest = pulsar.MessageId.earliest
    assert (earliest.ledger_id(), earliest.entry_id(), earliest.batch_index()) == (-1, -1, -1)
    with pytest.raises(ValueError, match="Argument msg_id is expected to be of type 'MessageId'"):
        pulsar.MessageId.wrap("5:8:2:1")


def test_wrap_keeps_the_topic_of_a_received_message_id(client):
    client.create_producer("t").send(b"x")
    msg = client.create_reader("t", pulsar.MessageId.earliest).read_next(5000)

    wrapped = pulsar.MessageId.wrap(msg.message_id())

    assert wrapped.topic() == msg.message_id().topic() == "persistent://public/default/t"


def test_a_reader_at_latest_inclusive_reads_the_last_message_and_then_new_ones(client):
    producer = client.create_producer("t")
    for payload in (b"first", b"last"):
        producer.send(payload)
    inclusive = client.create_reader("t", pulsar.MessageId.latest, start_message_id_inclusive=True)
    exclusive = client.create_reader("t", pulsar.MessageId.latest)

    assert inclusive.has_message_available() is True
    assert exclusive.has_message_available() is False
    assert inclusive.read_next(5000).data() == b"last"
    assert inclusive.has_message_available() is False
    producer.send(b"new")
    assert inclusive.read_next(5000).data() == b"new"
    assert exclusive.read_next(5000).data() == b"new"


def test_a_reader_at_latest_inclusive_starts_at_the_last_message_of_a_batch(client):
    producer = client.create_producer("t", batching_enabled=True, batching_max_messages=3,
                                      batching_max_publish_delay_ms=60_000)  # fmt: skip
    for i in range(3):
        producer.send_async(f"b{i}".encode(), None)
    producer.flush()

    reader = client.create_reader("t", pulsar.MessageId.latest, start_message_id_inclusive=True)
    msg = reader.read_next(5000)

    assert msg.data() == b"b2" and msg.message_id().batch_index() == 2
    with pytest.raises(pulsar.Timeout):
        reader.read_next(200)


def test_a_reader_at_latest_inclusive_on_an_empty_topic_waits_for_the_first_message(client):
    reader = client.create_reader("t", pulsar.MessageId.latest, start_message_id_inclusive=True)
    assert reader.has_message_available() is False

    client.create_producer("t").send(b"first")

    assert reader.read_next(5000).data() == b"first"


def test_a_reader_decodes_values_with_its_schema(client):
    client.create_producer("t", schema=pulsar.StringSchema()).send("héllo")

    reader = client.create_reader("t", pulsar.MessageId.earliest, schema=pulsar.StringSchema())

    assert reader.read_next(5000).value() == "héllo"


def test_consumers_and_readers_accept_a_crypto_key_reader_and_a_failure_action(client):
    keys = pulsar.CryptoKeyReader("/keys/public.pem", "/keys/private.pem")
    discard = pulsar.ConsumerCryptoFailureAction.DISCARD
    consumer = client.subscribe("t", "s", crypto_key_reader=keys, crypto_failure_action=discard)
    reader = client.create_reader("t", pulsar.MessageId.earliest, crypto_key_reader=keys,
                                  crypto_failure_action=discard)  # fmt: skip
    client.create_producer("t", crypto_key_reader=keys).send(b"plain")

    assert consumer.receive(5000).data() == b"plain"
    assert reader.read_next(5000).data() == b"plain"


def test_crypto_arguments_are_type_checked_and_encryption_keys_need_a_key_reader(client):
    keys = pulsar.CryptoKeyReader("/no/such/public.pem", "/no/such/private.pem")
    with pytest.raises(ValueError, match="Argument public_key_path is expected"):
        pulsar.CryptoKeyReader(b"/k.pem", "/p.pem")
    with pytest.raises(ValueError, match="Argument crypto_key_reader is expected"):
        client.subscribe("t", "s", crypto_key_reader="/keys")
    with pytest.raises(ValueError, match="Argument crypto_failure_action is expected"):
        client.create_reader("t", pulsar.MessageId.earliest, crypto_failure_action=1)
    with pytest.raises(ValueError, match="need a crypto_key_reader"):
        client.create_producer("t", encryption_key="k")
    with pytest.raises(ValueError, match="Argument encryption_keys is expected"):
        client.create_producer("t", encryption_keys="k", crypto_key_reader=keys)
    with pytest.raises(pulsar.CryptoError, match="cannot read the public key"):
        client.create_producer("t", encryption_key="k", crypto_key_reader=keys)


def test_the_c_extension_names_resolve_to_the_sdk_s_objects():
    ext = pulsar._pulsar
    assert ext.ConsumerType.Shared is pulsar.ConsumerType.Shared
    assert ext.MessageId is pulsar.MessageId and ext.Result is pulsar.Result
    assert ext.ConsumerCryptoFailureAction.CONSUME == 2
    assert isinstance(pulsar.MessageId.earliest, ext.MessageId)
