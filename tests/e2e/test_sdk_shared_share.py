"""SDK -> HTTP -> handlers -> emulator: Shared is shared. Consumers subscribed before a
burst of batched messages is produced each get a share of it, as Pulsar's round-robin
Shared dispatcher deals them; the first long-poll to find the backlog does not take all.
"""

from __future__ import annotations

import threading
import uuid

import pytest

import magnetar as pulsar

pytestmark = pytest.mark.emulator

MESSAGES, BATCH = 1000, 100


def test_three_shared_consumers_subscribed_before_a_batched_burst_each_get_a_share(client):
    """1,000 messages in batches of 100 (closed when full): 10 entries, and an entry goes
    whole to one consumer (batch messages are not split on Shared), so a share is counted
    in entries. Each of the 3 consumers gets at least one entry (100 messages), the bound
    that a lease of the whole backlog by the first long-poll broke (0, 300, 700 and
    0, 400, 600 were measured before); it stays loose because entries come as commits land
    and a consumer busy fetching misses some: 6 runs here gave 2 to 4 entries each."""
    topic = f"persistent://public/default/shared-{uuid.uuid4().hex[:8]}"
    consumers = [client.subscribe(topic, "work", consumer_type=pulsar.ConsumerType.Shared,
                                  consumer_name=f"c{i}")
                 for i in range(3)]  # fmt: skip
    producer = client.create_producer(topic, batching_enabled=True, batching_max_messages=BATCH,
                                      batching_max_publish_delay_ms=1000)  # fmt: skip
    for n in range(MESSAGES):
        producer.send_async(b"%d" % n, lambda res, mid: None)
    producer.flush()

    got = [0, 0, 0]
    lock = threading.Lock()

    def drain(i: int) -> None:
        while True:
            with lock:
                if sum(got) >= MESSAGES:
                    return
            try:
                msg = consumers[i].receive(200)
            except pulsar.Timeout:
                continue
            consumers[i].acknowledge(msg)
            with lock:
                got[i] += 1

    threads = [threading.Thread(target=drain, args=(i,), daemon=True) for i in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)

    assert not any(th.is_alive() for th in threads)
    assert sum(got) == MESSAGES
    assert all(n >= BATCH for n in got), got
    for c in consumers:
        c.close()
