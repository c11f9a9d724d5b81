"""SDK -> HTTP -> handlers -> emulator: Key_Shared with batched keyed messages."""

from __future__ import annotations

import threading
import uuid

import pytest

import magnetar as pulsar

pytestmark = pytest.mark.emulator


def test_four_key_shared_consumers_each_get_whole_keys_in_order(client):
    topic = f"persistent://public/default/ks-{uuid.uuid4().hex[:8]}"
    consumers = [client.subscribe(topic, "ks", consumer_type=pulsar.ConsumerType.KeyShared,
                                  consumer_name=f"c{i}", receiver_queue_size=100)
                 for i in range(4)]  # fmt: skip
    producer = client.create_producer(topic, batching_enabled=True, batching_max_messages=40)
    keys = [f"key-{k}" for k in range(12)]
    expected = {k: [f"{k}:{n}".encode() for n in range(10)] for k in keys}
    for n in range(10):
        for k in keys:
            producer.send_async(f"{k}:{n}".encode(), lambda res, mid: None, partition_key=k)
    producer.flush()

    got: dict[str, dict[str, list[bytes]]] = {f"c{i}": {} for i in range(4)}
    lock = threading.Lock()
    total = [0]

    def drain(i: int) -> None:
        while True:
            with lock:
                if total[0] >= 120:
                    return
            try:
                msg = consumers[i].receive(1000)
            except pulsar.Timeout:
                continue
            consumers[i].acknowledge(msg)
            with lock:
                got[f"c{i}"].setdefault(msg.partition_key(), []).append(msg.data())
                total[0] += 1

    threads = [threading.Thread(target=drain, args=(i,), daemon=True) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)

    assert not any(th.is_alive() for th in threads)
    owners = {k: [c for c in got if k in got[c]] for k in keys}
    assert all(len(o) == 1 for o in owners.values())  # each key at exactly one consumer
    assert all(got[o[0]][k] == expected[k] for k, o in owners.items())  # whole, in order
    assert sum(1 for c in got.values() if c) >= 2  # and the keys were spread
    for c in consumers:
        c.close()


def test_overlapping_sticky_ranges_are_refused(client):
    topic = f"persistent://public/default/ks-{uuid.uuid4().hex[:8]}"
    sticky = pulsar.KeySharedMode.Sticky
    first = client.subscribe(topic, "st", consumer_type=pulsar.ConsumerType.KeyShared,
                             key_shared_policy=pulsar.ConsumerKeySharedPolicy(sticky, sticky_ranges=[(0, 1000)]))  # fmt: skip
    with pytest.raises(pulsar.ConsumerAssignError) as caught:
        client.subscribe(topic, "st", consumer_type=pulsar.ConsumerType.KeyShared,
                         key_shared_policy=pulsar.ConsumerKeySharedPolicy(sticky, sticky_ranges=[(500, 2000)]))  # fmt: skip
    assert "0" in str(caught.value) and "1000" in str(caught.value)  # names the clashing range
    first.close()
