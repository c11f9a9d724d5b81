"""Producer compression, batching limits, key-based batches, delayed and null messages, and
async sends (queue limit, send timeout, callback order) against the engine on in-memory adapters."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

import magnetar as pulsar
from magnetar_wire import Codec

CT = pulsar.CompressionType


def collect(n: int):
    """A callback that records (result, id) and an event set after ``n`` calls."""
    got, done = [], threading.Event()

    def cb(res, msg_id):
        got.append((res, msg_id))
        if len(got) == n:
            done.set()

    return cb, got, done


@pytest.mark.parametrize("ctype", list(CT), ids=lambda c: c.name)
def test_each_compression_type_is_recorded_in_the_entry_and_read_back(svc, client, ctype):
    consumer = client.subscribe("t", "s")
    producer = client.create_producer("t", compression_type=ctype)
    producer.send(b"payload " * 200)
    assert svc.recorded_entries()[0].body.header.codec is Codec(int(ctype))
    assert consumer.receive(5000).data() == b"payload " * 200


def test_a_consumer_reads_entries_of_every_codec_mixed_on_one_topic(svc, client):
    consumer = client.subscribe("t", "s")
    for ctype in CT:
        producer = client.create_producer("t", compression_type=ctype, batching_enabled=True)
        for i in range(3):
            producer.send_async(f"{ctype.name}-{i}".encode() * 50, lambda r, m: None)
        producer.flush()
    codecs = [p.body.header.codec for p in svc.recorded_entries()]
    assert codecs == [Codec(int(c)) for c in CT]
    got = [consumer.receive(5000).data() for _ in range(3 * len(CT))]
    assert got == [f"{c.name}-{i}".encode() * 50 for c in CT for i in range(3)]


def test_a_message_that_would_pass_the_byte_limit_starts_the_next_batch(svc, client):
    producer = client.create_producer("t", batching_enabled=True, batching_max_messages=100,
                                      batching_max_allowed_size_in_bytes=100,
                                      batching_max_publish_delay_ms=60000)  # fmt: skip
    for _ in range(5):
        producer.send_async(b"x" * 40, lambda r, m: None)  # 40, 80 | 40, 80 | 40
    producer.flush()
    assert [len(p.body.messages) for p in svc.recorded_entries()] == [2, 2, 1]


def test_a_batch_reaching_the_byte_limit_goes_at_once_and_a_bigger_message_goes_alone(svc, client):
    producer = client.create_producer("t", batching_enabled=True,
                                      batching_max_allowed_size_in_bytes=100,
                                      batching_max_publish_delay_ms=60000)  # fmt: skip
    producer.send_async(b"a" * 50, lambda r, m: None)
    producer.send_async(b"b" * 50, lambda r, m: None)  # 100 >= 100: full
    assert svc.wait_for(lambda s: len(s.recorded_entries()) == 1)
    producer.send_async(b"c" * 10, lambda r, m: None)
    producer.send_async(b"d" * 500, lambda r, m: None)  # no room: c goes, then d alone (full)
    assert svc.wait_for(lambda s: len(s.recorded_entries()) == 3)
    sizes = [[len(m.payload) for m in p.body.messages] for p in svc.recorded_entries()]
    assert sizes == [[50, 50], [10], [500]]


def test_without_a_byte_limit_batches_stop_at_the_max_message_size(svc, client):
    svc.configure(max_message_size_bytes=10_000)
    producer = client.create_producer("t", batching_enabled=True,
                                      batching_max_allowed_size_in_bytes=0,
                                      batching_max_publish_delay_ms=60000)  # fmt: skip
    for _ in range(5):
        producer.send_async(b"x" * 3000, lambda r, m: None)  # 3000, 6000, 9000 | 3000, 6000
    producer.flush()
    assert [len(p.body.messages) for p in svc.recorded_entries()] == [3, 2]


def test_a_batch_whose_metadata_pushes_it_over_the_max_message_size_goes_as_two(svc, client):
    svc.configure(max_message_size_bytes=1000)
    producer = client.create_producer("t", batching_enabled=True,
                                      batching_max_allowed_size_in_bytes=0,
                                      batching_max_publish_delay_ms=60000)  # fmt: skip
    cb, got, done = collect(5)
    for _ in range(5):
        producer.send_async(b"x" * 300, cb)  # payloads 900 | 600, but 900 + metadata > 1000
    producer.flush()
    assert done.wait(5) and all(r is pulsar.Result.Ok for r, _ in got)
    assert [len(p.body.messages) for p in svc.recorded_entries()] == [1, 2, 2]


def test_a_batched_message_above_the_max_message_size_is_refused_before_sending(svc, client):
    svc.configure(max_message_size_bytes=1000)
    producer = client.create_producer("t", batching_enabled=True)
    with pytest.raises(pulsar.MessageTooBig):
        producer.send(b"x" * 1001)
    cb, got, done = collect(1)
    producer.send_async(b"x" * 1001, cb)
    assert got == [(pulsar.Result.MessageTooBig, None)]
    assert svc.recorded_entries() == []


def test_key_based_batches_hold_one_key_and_keyless_messages_their_own(svc, client):
    producer = client.create_producer("t", batching_enabled=True,
                                      batching_type=pulsar.BatchingType.KeyBased,
                                      batching_max_publish_delay_ms=60000)  # fmt: skip
    keys = ["k1", "k2", None, "k1", None, "k2", "k1"]
    cb, got, done = collect(len(keys))
    for i, k in enumerate(keys):
        producer.send_async(b"m%d" % i, cb, partition_key=k)
    producer.flush()
    posts = svc.recorded_entries()
    assert [[m.key for m in p.body.messages] for p in posts] == [
        ["k1", "k1", "k1"], ["k2", "k2"], [None, None]]  # fmt: skip
    assert all(p.body.header.batched for p in posts)
    ids = {m: str(i) for m, (_, i) in zip(range(len(keys)), got, strict=True)}
    assert len({ids[0], ids[3], ids[6]} & {ids[1], ids[5]}) == 0


def test_key_based_limits_count_every_key_and_send_all_keys_together(svc, client):
    producer = client.create_producer("t", batching_enabled=True, batching_max_messages=4,
                                      batching_type=pulsar.BatchingType.KeyBased,
                                      batching_max_publish_delay_ms=60000)  # fmt: skip
    for k in ["a", "b", "a", "b"]:
        producer.send_async(b"x", lambda r, m: None, partition_key=k)
    assert svc.wait_for(lambda s: len(s.recorded_entries()) == 2)
    assert [[m.key for m in p.body.messages] for p in svc.recorded_entries()] == [
        ["a", "a"], ["b", "b"]]  # fmt: skip


def test_delayed_messages_are_never_batched_and_keep_their_place(svc, client):
    producer = client.create_producer("t", batching_enabled=True,
                                      batching_max_publish_delay_ms=60000)  # fmt: skip
    cb, got, done = collect(4)
    producer.send_async(b"a", cb)
    producer.send_async(b"b", cb)
    producer.send_async(b"delayed", cb, deliver_after=timedelta(seconds=30))
    producer.send_async(b"c", cb, deliver_at=0)
    producer.flush()
    assert done.wait(5)
    posts = svc.recorded_entries()
    assert [[m.payload for m in p.body.messages] for p in posts] == [
        [b"a", b"b"], [b"delayed"], [b"c"]]  # fmt: skip
    assert not posts[1].body.header.batched and posts[1].body.messages[0].deliver_at_ms > 0
    assert [str(m) for _, m in got] == ["1:0:-1:0", "1:0:-1:1", "1:1:-1:-1", "1:2:-1:0"]


def test_a_null_value_is_a_tombstone_distinct_from_an_empty_payload(svc, client):
    consumer = client.subscribe("t", "s")
    producer = client.create_producer("t")
    producer.send(None, properties={"a": "b"}, partition_key="k")
    producer.send(b"", partition_key="k")
    tomb, empty = consumer.receive(5000), consumer.receive(5000)
    assert (tomb.has_null_value(), tomb.data(), tomb.properties(), tomb.partition_key()) == (
        True, b"", {"a": "b"}, "k")  # fmt: skip
    assert (empty.has_null_value(), empty.data(), empty.partition_key()) == (False, b"", "k")


def test_a_full_queue_fails_the_send_or_blocks_until_there_is_room(svc, client):
    svc.delay["produce"] = 0.3
    producer = client.create_producer("t", max_pending_messages=1)
    cb, got, done = collect(2)
    producer.send_async(b"1", cb)
    producer.send_async(b"2", cb)
    assert got == [(pulsar.Result.ProducerQueueIsFull, None)]
    assert done.wait(5) and got[1][0] is pulsar.Result.Ok
    blocking = client.create_producer("t", max_pending_messages=1, block_if_queue_full=True)
    cb, got, done = collect(2)
    blocking.send_async(b"1", cb)
    blocking.send_async(b"2", cb)  # waits for the first to complete
    assert len(got) == 1 and got[0][0] is pulsar.Result.Ok
    assert done.wait(5) and [r for r, _ in got] == [pulsar.Result.Ok] * 2


def test_sends_not_stored_within_the_send_timeout_complete_with_timeout_in_order(svc, client):
    svc.delay["produce"] = 1.0
    producer = client.create_producer("t", send_timeout_millis=200)
    order, done = [], threading.Event()
    for i in range(3):
        producer.send_async(b"x", lambda r, m, i=i: (order.append((i, r)), len(order) == 3
                                                     and done.set()))  # fmt: skip
    assert done.wait(5)
    assert order == [(0, pulsar.Result.Timeout), (1, pulsar.Result.Timeout),
                     (2, pulsar.Result.Timeout)]  # fmt: skip
    with pytest.raises(pulsar.Timeout):
        producer.send(b"y")


def test_callbacks_run_in_send_order_across_batches_and_single_messages(svc, client):
    producer = client.create_producer("t", batching_enabled=True, batching_max_messages=3)
    order, done = [], threading.Event()
    for i in range(20):
        after = timedelta(seconds=10) if i % 7 == 3 else None
        producer.send_async(b"m", lambda r, m, i=i: (order.append(i), len(order) == 20
                                                     and done.set()), deliver_after=after)  # fmt: skip
    producer.flush()
    assert done.wait(5) and order == list(range(20))
