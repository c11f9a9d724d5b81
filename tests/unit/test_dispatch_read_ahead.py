"""Reading a dispatch's index page ahead of the cursor's read (``services.subscriptions.
reading_ahead``): a container that saw the subscription's read position before reads the
new entries there first, so the cursor's race window (its read to its conditional write)
holds no index query; on the subscription service with memory adapters whose log and cursor
calls are recorded in order."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from magnetar_core.adapters.memory import memory_stores
from magnetar_core.domain.cursor.state import SHARED
from magnetar_core.engine import Engine
from magnetar_core.ports import Stores
from magnetar_local.memory_service import memory_settings
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.names import TopicName

TOPIC = TopicName.parse("persistent://public/default/ahead")


class Recorded:
    """A store whose calls are appended to ``calls`` as ``store.method``."""

    def __init__(self, name: str, inner: Any, calls: list[str]) -> None:
        self._name, self._inner, self._calls = name, inner, calls

    def __getattr__(self, method: str) -> Any:
        attr = getattr(self._inner, method)
        if method.startswith("_") or not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            self._calls.append(f"{self._name}.{method}")
            return attr(*args, **kwargs)

        return call


@pytest.fixture
def calls() -> list[str]:
    return []


@pytest.fixture
def stores(calls: list[str]) -> Stores:
    stores = memory_stores()
    return dataclasses.replace(
        stores,
        log=Recorded("log", stores.log, calls),
        cursors=Recorded("cursors", stores.cursors, calls),
    )


@pytest.fixture
def engine(stores: Stores) -> Engine:
    engine = Engine.assemble(memory_settings(), stores)
    engine.tenants.initialize_cluster()
    return engine


def produce(engine: Engine, entries: int, first: int = 0) -> None:
    for i in range(first, first + entries):
        message = EntryMessage(payload=b"m%d" % i, sequence_id=i, publish_time_ms=1)
        engine.producer.publish(TOPIC, encode_entry([message], producer_name="p"))


def window(calls: list[str]) -> list[str]:
    """The calls from the cursor's last read to its write."""
    start = max(i for i, c in enumerate(calls) if c == "cursors.get")
    end = next(i for i, c in enumerate(calls) if i > start and c == "cursors.put")
    return calls[start : end + 1]


def test_a_second_receive_reads_the_new_entries_before_the_cursor(engine, calls):
    subs = engine.subscriptions
    consumer = subs.subscribe(TOPIC, "s", None, SHARED, earliest=True).consumer_id
    produce(engine, 3)
    assert len(subs.receive(TOPIC, "s", consumer, 1000, 0)) == 3
    produce(engine, 4, first=3)
    calls.clear()

    got = subs.receive(TOPIC, "s", consumer, 1000, 0)

    assert [d.entry_id for d in got] == [3, 4, 5, 6]
    assert calls.index("log.read_from") < calls.index("cursors.get")
    assert "log.read_from" not in window(calls)


def test_the_first_receive_of_a_container_reads_the_log_inside_the_window(engine, calls):
    subs = engine.subscriptions
    consumer = subs.subscribe(TOPIC, "s", None, SHARED, earliest=True).consumer_id
    produce(engine, 2)
    calls.clear()

    got = subs.receive(TOPIC, "s", consumer, 1000, 0)

    assert len(got) == 2
    assert "log.read_from" in window(calls)


def test_entries_taken_by_another_container_since_are_not_delivered_again(engine, stores):
    """The page read ahead is stale (another container's consumer took it): the cursor
    decides, and the receive gets only what is still there."""
    subs = engine.subscriptions
    first = subs.subscribe(TOPIC, "s", None, SHARED, earliest=True).consumer_id
    other_container = Engine.assemble(memory_settings(), stores)
    second = other_container.subscriptions.subscribe(TOPIC, "s", None, SHARED, True).consumer_id
    produce(engine, 1)
    assert len(subs.receive(TOPIC, "s", first, 1000, 0)) == 1
    produce(engine, 30, first=1)
    taken = other_container.subscriptions.receive(TOPIC, "s", second, 1000, 0)
    produce(engine, 2, first=31)

    got = subs.receive(TOPIC, "s", first, 1000, 0)

    assert {d.entry_id for d in taken}.isdisjoint(d.entry_id for d in got)
    assert sorted(d.entry_id for d in taken + got) == list(range(1, 1 + len(taken) + len(got)))


@pytest.mark.parametrize("kind", ["Exclusive", "Failover", "Key_Shared"])
def test_a_subscription_of_one_active_consumer_or_key_shared_is_not_read_ahead(
    engine, calls, kind
):
    subs = engine.subscriptions
    consumer = subs.subscribe(TOPIC, "s", None, kind, earliest=True).consumer_id
    produce(engine, 2)
    assert len(subs.receive(TOPIC, "s", consumer, 1000, 0)) == 2
    produce(engine, 2, first=2)
    calls.clear()

    assert len(subs.receive(TOPIC, "s", consumer, 1000, 0)) == 2
    assert calls.index("cursors.get") < calls.index("log.read_from")
