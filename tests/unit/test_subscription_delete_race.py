"""An admin's forced delete of a subscription, or a consumer's unsubscribe, that loses its
race to another cursor write (a consumer still receives, acks or closes) reads the cursor
again and retries, as every cursor update does, instead of answering 503 at the first lost
race."""

from __future__ import annotations

import dataclasses

import pytest

from magnetar_core.adapters.memory import memory_stores
from magnetar_core.domain.errors import ServiceUnitNotReady, SubscriptionNotFound
from magnetar_core.engine import Engine
from magnetar_local.memory_service import memory_settings
from magnetar_wire.names import TopicName

TOPIC = TopicName.parse("persistent://public/default/delete-race")


class RacingCursors:
    """The memory cursor store, with ``races`` deletes that someone else's write beats: just
    before each of them, the stored cursor is written again (its version moves on)."""

    def __init__(self, inner, races: int) -> None:
        self._inner, self.races, self.deletes = inner, races, 0

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def delete(self, pk, state) -> None:
        self.deletes += 1
        if self.races > 0:
            self.races -= 1
            current = self._inner.get(pk, state.subscription)
            self._inner.put(pk, current)  # a consumer's write wins the race
        self._inner.delete(pk, state)


def engine_with(races: int) -> tuple[Engine, RacingCursors]:
    stores = memory_stores()
    cursors = RacingCursors(stores.cursors, races)
    engine = Engine.assemble(memory_settings(), dataclasses.replace(stores, cursors=cursors))
    engine.tenants.initialize_cluster()
    engine.subscriptions.subscribe(TOPIC, "s", "c", "Shared", earliest=True)
    return engine, cursors


def test_a_forced_delete_that_loses_its_race_to_a_consumer_retries_and_deletes():
    engine, cursors = engine_with(races=2)
    engine.subscriptions.delete_subscription(TOPIC, "s", force=True)
    assert cursors.deletes == 3
    with pytest.raises(SubscriptionNotFound):
        engine.subscriptions.delete_subscription(TOPIC, "s", force=True)


def test_a_delete_that_loses_every_race_answers_service_unit_not_ready_and_keeps_it():
    engine, cursors = engine_with(races=10_000)
    with pytest.raises(ServiceUnitNotReady, match="changed meanwhile; retry"):
        engine.subscriptions.delete_subscription(TOPIC, "s", force=True)
    ref = engine.topics.resolve(TOPIC, create=False)
    assert engine.subscriptions.context.cursors.get(ref.key, "s") is not None


def test_a_consumers_unsubscribe_that_loses_its_race_retries_and_deletes():
    engine, cursors = engine_with(races=2)
    ref = engine.topics.resolve(TOPIC, create=False)
    consumer = next(iter(engine.subscriptions.context.cursors.get(ref.key, "s").consumers))
    engine.subscriptions.unsubscribe(TOPIC, "s", consumer)
    assert cursors.deletes == 3
    assert engine.subscriptions.context.cursors.get(ref.key, "s") is None


def test_an_unsubscribe_that_loses_every_race_answers_service_unit_not_ready_and_keeps_it():
    engine, _ = engine_with(races=10_000)
    ref = engine.topics.resolve(TOPIC, create=False)
    consumer = next(iter(engine.subscriptions.context.cursors.get(ref.key, "s").consumers))
    with pytest.raises(ServiceUnitNotReady, match="changed meanwhile; retry"):
        engine.subscriptions.unsubscribe(TOPIC, "s", consumer)
    assert engine.subscriptions.context.cursors.get(ref.key, "s") is not None
