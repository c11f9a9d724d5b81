"""SDK producer features through the real stack: codecs, key-based batches, chunking,
interleaved chunks, null values, deduplication and the four access modes."""

from __future__ import annotations

import os
import threading
import uuid

import pytest
import requests

import magnetar as pulsar
from magnetar_wire import ChunkInfo, EntryMessage, encode_entry

pytestmark = pytest.mark.emulator

AM = pulsar.ProducerAccessMode


def topic(ns: str = "public/default") -> str:
    return f"persistent://{ns}/pf-{uuid.uuid4().hex[:8]}"


def drain(consumer, n: int) -> list:
    """Receive ``n`` messages, acknowledging each."""
    out = []
    for _ in range(n):
        msg = consumer.receive(15000)
        consumer.acknowledge(msg)
        out.append(msg)
    return out


@pytest.mark.parametrize("ctype", list(pulsar.CompressionType), ids=lambda c: c.name)
def test_each_codec_round_trips_through_the_stack(client, ctype):
    t = topic()
    consumer = client.subscribe(t, "s")
    producer = client.create_producer(t, compression_type=ctype, batching_enabled=True)
    sent = [f"{ctype.name} message {i} ".encode() * 20 for i in range(5)]
    for p in sent:
        producer.send_async(p, lambda r, m: None)
    producer.flush()
    assert [m.data() for m in drain(consumer, 5)] == sent


def test_one_consumer_reads_entries_of_every_codec_on_one_topic(client):
    t = topic()
    consumer = client.subscribe(t, "s")
    sent = []
    for ctype in pulsar.CompressionType:
        producer = client.create_producer(t, compression_type=ctype)
        sent.append(ctype.name.encode() * 100)
        producer.send(sent[-1])
        producer.close()
    assert [m.data() for m in drain(consumer, len(sent))] == sent


def test_key_based_batches_hold_messages_of_one_key(client):
    t = topic()
    consumer = client.subscribe(t, "s")
    producer = client.create_producer(t, batching_enabled=True,
                                      batching_type=pulsar.BatchingType.KeyBased,
                                      batching_max_publish_delay_ms=1000)  # fmt: skip
    keys = [f"k{i % 3}" for i in range(30)]
    for i, k in enumerate(keys):
        producer.send_async(b"m%d" % i, lambda r, m: None, partition_key=k)
    producer.flush()
    by_entry: dict[tuple, set] = {}
    for msg in drain(consumer, len(keys)):
        mid = msg.message_id()
        by_entry.setdefault((mid.ledger_id(), mid.entry_id()), set()).add(msg.partition_key())
    assert all(len(ks) == 1 for ks in by_entry.values())
    assert len(by_entry) >= 3


def test_a_20_mb_payload_is_chunked_and_reassembled(client):
    t = topic()
    consumer = client.subscribe(t, "s")
    producer = client.create_producer(t, chunking_enabled=True)
    payload = os.urandom(20 * 1024 * 1024)
    msg_id = producer.send(payload, properties={"big": "yes"})
    msg = consumer.receive(60000)
    assert msg.data() == payload and msg.properties() == {"big": "yes"}
    assert msg.message_id() == msg_id
    consumer.acknowledge(msg)
    with pytest.raises(pulsar.Timeout):
        consumer.receive(1000)


def test_without_chunking_a_payload_above_the_limit_raises_message_too_big(client):
    producer = client.create_producer(topic())
    with pytest.raises(pulsar.MessageTooBig):
        producer.send(os.urandom(6 * 1024 * 1024))


def test_interleaved_chunks_of_two_producers_are_reassembled(local_stack, client):
    t = topic()
    consumer = client.subscribe(t, "s")
    path = t.replace("://", "/", 1)
    a, b = os.urandom(3000), os.urandom(2000)
    order = [("pa", a, 0, 3), ("pb", b, 0, 2), ("pa", a, 1, 3), ("pb", b, 1, 2), ("pa", a, 2, 3)]
    for name, data, i, total in order:
        part = data[i * 1000 : (i + 1) * 1000]
        entry = encode_entry([EntryMessage(payload=part, sequence_id=7,
                                           chunk=ChunkInfo(f"{name}-7", i, total, len(data)))],
                             producer_name=name, batched=False)  # fmt: skip
        r = requests.post(f"{local_stack.url}/v1/{path}/messages", data=entry, timeout=30,
                          headers={"Content-Type": "application/vnd.magnetar.entry"})  # fmt: skip
        assert r.status_code == 200, r.text
    got = [(m.producer_name(), m.data()) for m in drain(consumer, 2)]
    assert got == [("pb", b), ("pa", a)]


def test_a_null_value_is_distinct_from_an_empty_payload(client):
    t = topic()
    consumer = client.subscribe(t, "s")
    producer = client.create_producer(t)
    producer.send(None, properties={"tomb": "stone"}, partition_key="k")
    producer.send(b"", partition_key="k")
    tomb, empty = drain(consumer, 2)
    assert (tomb.has_null_value(), tomb.data(), tomb.properties(), tomb.partition_key()) == (
        True, b"", {"tomb": "stone"}, "k")  # fmt: skip
    assert (empty.has_null_value(), empty.data()) == (False, b"")


def test_dedup_keeps_last_sequence_id_and_drops_resends(local_stack, client):
    ns = f"public/dedup-{uuid.uuid4().hex[:8]}"
    local_stack.create_namespaces(ns)
    r = requests.post(f"{local_stack.url}/admin/v2/namespaces/{ns}/deduplication", data="true",
                      headers={"Content-Type": "application/json"}, timeout=30)  # fmt: skip
    assert r.status_code in (200, 204), r.text
    t = topic(ns)
    consumer = client.subscribe(t, "s")
    first = client.create_producer(t, producer_name="dedup-p")
    for i in range(3):
        first.send(b"m%d" % i)
    assert first.last_sequence_id() == 2
    first.close()
    again = client.create_producer(t, producer_name="dedup-p")
    assert again.last_sequence_id() == 2
    dup = again.send(b"m1 again", sequence_id=1)
    assert (dup.ledger_id(), dup.entry_id()) == (-1, -1)
    again.send(b"m3")
    assert [m.data() for m in drain(consumer, 4)] == [b"m0", b"m1", b"m2", b"m3"]
    with pytest.raises(pulsar.Timeout):
        consumer.receive(1000)


def test_a_second_exclusive_producer_is_fenced(client):
    t = topic()
    holder = client.create_producer(t, access_mode=AM.Exclusive)
    with pytest.raises(pulsar.ProducerFenced):
        client.create_producer(t, access_mode=AM.Exclusive)
    holder.send(b"still mine")


def test_exclusive_with_fencing_takes_over_and_the_old_producer_fails(client):
    t = topic()
    old = client.create_producer(t, access_mode=AM.Exclusive)
    old.send(b"before")
    new = client.create_producer(t, access_mode=AM.ExclusiveWithFencing)
    with pytest.raises(pulsar.ProducerFenced):
        old.send(b"after")
    new.send(b"new")


def test_wait_for_exclusive_blocks_until_the_holder_closes(client):
    t = topic()
    holder = client.create_producer(t, access_mode=AM.Exclusive)
    created, asking = threading.Event(), threading.Event()
    waiter: list = []

    def create() -> None:
        asking.set()
        waiter.append(client.create_producer(t, access_mode=AM.WaitForExclusive))
        created.set()

    th = threading.Thread(target=create, daemon=True)
    th.start()
    assert asking.wait(10)
    assert not created.wait(2)  # still blocked while the holder is there
    holder.close()
    assert created.wait(30)
    th.join(5)
    waiter[0].send(b"mine now")


def test_shared_producers_both_send(client):
    t = topic()
    consumer = client.subscribe(t, "s")
    a, b = client.create_producer(t), client.create_producer(t)
    a.send(b"a")
    b.send(b"b")
    assert sorted(m.data() for m in drain(consumer, 2)) == [b"a", b"b"]


def test_a_chunked_message_is_stored_whole_with_dedup_on_and_its_resend_dropped(
    local_stack, client
):
    # every chunk carries the message's sequence id: only the last chunk may advance it
    ns = f"public/dedup-{uuid.uuid4().hex[:8]}"
    local_stack.create_namespaces(ns)
    for policy, body in (("deduplication", "true"), ("maxMessageSize", "2048")):
        r = requests.post(f"{local_stack.url}/admin/v2/namespaces/{ns}/{policy}", data=body,
                          headers={"Content-Type": "application/json"}, timeout=30)  # fmt: skip
        assert r.status_code in (200, 204), r.text
    t = topic(ns)
    consumer = client.subscribe(t, "s")
    producer = client.create_producer(t, producer_name="chunky", chunking_enabled=True)
    payload = os.urandom(10_000)
    producer.send(payload, sequence_id=5)
    dup = producer.send(payload, sequence_id=5)
    assert (dup.ledger_id(), dup.entry_id()) == (-1, -1)
    assert drain(consumer, 1)[0].data() == payload
    with pytest.raises(pulsar.Timeout):
        consumer.receive(1000)
