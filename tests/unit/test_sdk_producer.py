"""Producer behaviour against the engine on in-memory adapters."""

from __future__ import annotations

import gc
import threading
import time

import pytest

import magnetar as pulsar
from magnetar_local.memory_service import sdk_threads
from magnetar_wire import Codec


def test_non_batched_sends_make_one_single_message_entry_per_request(svc):
    client = pulsar.Client(svc.url)
    producer = client.create_producer("t")
    ids = [producer.send(f"m{i}".encode()) for i in range(3)]
    posts = svc.recorded("produce")
    assert len(posts) == 3
    assert all(not p.body.header.batched and len(p.body.messages) == 1 for p in posts)
    assert [str(i) for i in ids] == ["1:0:-1:-1", "1:1:-1:-1", "1:2:-1:-1"]
    assert [p.body.messages[0].payload for p in posts] == [b"m0", b"m1", b"m2"]
    assert posts[0].path == "/v1/persistent/public/default/t/messages"
    assert posts[0].headers["Content-Type"] == "application/vnd.magnetar.entry"
    client.close()


def test_batching_makes_one_entry_per_batch_of_batching_max_messages(svc):
    client = pulsar.Client(svc.url)
    producer = client.create_producer("t", batching_enabled=True, batching_max_messages=10,
                                      batching_max_publish_delay_ms=60000)  # fmt: skip
    results = []
    done = threading.Event()

    def cb(res, msg_id):
        results.append((res, msg_id))
        if len(results) == 25:
            done.set()

    for i in range(25):
        producer.send_async(f"m{i}".encode(), cb)
    assert svc.wait_for(lambda s: len(s.recorded_entries()) == 2)  # two full batches
    producer.flush()  # the last 5
    assert done.wait(5)
    posts = svc.recorded_entries()
    assert [len(p.body.messages) for p in posts] == [10, 10, 5]
    assert all(p.body.header.batched for p in posts)
    assert all(res is pulsar.Result.Ok for res, _ in results)
    assert [str(m) for _, m in results[10:12]] == ["1:1:-1:0", "1:1:-1:1"]
    client.close()


def test_a_batch_is_sent_after_the_publish_delay_without_flush(svc):
    client = pulsar.Client(svc.url)
    producer = client.create_producer("t", batching_enabled=True, batching_max_publish_delay_ms=50)
    sent = time.monotonic()
    for i in range(3):
        producer.send_async(b"x%d" % i, lambda r, m: None)
    assert svc.wait_for(lambda s: len(s.recorded_entries()) == 1, timeout=5)
    post = svc.recorded_entries()[0]
    assert post.at - sent >= 0.045 and len(post.body.messages) == 3
    client.close()


def test_batches_are_capped_by_batching_max_allowed_size_in_bytes(svc):
    client = pulsar.Client(svc.url)
    producer = client.create_producer("t", batching_enabled=True,
                                      batching_max_allowed_size_in_bytes=250,
                                      batching_max_publish_delay_ms=60000)  # fmt: skip
    for _ in range(5):
        producer.send_async(b"x" * 100, lambda r, m: None)
    producer.flush()
    assert [len(p.body.messages) for p in svc.recorded_entries()] == [2, 2, 1]
    client.close()


def test_sync_send_sends_the_open_batch_at_once(svc):
    client = pulsar.Client(svc.url)
    producer = client.create_producer("t", batching_enabled=True,
                                      batching_max_publish_delay_ms=60000)  # fmt: skip
    producer.send_async(b"a", lambda r, m: None)
    msg_id = producer.send(b"b")
    assert str(msg_id) == "1:0:-1:1"
    assert [m.payload for m in svc.recorded_entries()[0].body.messages] == [b"a", b"b"]
    client.close()


def test_sequence_ids_and_last_sequence_id(svc):
    client = pulsar.Client(svc.url)
    producer = client.create_producer("t")
    assert producer.last_sequence_id() == -1
    producer.send(b"a")
    producer.send(b"b", sequence_id=0)  # falsy: automatic
    assert producer.last_sequence_id() == 1
    other = client.create_producer("t", initial_sequence_id=41)
    assert other.last_sequence_id() == 41
    other.send(b"c")
    assert other.last_sequence_id() == 42
    seqs = [p.body.messages[0].sequence_id for p in svc.recorded_entries()]
    assert seqs == [0, 1, 42]
    client.close()


def test_producer_names_are_unique_and_put_in_the_entry(svc):
    client = pulsar.Client(svc.url)
    a, b = client.create_producer("t"), client.create_producer("t")
    named = client.create_producer("t", producer_name="mine")
    assert a.producer_name() != b.producer_name() and named.producer_name() == "mine"
    named.send(b"x")
    assert svc.recorded_entries()[0].body.producer_name == "mine"
    assert a.topic() == "persistent://public/default/t"
    client.close()


def test_message_fields_reach_the_entry_and_falsy_values_count_as_unset(svc):
    client = pulsar.Client(svc.url)
    producer = client.create_producer("t")
    producer.send(b"p", properties={"a": "b"}, partition_key="k", ordering_key="ok",
                  event_timestamp=1234, deliver_at=99999)  # fmt: skip
    producer.send(None, partition_key="", event_timestamp=0)
    first, tomb = (p.body.messages[0] for p in svc.recorded_entries())
    assert (first.key, first.ordering_key, dict(first.properties)) == ("k", b"ok", {"a": "b"})
    assert (first.event_time_ms, first.deliver_at_ms) == (1234, 99999)
    assert tomb.null_value and tomb.payload == b"" and tomb.key is None and tomb.event_time_ms == 0
    client.close()


def test_payload_that_is_not_bytes_raises_type_error(svc):
    client = pulsar.Client(svc.url)
    producer = client.create_producer("t")
    with pytest.raises(TypeError):
        producer.send("text")
    with pytest.raises(ValueError, match="Argument partition_key is expected to be of type 'str'"):
        producer.send(b"x", partition_key=5)
    assert svc.recorded_entries() == []
    client.close()


def test_lz4_compression_is_used_for_the_payload_section(svc):
    client = pulsar.Client(svc.url)
    producer = client.create_producer("t", compression_type=pulsar.CompressionType.LZ4)
    producer.send(b"z" * 1000)
    post = svc.recorded_entries()[0].body
    assert post.header.codec == Codec.LZ4 and post.header.payload_len < 1000
    assert post.messages[0].payload == b"z" * 1000
    client.close()


def test_server_errors_fail_the_send_with_the_named_exception(svc):
    client = pulsar.Client(svc.url)
    producer = client.create_producer("t")
    svc.fail_next("produce", 413, "MessageTooBig", "entry above 5 MB")
    with pytest.raises(pulsar.MessageTooBig, match="5 MB"):
        producer.send(b"x")
    svc.fail_next("produce", 409, "TopicTerminated", "terminated")  # not resent (see retries)
    got = []
    done = threading.Event()
    producer.send_async(b"y", lambda r, m: (got.append((r, m)), done.set()))
    assert done.wait(5) and got == [(pulsar.Result.TopicTerminated, None)]
    assert str(producer.send(b"z")) == "1:0:-1:-1"  # the injected errors stored nothing
    client.close()


def test_full_queue_raises_producer_queue_is_full_or_blocks(svc):
    svc.delay["produce"] = 0.3
    client = pulsar.Client(svc.url)
    producer = client.create_producer("t", max_pending_messages=2)
    results = []
    for _ in range(3):
        producer.send_async(b"x", lambda r, m: results.append(r))
    assert results == [pulsar.Result.ProducerQueueIsFull]  # the third, at once
    with pytest.raises(pulsar.ProducerQueueIsFull):
        producer.send(b"y")
    blocking = client.create_producer("t", max_pending_messages=1, block_if_queue_full=True)
    blocking.send_async(b"a", lambda r, m: None)
    blocking.send_async(b"b", lambda r, m: None)  # waits for "a" instead of failing
    blocking.flush()
    producer.flush()
    assert len(svc.recorded_entries()) == 4
    client.close()


def test_partitioned_topics_get_round_robin_and_keys_hash_like_java(svc):
    svc.create_partitioned_topic("persistent/public/default/p", 3)
    client = pulsar.Client(svc.url)
    producer = client.create_producer("p")
    ids = [producer.send(b"x") for _ in range(6)]
    assert sorted(i.partition() for i in ids) == [0, 0, 1, 1, 2, 2]
    assert len({i.partition() for i in ids[:3]}) == 3
    keyed = {producer.send(b"k", partition_key="user-1").partition() for _ in range(3)}
    from magnetar.producer import java_string_hash

    # Java: "hello".hashCode() == 99162322, "Hello World".hashCode() == -862545276, and a
    # non-BMP character hashes as its two UTF-16 surrogates: 0xD83D * 31 + 0xDE00
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("Hello World") == -862545276
    assert java_string_hash("\U0001f600") == 0xD83D * 31 + 0xDE00
    assert keyed == {(java_string_hash("user-1") & 0x7FFFFFFF) % 3}
    assert svc.recorded_entries()[0].path.startswith("/v1/persistent/public/default/p-partition-")
    client.close()


def test_a_producer_keeps_working_after_its_client_is_dropped(svc):
    client = pulsar.Client(svc.url)
    producer = client.create_producer("t")
    del client
    gc.collect()
    assert str(producer.send(b"still here")) == "1:0:-1:-1"
    assert producer.is_connected()
    producer.close()
    assert not producer.is_connected()
    with pytest.raises(pulsar.AlreadyClosed):
        producer.send(b"x")


def test_closing_or_dropping_leaves_no_threads(svc):
    before = sdk_threads()
    client = pulsar.Client(svc.url)
    producer = client.create_producer("t", batching_enabled=True)
    producer.send(b"x")
    assert len(sdk_threads()) > len(before)
    client.close()
    assert sdk_threads() == before
    client = pulsar.Client(svc.url)
    producer = client.create_producer(
        "t", batching_enabled=True, batching_max_publish_delay_ms=60000
    )
    producer.send_async(b"queued", lambda r, m: None)
    del producer, client  # dropping sends what is queued and stops the thread
    gc.collect()
    assert sdk_threads() == before
    assert svc.recorded_entries()[-1].body.messages[0].payload == b"queued"


def test_shutdown_fails_queued_messages_and_stops_threads(svc):
    before = sdk_threads()
    client = pulsar.Client(svc.url)
    producer = client.create_producer(
        "t", batching_enabled=True, batching_max_publish_delay_ms=60000
    )
    results = []
    producer.send_async(b"never", lambda r, m: results.append(r))
    client.shutdown()
    assert results == [pulsar.Result.AlreadyClosed]
    assert sdk_threads() == before and svc.recorded_entries() == []
