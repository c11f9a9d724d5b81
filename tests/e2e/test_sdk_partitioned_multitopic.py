"""SDK -> HTTP -> handlers -> emulator: partitioned topics (key routing, round robin) and
multi-topic consumers (a list, a regex with discovery)."""

from __future__ import annotations

import re
import uuid

import pytest
import requests

import magnetar as pulsar

pytestmark = pytest.mark.emulator

NS = "persistent://public/default"
EARLIEST = pulsar.InitialPosition.Earliest


def name(prefix: str = "pmt") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def create_partitioned(url: str, topic: str, partitions: int) -> None:
    r = requests.put(f"{url}/admin/v2/persistent/public/default/{topic}/partitions",
                     json=partitions, timeout=30)  # fmt: skip
    assert r.status_code == 204, r.text


def test_keyed_messages_keep_per_key_order_each_key_in_one_partition(client, local_stack):
    t = name()
    create_partitioned(local_stack.url, t, 4)
    assert client.get_topic_partitions(t) == [f"{NS}/{t}-partition-{i}" for i in range(4)]
    consumer = client.subscribe(t, "s", initial_position=EARLIEST)
    producer = client.create_producer(t, batching_enabled=True, batching_max_messages=10)
    keys = [f"key-{k}" for k in range(6)]
    for i in range(60):
        producer.send_async(b"%d" % i, lambda r, m: None, partition_key=keys[i % 6])
    producer.flush()
    seen: dict[str, list[tuple[str, int]]] = {}
    for _ in range(60):
        msg = consumer.receive(20000)
        seen.setdefault(msg.partition_key(), []).append((msg.topic_name(), int(msg.data())))
        consumer.acknowledge(msg)
    assert set(seen) == set(keys)
    for key, got in seen.items():
        assert len({topic for topic, _ in got}) == 1, key  # each key in one partition
        assert [v for _, v in got] == sorted(v for _, v in got), key  # per-key order
        assert got[0][0].startswith(f"{NS}/{t}-partition-")
    consumer.close()


def test_round_robin_spreads_messages_over_every_partition(client, local_stack):
    t = name()
    create_partitioned(local_stack.url, t, 3)
    producer = client.create_producer(t)
    parts = [producer.send(b"x").partition() for _ in range(6)]
    assert sorted(parts) == [0, 0, 1, 1, 2, 2]
    single = client.create_producer(
        t, message_routing_mode=pulsar.PartitionsRoutingMode.UseSinglePartition
    )
    assert len({single.send(b"y").partition() for _ in range(4)}) == 1
    consumer = client.subscribe(t, "s", initial_position=EARLIEST)
    got = [consumer.receive(20000) for _ in range(10)]
    assert {m.topic_name() for m in got} == {f"{NS}/{t}-partition-{i}" for i in range(3)}
    singles = [m for m in got if m.data() == b"y"]
    assert len({m.topic_name() for m in singles}) == 1  # per-producer order: one partition
    consumer.close()


def test_a_list_consumer_receives_from_every_topic_and_acks_each(client, local_stack):
    a, b = name(), name()
    create_partitioned(local_stack.url, b, 2)
    consumer = client.subscribe([a, b], "s", initial_position=EARLIEST)
    pa, pb = client.create_producer(a), client.create_producer(b)
    for i in range(3):
        pa.send(b"a%d" % i)
        pb.send(b"b%d" % i)
    got = [consumer.receive(20000) for _ in range(6)]
    assert sorted(m.data() for m in got) == [b"a0", b"a1", b"a2", b"b0", b"b1", b"b2"]
    assert [m.data() for m in got if m.topic_name() == f"{NS}/{a}"] == [b"a0", b"a1", b"a2"]
    for m in got:
        consumer.acknowledge(m)
    with pytest.raises(pulsar.OperationNotSupported):
        consumer.acknowledge(pulsar.MessageId.deserialize(got[0].message_id().serialize()))
    consumer.close()
    again = client.subscribe([a, b], "s")  # everything was acknowledged on both topics
    with pytest.raises(pulsar.Timeout):
        again.receive(1500)
    again.close()


def test_a_regex_consumer_discovers_a_topic_created_later(client, local_stack):
    prefix = name("fin")
    client.create_producer(f"{prefix}-eu").send(b"eu")
    client.create_producer(name("other")).send(b"not matched")
    consumer = client.subscribe(re.compile(f"{NS}/{prefix}-.*"), "s", initial_position=EARLIEST,
                                pattern_auto_discovery_period=1)  # fmt: skip
    assert consumer.topic() == f"{NS}/{prefix}-.*"
    msg = consumer.receive(20000)
    assert (msg.data(), msg.topic_name()) == (b"eu", f"{NS}/{prefix}-eu")
    consumer.acknowledge(msg)
    create_partitioned(local_stack.url, f"{prefix}-us", 2)
    producer = client.create_producer(f"{prefix}-us")
    # produce until discovery (every second) has subscribed (Earliest) and one arrives
    received = None
    for i in range(30):
        producer.send(b"us%d" % i)
        try:
            received = consumer.receive(1000)
            break
        except pulsar.Timeout:
            continue
    assert received is not None and received.topic_name().startswith(f"{NS}/{prefix}-us-partition-")
    consumer.acknowledge(received)
    consumer.close()
