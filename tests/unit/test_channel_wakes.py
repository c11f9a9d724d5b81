"""What gives entries back without a commit wakes the notification channel's sleepers, in
the services (issue 16): a nack, a redelivery of the unacknowledged, a closed consumer's
entries, a seek and an admin cursor reset post one notice per watch of the partition they
moved, through the ``ChannelWakes`` port the engine wires to ``Notify``; nothing moved, or
a trigger's own consumer, posts none. Memory engine, recording connections, a fake clock."""

from __future__ import annotations

import pytest
from fake_clock import Clock

from magnetar_core.adapters.memory import RecordingConnections, memory_stores
from magnetar_core.domain import notify
from magnetar_core.domain.runtime import Runtime
from magnetar_core.engine import Engine
from magnetar_local.memory_service import memory_settings
from magnetar_wire import EntryMessage, encode_entry, format_message_id
from magnetar_wire.names import TopicName

TOPIC = TopicName.parse("persistent://public/default/wakes")
START_MS = 1_000_000


@pytest.fixture
def connections() -> RecordingConnections:
    return RecordingConnections()


@pytest.fixture
def engine(connections: RecordingConnections) -> Engine:
    clock = Clock(START_MS)
    engine = Engine.assemble(memory_settings(), memory_stores(), runtime=Runtime(now_ms=clock),
                             connections=connections)  # fmt: skip
    engine.tenants.initialize_cluster()
    return engine


def subscribe(engine: Engine, topic: TopicName = TOPIC) -> str:
    handle = engine.subscriptions.subscribe(topic, "s", None, "Shared", earliest=True)
    return handle.consumer_id


def sleep_on_the_channel(engine: Engine, *watched: tuple[TopicName, str]) -> None:
    """A connection ``sleeper`` watching each ``(partition, consumer id)``."""
    engine.notify.connect("sleeper", None)
    watches = [{"topic": str(t), "subscription": "s", "consumerId": c} for t, c in watched]
    engine.notify.watch("sleeper", {"action": "watch", "watches": watches})


def produce(engine: Engine, topic: TopicName = TOPIC) -> None:
    message = EntryMessage(payload=b"m", sequence_id=0, publish_time_ms=START_MS)
    engine.producer.publish(topic, encode_entry([message], producer_name="p"))


def received_ids(engine: Engine, consumer: str) -> list[str]:
    got = engine.subscriptions.receive(TOPIC, "s", consumer, 10, 0)
    assert got, "the consumer received nothing to give back"
    return [format_message_id(d.ledger_id, d.entry_id, d.partition, -1) for d in got]


def notices(*topics: TopicName) -> list[tuple[str, bytes]]:
    return [("sleeper", notify.notice(str(t))) for t in topics]


@pytest.fixture
def worker(engine: Engine, connections: RecordingConnections) -> str:
    """A worker holding the one message of ``TOPIC`` and a sleeper watching it; the worker's
    id. The commit's own notice is the stream's, not a service's: nothing was posted."""
    worker, sleeper = subscribe(engine), subscribe(engine)
    produce(engine)
    sleep_on_the_channel(engine, (TOPIC, sleeper))
    assert connections.sent == []
    return worker


def test_a_nack_wakes_the_sleepers_of_its_partition(engine, connections, worker) -> None:
    ids = received_ids(engine, worker)
    assert engine.subscriptions.negative_acknowledge(TOPIC, "s", worker, ids) == 1
    assert connections.sent == notices(TOPIC)


def test_a_redelivery_of_the_unacknowledged_wakes_the_sleepers(engine, connections, worker) -> None:
    received_ids(engine, worker)
    assert engine.subscriptions.redeliver_unacknowledged(TOPIC, "s", worker) == 1
    assert connections.sent == notices(TOPIC)


def test_a_closed_consumers_entries_wake_the_sleepers(engine, connections, worker) -> None:
    received_ids(engine, worker)
    assert engine.subscriptions.close(TOPIC, "s", worker) == 1
    assert connections.sent == notices(TOPIC)


def test_a_seek_wakes_the_sleepers(engine, connections, worker) -> None:
    engine.subscriptions.seek(TOPIC, "s", worker, timestamp_ms=0)
    assert connections.sent == notices(TOPIC)


def test_a_nack_that_moves_nothing_wakes_no_one(engine, connections, worker) -> None:
    ids = received_ids(engine, worker)
    engine.subscriptions.acknowledge(TOPIC, "s", worker, ids, False)
    assert engine.subscriptions.negative_acknowledge(TOPIC, "s", worker, ids) == 0
    assert engine.subscriptions.close(TOPIC, "s", worker) == 0
    assert connections.sent == []


def test_a_triggers_own_nack_and_close_wake_no_one(engine, connections, worker) -> None:
    ids = received_ids(engine, worker)
    subs = engine.subscriptions
    assert subs.negative_acknowledge(TOPIC, "s", worker, ids, wake=False) == 1
    received_ids(engine, worker)
    assert subs.close(TOPIC, "s", worker, wake=False) == 1
    assert connections.sent == []


def test_an_admin_cursor_reset_wakes_the_sleepers_of_every_partition(engine, connections) -> None:
    engine.admin.create_topic(TOPIC, 2)
    parts = [TOPIC.partition(i) for i in range(2)]
    sleep_on_the_channel(engine, *[(p, subscribe(engine, p)) for p in parts])
    engine.admin.cursors.reset_to_time(TOPIC, "s", 0)
    assert sorted(connections.sent) == notices(*parts)


def test_an_admin_reset_to_a_message_id_wakes_the_sleepers_of_that_partition(
    engine, connections, worker
) -> None:
    engine.admin.cursors.reset_to_id(TOPIC, "s", "earliest", False)
    assert connections.sent == notices(TOPIC)
