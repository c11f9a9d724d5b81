"""SDK -> HTTP -> handlers -> emulator: under load with nacks and a consumer swap, no
acknowledged message is delivered again (issue 11, defect 3), in bounded time."""

from __future__ import annotations

import collections
import random
import threading
import time
import uuid

import pytest

import magnetar as pulsar

pytestmark = pytest.mark.emulator

MESSAGES = 2000
PARTITIONS = 4
WORK_SECONDS = 0.005


def test_batched_messages_under_nacks_and_a_consumer_swap_are_never_delivered_again_once_acked(
    local_stack, client
):
    topic = f"persistent://public/default/acked-{uuid.uuid4().hex[:8]}"
    client._t.call("PUT", f"/admin/v2/{topic.replace('://', '/')}/partitions", json_body=PARTITIONS)
    rng = random.Random(3)
    lock = threading.Lock()
    acked: set[bytes] = set()
    again: collections.Counter[bytes] = collections.Counter()
    stop = threading.Event()

    def consume(consumer) -> None:
        while not stop.is_set():
            try:
                msg = consumer.receive(200)
            except pulsar.Timeout:
                continue
            except pulsar.AlreadyClosed:
                return
            with lock:
                if msg.data() in acked:
                    again[msg.data()] += 1
                    continue
                nack = rng.random() < 0.05
            time.sleep(WORK_SECONDS)  # the application's work: the receiver queue fills
            try:
                if nack:
                    consumer.negative_acknowledge(msg)
                else:
                    consumer.acknowledge(msg)
            except pulsar.AlreadyClosed:
                return
            if not nack:
                with lock:
                    acked.add(msg.data())

    def subscribe():
        consumer = client.subscribe(topic, "s", consumer_type=pulsar.ConsumerType.Shared,
                                    negative_ack_redelivery_delay_ms=0,
                                    initial_position=pulsar.InitialPosition.Earliest)  # fmt: skip
        thread = threading.Thread(target=consume, args=(consumer,), daemon=True)
        thread.start()
        return consumer, thread

    def send(p: int) -> None:
        producer = client.create_producer(topic, batching_enabled=True, batching_max_messages=100,
                                          block_if_queue_full=True)  # fmt: skip
        for i in range(MESSAGES // 4):
            producer.send_async(b"%d-%d" % (p, i), lambda r, m: None)
        producer.flush()
        producer.close()

    running = [subscribe() for _ in range(4)]
    producers = [threading.Thread(target=send, args=(p,), daemon=True) for p in range(4)]
    for t in producers:
        t.start()
    deadline = time.monotonic() + 240
    while len(acked) < MESSAGES // 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    running[0][0].close()  # swap a consumer mid-run
    running.append(subscribe())
    for t in producers:
        t.join(max(deadline - time.monotonic(), 1))
    while len(acked) < MESSAGES and time.monotonic() < deadline:
        time.sleep(0.1)
    stop.set()
    for consumer, thread in running:
        thread.join(10)
        consumer.close()
    assert (len(acked), sum(again.values())) == (MESSAGES, 0)
