"""A Pulsar Function's outputs stay effectively once when a delivery step dies holding a
batch: its trigger is Failover, so later steps wait until the dead step's consumer lease
lapses and then take over its messages first, in order. (On Shared, later steps passed the
held batch, and its outputs, retried later with lower sequence ids, were dropped as
duplicates.) A function with maxMessageRetries keeps Shared: dead letters need it."""

from __future__ import annotations

from fake_clock import Clock
from test_functions_runtime import IN, OUT, body, payloads, produce

from magnetar_core.adapters.memory import memory_stores
from magnetar_core.domain.runtime import Runtime
from magnetar_core.engine import Engine
from magnetar_core.services.triggers import CONSUMER_NAME
from magnetar_local.memory_service import memory_settings

START_MS = 1_000_000_000_000


def steps(engine: Engine) -> int:
    """Delivery steps of the function's trigger until one moves nothing; messages moved."""
    trigger, moved = engine.triggers.of_topic(IN)[0], 0
    for _ in range(50):
        outcome = engine.delivery.deliver_once(trigger)
        moved += outcome.acknowledged
        if not outcome.progressed:
            return moved
    raise AssertionError("the trigger never settled")


def test_a_step_that_died_holding_a_batch_is_not_passed_by_later_messages():
    clock = Clock(START_MS)
    settings = memory_settings()
    engine = Engine.assemble(settings, memory_stores(), runtime=Runtime(now_ms=clock))
    engine.tenants.initialize_cluster()
    engine.functions.put("public", "default", "exclaim", body())
    trigger = engine.triggers.of_topic(IN)[0]
    assert trigger.spec.subscription_type == "Failover"
    produce(engine, "a", "b")
    subs = engine.subscriptions  # a step that received a and b, then its Lambda died
    dead = subs.subscribe(IN, trigger.name, CONSUMER_NAME, trigger.spec.subscription_type, True)
    assert len(subs.receive(IN, trigger.name, dead.consumer_id, 10, 0)) == 2
    produce(engine, "c", "d")
    clock.now_ms += 1_000  # later steps join later

    assert steps(engine) == 0  # the dead step's consumer is still the active one
    clock.now_ms += settings.consumer_lease_ms + 1  # its lease lapses
    assert steps(engine) == 4
    assert [p.split("!")[0] for p in payloads(engine, OUT)] == ["a", "b", "c", "d"]


def test_a_function_with_retries_keeps_a_shared_trigger_for_its_dead_letters():
    engine = Engine.assemble(memory_settings(), memory_stores())
    engine.tenants.initialize_cluster()
    engine.functions.put("public", "default", "exclaim", body(maxMessageRetries=2))
    assert engine.triggers.of_topic(IN)[0].spec.subscription_type == "Shared"
