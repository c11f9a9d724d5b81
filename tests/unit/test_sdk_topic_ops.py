"""The SDK on topics the operator changed (issue 14's topic verbs), against the engine on
in-memory adapters: a terminated topic refuses sends with TopicTerminated, readers and
consumers see its end (``has_reached_end_of_topic``, ``has_message_available`` False), and
a partitioned producer picks up new partitions at its next partition refresh."""

from __future__ import annotations

import json

import pytest
from edge_http import call

import magnetar as pulsar
from magnetar._producer.growth import PartitionWatch

TOPIC = "persistent://public/default/ops"


def terminate(svc, path: str) -> dict:
    status, answer, _ = call(f"{svc.url}/admin/v2/{path}/terminate")
    assert status == 200, answer
    return answer


def test_a_send_to_a_terminated_topic_raises_topic_terminated(client, svc):
    producer = client.create_producer(TOPIC)
    last = producer.send(b"before")
    assert terminate(svc, "persistent/public/default/ops")["messageId"] == str(last)
    with pytest.raises(pulsar.TopicTerminated):
        producer.send(b"after")
    with pytest.raises(pulsar.TopicTerminated):
        client.create_producer(TOPIC)  # as Pulsar's: a terminated topic takes no producer


def test_a_reader_reaches_the_end_of_a_terminated_topic_after_its_last_message(client, svc):
    producer = client.create_producer(TOPIC)
    for i in range(2):
        producer.send(f"m{i}".encode())
    reader = client.create_reader(TOPIC, pulsar.MessageId.earliest)
    terminate(svc, "persistent/public/default/ops")
    assert not reader.has_reached_end_of_topic()
    assert [reader.read_next(5000).data() for _ in range(2)] == [b"m0", b"m1"]
    assert not reader.has_message_available()
    assert reader.has_reached_end_of_topic()


def test_a_consumer_reaches_the_end_only_once_the_topic_is_terminated_and_read(client, svc):
    consumer = client.subscribe(TOPIC, "s", initial_position=pulsar.InitialPosition.Earliest)
    client.create_producer(TOPIC).send(b"only")
    assert consumer.receive(5000).data() == b"only"
    assert not consumer.has_reached_end_of_topic()  # read, but the topic is still open
    terminate(svc, "persistent/public/default/ops")
    assert consumer.has_reached_end_of_topic()
    with pytest.raises(pulsar.Timeout):
        consumer.receive(50)


def test_a_partitioned_producer_sends_to_new_partitions_after_its_refresh(client, svc):
    svc.create_partitioned_topic("persistent/public/default/grow", 2)
    client._partitions_update_interval_s = 0.0  # refresh at every send
    producer = client.create_producer("persistent://public/default/grow")
    body = json.dumps(4).encode()
    status, answer, _ = call(f"{svc.url}/admin/v2/persistent/public/default/grow/partitions",
                             body=body)  # fmt: skip
    assert status == 204, answer
    partitions = {producer.send(b"x").partition() for _ in range(8)}  # round robin
    assert partitions == {0, 1, 2, 3}


def test_a_consumer_and_a_reader_of_a_partitioned_topic_read_its_new_partitions_too(client, svc):
    svc.create_partitioned_topic("persistent/public/default/grow-read", 2)
    client._partitions_update_interval_s = 0.1
    consumer = client.subscribe("persistent://public/default/grow-read", "s")  # at Latest
    reader = client.create_reader(
        "persistent://public/default/grow-read", pulsar.MessageId.earliest
    )
    status, answer, _ = call(f"{svc.url}/admin/v2/persistent/public/default/grow-read/partitions",
                             body=json.dumps(3).encode())  # fmt: skip
    assert status == 204, answer
    added = client.create_producer("persistent://public/default/grow-read-partition-2")
    added.send(b"new")  # maybe before they noticed the partition: they read it from its start
    assert consumer.receive(5000).data() == b"new"
    assert reader.read_next(5000).data() == b"new"
    assert svc.wait_for(lambda s: len(s.recorded("subscribe")) == 6)  # 2 + 1 each


def test_the_partition_watch_asks_at_most_once_per_interval_and_never_shrinks():
    now, asked, grown = [0.0], [], []
    counts = iter([2, 3, 1])

    def count() -> int:
        asked.append(now[0])
        return next(counts)

    def grow(old: int, new: int) -> list:
        grown.append((old, new))
        return [object()] * (new - old)

    watch = PartitionWatch(2, count, grow, 60.0, clock=lambda: now[0])
    assert watch.refresh() == [] and asked == []  # not due yet
    now[0] = 60.0
    assert watch.refresh() == [] and watch.partitions == 2  # asked: still 2
    now[0] = 90.0
    assert watch.refresh() == []  # not due again before 120
    now[0] = 120.0
    assert len(watch.refresh()) == 1 and (watch.partitions, grown) == (3, [(2, 3)])
    now[0] = 180.0
    assert watch.refresh() == [] and watch.partitions == 3  # a smaller count is ignored
    assert asked == [60.0, 120.0, 180.0]
