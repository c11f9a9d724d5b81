"""SDK -> HTTP -> handlers -> emulator: readers, seek, last message id, Failover."""

from __future__ import annotations

import uuid

import pytest
import requests

import magnetar as pulsar

pytestmark = pytest.mark.emulator


def _topic() -> str:
    return f"persistent://public/default/pos-{uuid.uuid4().hex[:8]}"


def _fill(client, topic: str, n: int) -> list[pulsar.MessageId]:
    producer = client.create_producer(topic)
    ids = [producer.send(f"m{i}".encode()) for i in range(n)]
    producer.close()
    return ids


def test_a_reader_reads_from_a_position_and_knows_when_it_has_read_everything(client):
    topic = _topic()
    ids = _fill(client, topic, 5)

    from_start = client.create_reader(topic, pulsar.MessageId.earliest)
    after_second = client.create_reader(topic, ids[1])
    at_second = client.create_reader(topic, ids[1], start_message_id_inclusive=True)
    read = [from_start.read_next(5000).data() for _ in range(5)]

    assert read == [b"m0", b"m1", b"m2", b"m3", b"m4"]
    assert from_start.has_message_available() is False
    assert after_second.read_next(10_000).data() == b"m2"
    assert at_second.read_next(10_000).data() == b"m1"
    assert after_second.has_message_available() is True
    with pytest.raises(pulsar.Timeout):
        from_start.read_next(300)
    for reader in (from_start, after_second, at_second):
        reader.close()


def test_a_reader_at_latest_sees_only_new_messages_and_holds_nothing_back(client, local_stack):
    topic = _topic()
    _fill(client, topic, 2)
    reader = client.create_reader(topic, pulsar.MessageId.latest)
    assert reader.has_message_available() is False
    _fill(client, topic, 1)

    assert reader.has_message_available() is True
    assert reader.read_next(5000).data() == b"m0"
    stats = requests.get(f"{local_stack.url}/admin/v2/{topic.replace('://', '/')}/stats").json()
    assert [s["msgBacklog"] for s in stats["subscriptions"].values()] == [0]
    reader.close()
    after = requests.get(f"{local_stack.url}/admin/v2/{topic.replace('://', '/')}/stats").json()
    assert after["subscriptions"] == {}


def test_a_reader_at_latest_inclusive_reads_the_last_message_first(client):
    topic = _topic()
    _fill(client, topic, 3)

    reader = client.create_reader(topic, pulsar.MessageId.latest, start_message_id_inclusive=True)

    assert reader.has_message_available() is True
    assert reader.read_next(10_000).data() == b"m2"
    assert reader.has_message_available() is False
    reader.close()


def test_a_consumer_seeks_back_by_id_and_by_publish_time(client):
    topic = _topic()
    ids = _fill(client, topic, 4)
    consumer = client.subscribe(topic, "s", initial_position=pulsar.InitialPosition.Earliest)
    first = [consumer.receive(5000) for _ in range(4)]
    for msg in first:
        consumer.acknowledge(msg)

    consumer.seek(ids[1])
    after_id = [consumer.receive(5000).data() for _ in range(2)]
    consumer.seek(first[3].publish_timestamp())
    by_time = consumer.receive(5000).data()

    assert after_id == [b"m2", b"m3"]
    assert by_time == b"m3"
    assert consumer.get_last_message_id() == ids[3]
    consumer.close()


def test_failover_sends_everything_to_the_active_consumer_and_switches_when_it_leaves(client):
    topic = _topic()
    active = client.subscribe(
        topic,
        "fo",
        consumer_type=pulsar.ConsumerType.Failover,
        consumer_name="a",
        initial_position=pulsar.InitialPosition.Earliest,
    )
    standby = client.subscribe(
        topic,
        "fo",
        consumer_type=pulsar.ConsumerType.Failover,
        consumer_name="b",
        initial_position=pulsar.InitialPosition.Earliest,
    )
    _fill(client, topic, 3)
    got = [active.receive(5000) for _ in range(3)]
    with pytest.raises(pulsar.Timeout):
        standby.receive(500)
    active.acknowledge(got[0])
    active.acknowledge_cumulative(got[0])

    active.close()
    taken = [standby.receive(10000) for _ in range(2)]

    assert [m.data() for m in got] == [b"m0", b"m1", b"m2"]
    assert [(m.data(), m.redelivery_count()) for m in taken] == [(b"m1", 1), (b"m2", 1)]
    standby.close()
