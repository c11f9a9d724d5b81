"""The local trigger driver on the memory engine: a trigger's PUT and a produce on its topic
wake it; a produce on a topic without triggers does not; a failed batch is stepped again
after ``retry_every_ms``, and a retry after a backoff once it is due."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest

from magnetar_core.adapters.memory import memory_stores
from magnetar_core.adapters.memory.timers import TimerStarter
from magnetar_core.adapters.targets import LocalFunctions, Targets
from magnetar_core.domain.runtime import Runtime
from magnetar_core.engine import Engine
from magnetar_local.memory_service import memory_settings
from magnetar_local.routes import RouteMatch
from magnetar_local.template import RouteSpec
from magnetar_local.triggers import PRODUCE, TRIGGER, TriggerDriver
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.names import TopicName

PARAMS = {"domain": "persistent", "tenant": "public", "namespace": "default", "topic": "t"}
TOPIC = TopicName.parse("persistent://public/default/t")


def wait_for(condition: Callable[[], bool], timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def match(method: str, path: str, **extra: str) -> RouteMatch:
    return RouteMatch(RouteSpec(method, path, "AdminFunction"), {**PARAMS, **extra})


@pytest.fixture
def calls() -> list:
    return []


@pytest.fixture
def driver(calls) -> Iterator[TriggerDriver]:
    def handler(event, context):
        calls.append(event["records"])
        failed = [r["messageId"] for r in event["records"] if r["key"] == "bad" and r["redeliveryCount"] == 0]  # fmt: skip
        return {"batchItemFailures": [{"itemIdentifier": i} for i in failed]}

    targets = Targets(functions=LocalFunctions({"fn": handler}))
    engine = Engine.assemble(memory_settings(), memory_stores(), targets=targets)
    engine.tenants.initialize_cluster()
    engine.admin.create_topic(TOPIC, None)
    engine.admin.create_topic(TopicName.parse("persistent://public/default/other"), None)
    running = TriggerDriver(engine, retry_every_ms=20).start()
    yield running
    running.stop()


def produce(driver: TriggerDriver, topic: str, key: str) -> None:
    entry = encode_entry([EntryMessage(payload=b"x", sequence_id=0, publish_time_ms=1, key=key)], producer_name="p")  # fmt: skip
    driver.engine.producer.publish(TopicName.parse(f"persistent://public/default/{topic}"), entry)
    driver.observe(match(*PRODUCE, topic=topic), 200)


def test_a_trigger_put_and_then_each_produce_wake_the_trigger(driver, calls):
    produce(driver, "t", "before")  # no trigger yet: nothing known about the topic
    driver.engine.triggers.put(TOPIC, "push", {"target": {"type": "lambda", "function": "fn"}, "initialPosition": "Earliest"})  # fmt: skip
    driver.observe(match("PUT", TRIGGER, name="push"), 200)
    wait_for(lambda: [r["key"] for b in calls for r in b] == ["before"])
    produce(driver, "t", "after")
    wait_for(lambda: [r["key"] for b in calls for r in b] == ["before", "after"])


def test_a_failed_message_is_stepped_again_after_the_retry_interval(driver, calls):
    driver.engine.triggers.put(TOPIC, "push", {"target": {"type": "lambda", "function": "fn"}})
    driver.observe(match("PUT", TRIGGER, name="push"), 200)
    produce(driver, "t", "bad")
    wait_for(lambda: [(r["key"], r["redeliveryCount"]) for b in calls for r in b] == [("bad", 0), ("bad", 1)])  # fmt: skip


def test_a_refused_request_or_a_topic_without_triggers_wakes_nothing(driver, calls):
    driver.engine.triggers.put(TOPIC, "push", {"target": {"type": "lambda", "function": "fn"}})
    driver.observe(match("PUT", TRIGGER, name="push"), 400)  # the driver never saw it succeed
    produce(driver, "t", "k")
    produce(driver, "other", "k")
    driver.wake("persistent://public/default/other")  # a topic without triggers: no step
    driver.wake(str(TOPIC))  # explicitly woken: delivered
    wait_for(lambda: len(calls) == 1)
    assert [r["key"] for r in calls[0]] == ["k"]


def test_a_paused_driver_runs_no_step_and_runs_what_woke_it_once_resumed(driver, calls):
    driver.engine.triggers.put(TOPIC, "push", {"target": {"type": "lambda", "function": "fn"}, "initialPosition": "Earliest"})  # fmt: skip
    with driver.paused():
        driver.observe(match("PUT", TRIGGER, name="push"), 200)
        produce(driver, "t", "held")
        cursors = driver.engine.admin.stats(TOPIC, partitioned=False)["subscriptions"]["push"]
        assert calls == [] and cursors["msgBacklog"] == 1  # woken, yet nothing delivered
    wait_for(lambda: [r["key"] for b in calls for r in b] == ["held"])


def test_a_retry_after_a_backoff_makes_the_topic_due_again_when_its_timer_releases_it(calls):
    def handler(event, context):
        calls.append(event["records"])
        return {"batchItemFailures": [{"itemIdentifier": r["messageId"]} for r in event["records"] if r["redeliveryCount"] == 0]}  # fmt: skip

    clock = [1_000_000]
    stores = memory_stores()
    timers = TimerStarter(stores.cursors, lambda: clock[0])  # type: ignore[arg-type]
    targets = Targets(functions=LocalFunctions({"fn": handler}))
    runtime = Runtime(now_ms=lambda: clock[0])
    engine = Engine.assemble(memory_settings(), stores, runtime=runtime, starter=timers, targets=targets)  # fmt: skip
    engine.tenants.initialize_cluster()
    engine.admin.create_topic(TOPIC, None)
    driver = TriggerDriver(engine, retry_every_ms=20)  # not started: run_topic called here
    retry = {"minDelayMs": 5000, "maxDelayMs": 5000, "multiplier": 1}
    engine.triggers.put(TOPIC, "push", {"target": {"type": "lambda", "function": "fn"}, "retry": retry})  # fmt: skip
    produce(driver, "t", "k")
    wait_ms = driver.run_topic(TOPIC)  # delivered, failed: due again in 5 s (a whole second)
    assert len(calls) == 1 and wait_ms is not None and 5000 <= wait_ms <= 6000
    clock[0] += wait_ms - 1
    assert driver.run_topic(TOPIC) == 1 and len(calls) == 1  # not yet; woken again in 1 ms
    clock[0] += 1
    assert driver.run_topic(TOPIC) == 20  # due, its timer has not fired: polled until it has
    timers.release_due()
    assert driver.run_topic(TOPIC) is None  # delivered again (count 1), nothing more due
    assert [r["redeliveryCount"] for b in calls for r in b] == [0, 1]


def test_a_backlog_longer_than_one_wakes_step_bound_is_delivered_without_another_produce(
    driver, calls, monkeypatch
):
    monkeypatch.setattr("magnetar_local.triggers.MAX_STEPS", 2)
    for n in range(5):  # five entries; a batch of 1 takes one entry a step
        produce(driver, "t", f"m{n}")
    driver.engine.triggers.put(TOPIC, "push", {"target": {"type": "lambda", "function": "fn"}, "batchSize": 1, "initialPosition": "Earliest"})  # fmt: skip
    driver.observe(match("PUT", TRIGGER, name="push"), 200)  # the only wake
    wait_for(lambda: [r["key"] for b in calls for r in b] == [f"m{n}" for n in range(5)])
