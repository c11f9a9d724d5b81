"""SDK -> HTTP -> handlers -> emulator: the spine of produce / consume / ack / nack."""

from __future__ import annotations

import threading
import uuid

import pytest

import magnetar as pulsar

pytestmark = pytest.mark.emulator


def topic() -> str:
    return f"persistent://public/default/spine-{uuid.uuid4().hex[:8]}"


def test_a_message_goes_through_the_stack_and_back(client):
    t = topic()
    consumer = client.subscribe(t, "s")
    producer = client.create_producer(t)
    msg_id = producer.send(b"hello", properties={"a": "b"}, partition_key="k")
    msg = consumer.receive(10000)
    assert (msg.data(), msg.properties(), msg.partition_key()) == (b"hello", {"a": "b"}, "k")
    assert msg.message_id() == msg_id and msg.redelivery_count() == 0
    consumer.acknowledge(msg)
    consumer.close()


def test_1000_batched_messages_reach_3_shared_consumers_exactly_once(client):
    t = topic()
    # small receiver queues and batches, so no single consumer prefetches everything
    consumers = [client.subscribe(t, "work", consumer_type=pulsar.ConsumerType.Shared,
                                  receiver_queue_size=50) for _ in range(3)]  # fmt: skip
    producer = client.create_producer(t, batching_enabled=True, batching_max_messages=50)
    sent = [b"m%04d" % i for i in range(1000)]
    for payload in sent:
        producer.send_async(payload, lambda res, mid: None)
    producer.flush()
    got: list[list[bytes]] = [[] for _ in consumers]
    lock = threading.Lock()
    total = [0]

    def drain(i: int) -> None:
        while True:
            with lock:
                if total[0] >= len(sent):
                    return
            try:
                msg = consumers[i].receive(2000)
            except pulsar.Timeout:
                continue
            consumers[i].acknowledge(msg)
            with lock:
                got[i].append(msg.data())
                total[0] += 1

    threads = [threading.Thread(target=drain, args=(i,), daemon=True) for i in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert not any(th.is_alive() for th in threads)
    everything = [p for g in got for p in g]
    assert sorted(everything) == sent  # each message exactly once
    assert all(got), [len(g) for g in got]  # each consumer got a share
    for c in consumers:
        with pytest.raises(pulsar.Timeout):
            c.receive(1000)  # nothing comes back: every message was acknowledged


def test_nacked_messages_come_back_with_redelivery_count_plus_one(client):
    t = topic()
    consumer = client.subscribe(t, "s", consumer_type=pulsar.ConsumerType.Shared,
                                negative_ack_redelivery_delay_ms=200)  # fmt: skip
    producer = client.create_producer(t)
    for p in (b"a", b"b"):
        producer.send(p)
    first = [consumer.receive(10000) for _ in range(2)]
    for m in first:
        consumer.negative_acknowledge(m)
    again = [consumer.receive(10000) for _ in range(2)]
    assert [(m.data(), m.redelivery_count()) for m in again] == [(b"a", 1), (b"b", 1)]
    for m in again:
        consumer.acknowledge(m)


def test_a_closed_consumers_unacked_messages_go_to_another_with_count_plus_one(client):
    t = topic()
    a = client.subscribe(t, "s", consumer_type=pulsar.ConsumerType.Shared)
    producer = client.create_producer(t)
    producer.send(b"x")
    assert a.receive(10000).data() == b"x"
    b = client.subscribe(t, "s", consumer_type=pulsar.ConsumerType.Shared)
    a.close()
    msg = b.receive(10000)
    assert (msg.data(), msg.redelivery_count()) == (b"x", 1)
    b.acknowledge(msg)


def test_a_second_exclusive_consumer_gets_consumer_busy(client):
    t = topic()
    first = client.subscribe(t, "s")
    with pytest.raises(pulsar.ConsumerBusy):
        client.subscribe(t, "s")
    first.close()
    client.subscribe(t, "s").close()  # free again once the first is closed


def test_cumulative_ack_on_exclusive_acknowledges_everything_up_to_the_id(client):
    t = topic()
    consumer = client.subscribe(t, "s")
    producer = client.create_producer(t)
    for i in range(5):
        producer.send(b"%d" % i)
    msgs = [consumer.receive(10000) for _ in range(5)]
    consumer.acknowledge_cumulative(msgs[2])
    consumer.close()  # flushes the cumulative ack; 3 and 4 go back
    again = client.subscribe(t, "s")
    rest = [again.receive(10000) for _ in range(2)]
    assert [(m.data(), m.redelivery_count()) for m in rest] == [(b"3", 1), (b"4", 1)]
    with pytest.raises(pulsar.Timeout):
        again.receive(1000)
