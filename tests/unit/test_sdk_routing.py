"""Producer routing on partitioned topics (round robin, single partition, custom router, key
hashing), against the engine on in-memory adapters."""

from __future__ import annotations

import threading

import pytest

import magnetar as pulsar
from magnetar._producer.routing import Router, java_string_hash, murmur3_32, partition_of_key
from magnetar_local.memory_service import MemoryService

N = 4


@pytest.fixture
def svc():
    with MemoryService() as service:
        service.create_partitioned_topic("persistent/public/default/p", N)
        yield service


def partitions_of_entries(svc):
    """The partition index of each stored entry, in commit order, and its message count."""
    return [
        (int(r.path.split("-partition-")[1].split("/")[0]), len(r.body.messages))
        for r in svc.recorded_entries()
    ]


def test_round_robin_without_batching_switches_partition_per_message(client):
    producer = client.create_producer("p")
    parts = [producer.send(b"x").partition() for _ in range(2 * N)]
    first = parts[0]
    assert parts == [(first + i) % N for i in range(2 * N)]


def test_round_robin_switches_partition_at_batch_boundaries(client, svc):
    producer = client.create_producer(
        "p", batching_enabled=True, batching_max_messages=5, batching_max_publish_delay_ms=60000
    )
    for i in range(15):
        producer.send_async(b"m%d" % i, lambda r, m: None)
    producer.flush()
    entries = partitions_of_entries(svc)
    assert [count for _, count in entries] == [5, 5, 5]  # each batch whole on one partition
    first = entries[0][0]
    assert [p for p, _ in entries] == [first, (first + 1) % N, (first + 2) % N]


def test_round_robin_and_single_partition_start_at_a_random_partition():
    rr = pulsar.PartitionsRoutingMode.RoundRobinDistribution
    single = pulsar.PartitionsRoutingMode.UseSinglePartition
    scheme = pulsar.HashingScheme.JavaStringHash
    starts = {Router(N, rr, scheme, None, None).choose(None, lambda: None) for _ in range(64)}
    picks = {Router(N, single, scheme, None, None).choose(None, lambda: None) for _ in range(64)}
    assert len(starts) > 1 and len(picks) > 1


def test_use_single_partition_sticks_to_one_partition(client):
    producer = client.create_producer(
        "p", message_routing_mode=pulsar.PartitionsRoutingMode.UseSinglePartition
    )
    assert len({producer.send(b"x").partition() for _ in range(12)}) == 1


def test_use_single_partition_still_hashes_keyed_messages(client):
    producer = client.create_producer(
        "p", message_routing_mode=pulsar.PartitionsRoutingMode.UseSinglePartition
    )
    for key in ("a", "b", "c", "hello", "user-7"):
        expected = (java_string_hash(key) & 0x7FFFFFFF) % N
        assert producer.send(b"k", partition_key=key).partition() == expected


def test_custom_router_is_called_with_the_message_and_the_partition_count(client):
    calls = []

    def router(msg, num_partitions):
        calls.append((msg.data(), msg.partition_key(), msg.properties(), num_partitions))
        return int(msg.properties()["to"])

    producer = client.create_producer("p", message_router=router)
    msg_id = producer.send(b"hi", properties={"to": "3"}, partition_key="k")
    assert msg_id.partition() == 3
    assert calls == [(b"hi", "k", {"to": "3"}, N)]


@pytest.mark.parametrize("answer", [N, -1, "1", None, True])
def test_custom_router_out_of_range_result_raises_a_clear_error(client, svc, answer):
    producer = client.create_producer("p", message_router=lambda msg, n: answer)
    match = r"message_router returned .*expected an int in 0\.\.3"
    with pytest.raises(pulsar.UnknownError, match=match):
        producer.send(b"x")
    got, done = [], threading.Event()
    producer.send_async(b"x", lambda r, m: (got.append((r, m)), done.set()))
    assert done.wait(5) and got == [(pulsar.Result.UnknownError, None)]
    assert svc.recorded_entries() == []


def test_custom_partition_mode_without_a_router_is_an_invalid_configuration(client):
    with pytest.raises(pulsar.InvalidConfiguration):
        client.create_producer(
            "p", message_routing_mode=pulsar.PartitionsRoutingMode.CustomPartition
        )


def test_java_string_hash_matches_java_string_hash_code():
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("Hello World") == -862545276
    assert java_string_hash("") == 0
    assert java_string_hash("\u00e9") == 0xE9  # one UTF-16 unit, not two UTF-8 bytes


def test_murmur3_32_matches_the_reference_values():
    assert murmur3_32(b"") == 0
    assert murmur3_32(b"hello") == 613153351
    assert murmur3_32(b"foo") == 4138058784
    assert murmur3_32(b"user-1") == 4171401059
    assert murmur3_32("k\u00e9y".encode()) == 4079048388  # a 4-byte tail-free block + tail


def test_keyed_messages_go_to_the_partition_java_string_hash_says(client):
    producer = client.create_producer("p")
    assert partition_of_key("hello", N, pulsar.HashingScheme.JavaStringHash) == 99162322 % N
    for key in ("hello", "user-1", "Hello World", "k\u00e9y"):
        expected = (java_string_hash(key) & 0x7FFFFFFF) % N
        assert {producer.send(b"v", partition_key=key).partition() for _ in range(3)} == {expected}


def test_keyed_messages_go_to_the_partition_murmur3_says(client):
    producer = client.create_producer("p", hashing_scheme=pulsar.HashingScheme.Murmur3_32Hash)
    assert partition_of_key("foo", N, pulsar.HashingScheme.Murmur3_32Hash) == (
        (4138058784 & 0x7FFFFFFF) % N
    )
    for key in ("hello", "foo", "user-1"):
        expected = (murmur3_32(key.encode()) & 0x7FFFFFFF) % N
        assert producer.send(b"v", partition_key=key).partition() == expected


def test_ordering_key_alone_does_not_route(client):
    producer = client.create_producer(
        "p", message_routing_mode=pulsar.PartitionsRoutingMode.UseSinglePartition
    )
    parts = {producer.send(b"v", ordering_key=k).partition() for k in ("a", "b", "c", "d")}
    assert len(parts) == 1


def test_hashing_scheme_must_be_a_hashing_scheme(client):
    with pytest.raises(ValueError, match="hashing_scheme"):
        client.create_producer("p", hashing_scheme="murmur")


def test_keyed_batches_keep_per_key_order_within_one_partition(client, svc):
    producer = client.create_producer(
        "p", batching_enabled=True, batching_max_messages=3, batching_max_publish_delay_ms=60000
    )
    for i in range(12):
        producer.send_async(b"%d" % i, lambda r, m: None, partition_key=f"key-{i % 2}")
    producer.flush()
    by_key = {}
    for r in svc.recorded_entries():
        part = r.path.split("-partition-")[1].split("/")[0]
        for m in r.body.messages:
            by_key.setdefault(m.key, []).append((part, int(m.payload)))
    for key, seen in by_key.items():
        assert len({p for p, _ in seen}) == 1, key
        assert [v for _, v in seen] == sorted(v for _, v in seen)


def test_get_topic_partitions_lists_partition_names_or_the_topic(client):
    assert client.get_topic_partitions("p") == [
        f"persistent://public/default/p-partition-{i}" for i in range(N)
    ]
    assert client.get_topic_partitions("plain") == ["persistent://public/default/plain"]


def test_received_messages_name_their_partition(client):
    consumer = client.subscribe("p", "s", initial_position=pulsar.InitialPosition.Earliest)
    producer = client.create_producer("p")
    sent = {producer.send(b"%d" % i).partition() for i in range(N)}
    names = {consumer.receive(5000).topic_name() for _ in range(N)}
    assert names == {f"persistent://public/default/p-partition-{i}" for i in sent}
