"""Holes in a ledger (ids whose writers died, settled by readers) on the in-memory engine:
consumers step over them, backlogs never count them, and the commit path leaves none in the
normal course."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from magnetar_core.adapters.memory import memory_stores
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.sequencing import HOLE_AFTER_MS
from magnetar_core.engine import Engine
from magnetar_local.memory_service import memory_settings
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.names import TopicName

TOPIC = TopicName.parse("persistent://public/default/holes")


@dataclass
class Clock:
    now_ms: int = 1_800_000_000_000

    def __call__(self) -> int:
        return self.now_ms


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def engine(clock) -> Engine:
    engine = Engine.assemble(memory_settings(), memory_stores(now_ms=clock), Runtime(now_ms=clock))
    engine.tenants.initialize_cluster()
    return engine


def entry(payload: bytes, sequence_id: int) -> bytes:
    message = EntryMessage(payload=payload, sequence_id=sequence_id, publish_time_ms=1)
    return encode_entry([message], producer_name="p")


def die_after_taking_an_id(engine: Engine) -> int:
    """A writer takes the next id and dies before writing its entry; returns the id."""
    key = engine.topics.resolve(TOPIC, create=True).key
    return engine.producer._committer._log.allocate(key, 1).first_id


def test_a_dead_writers_id_holds_consumers_back_until_the_bound_then_they_step_over_it(
    engine, clock
):
    consumer = engine.subscriptions.subscribe(TOPIC, "s", "c", "Shared", True).consumer_id
    engine.producer.publish(TOPIC, entry(b"a", 0))
    dead = die_after_taking_an_id(engine)
    engine.producer.publish(TOPIC, entry(b"c", 2))

    first = engine.subscriptions.receive(TOPIC, "s", consumer, 10, 0)
    assert [d.entry_id for d in first] == [0]  # id 1 may still be written
    clock.now_ms += HOLE_AFTER_MS
    second = engine.subscriptions.receive(TOPIC, "s", consumer, 10, 0)
    assert (dead, [d.entry_id for d in second]) == (1, [2])

    ledger = engine.topics.get(TOPIC).ledger_id
    acked = [f"{ledger}:0:-1:-1", f"{ledger}:2:-1:-1"]
    engine.subscriptions.acknowledge(TOPIC, "s", consumer, acked, False)
    stats = engine.stats.topic_stats(engine.topics.get(TOPIC))
    assert stats["subscriptions"]["s"]["msgBacklog"] == 0


def test_the_backlog_counts_messages_not_holes(engine, clock):
    engine.subscriptions.subscribe(TOPIC, "s", "c", "Shared", True)
    engine.producer.publish(TOPIC, entry(b"a", 0))
    die_after_taking_an_id(engine)
    engine.producer.publish(TOPIC, entry(b"c", 2))
    clock.now_ms += HOLE_AFTER_MS

    stats = engine.stats.topic_stats(engine.topics.get(TOPIC))
    assert stats["subscriptions"]["s"]["msgBacklog"] == 2
    assert stats["msgInCounter"] == 2


def test_a_commit_whose_write_landed_but_whose_answer_was_lost_is_not_committed_twice(
    engine, monkeypatch
):
    log = engine.producer._committer._log
    append = log.append
    lost: list[int] = []

    def landed_then_condition_failed(pk, item):
        append(pk, item)
        if not lost:  # botocore resends; the resend finds the first write's item
            lost.append(item.entry_id)
            append(pk, item)

    monkeypatch.setattr(log, "append", landed_then_condition_failed)
    result = engine.producer.publish(TOPIC, entry(b"once", 0))
    monkeypatch.undo()

    key = engine.topics.resolve(TOPIC, create=False).key
    assert (lost, result.entry_id) == ([0], 0)
    assert [e.entry_id for e in log.read_from(key, 0, 10)] == [0]
