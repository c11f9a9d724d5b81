"""Trigger delivery on the memory service: batches in flight at once up to
maximumConcurrency, Key_Shared and Failover order, bisect on error with the bad message
dead-lettered and its key's later messages held back (count unchanged), the batching
window, and retries due later reported to the driver. Time is a fake clock."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field

import pytest
from fake_clock import Clock

from magnetar_core.adapters.memory import memory_stores
from magnetar_core.adapters.memory.timers import TimerStarter
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.triggers.records import TargetAnswer
from magnetar_core.domain.triggers.spec import Target
from magnetar_core.engine import Engine
from magnetar_local.memory_service import memory_settings
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.names import TopicName

TOPIC = TopicName.parse("persistent://public/default/orders")
LAMBDA = {"type": "lambda", "function": "fn"}
START_MS = 1_000_000


@dataclass
class OverlapTarget:
    """Records batches (their keys) and which were in flight together. The first ``pair``
    calls each wait (up to 2 s) until ``pair`` calls are in flight: batches that may
    overlap must; a payload ``poison`` fails the whole batch (500)."""

    pair: int = 1
    batches: list = field(default_factory=list)
    overlaps: list = field(default_factory=list)
    in_flight: list = field(default_factory=list)
    cond: threading.Condition = field(default_factory=threading.Condition)

    def invoke(self, target: Target, body: bytes, timestamp_ms: int) -> TargetAnswer:
        records = json.loads(body)["records"]
        keys = [(r["key"], r["topic"][-1]) for r in records]
        with self.cond:
            self.batches.append(records)
            self.in_flight.append(keys)
            self.overlaps.append([list(k) for k in self.in_flight])
            self.cond.notify_all()
            deadline = time.monotonic() + 2
            gated = len(self.batches) <= self.pair
            while (
                gated and max(map(len, self.overlaps)) < self.pair and time.monotonic() < deadline
            ):
                self.cond.wait(deadline - time.monotonic())
            self.in_flight.remove(keys)
        poisoned = any(r["payload"] == "cG9pc29u" for r in records)  # base64 "poison"
        return TargetAnswer(500 if poisoned else 200)

    def sent(self) -> list[tuple[str, int]]:
        return [(r["key"], r["redeliveryCount"]) for b in self.batches for r in b]


def make_engine(target: OverlapTarget, clock: Clock) -> tuple[Engine, TimerStarter]:
    stores = memory_stores()
    timers = TimerStarter(stores.cursors, clock)  # type: ignore[arg-type]
    engine = Engine.assemble(
        memory_settings(), stores, runtime=Runtime(now_ms=clock), starter=timers, targets=target
    )
    engine.tenants.initialize_cluster()
    return engine, timers


def produce(engine: Engine, clock: Clock, *keys: str, topic: TopicName = TOPIC) -> None:
    for i, key in enumerate(keys):
        payload = b"poison" if key.endswith("!") else key.encode()
        message = EntryMessage(payload=payload, sequence_id=i, publish_time_ms=clock.now_ms, key=key.rstrip("!"))  # fmt: skip
        engine.producer.publish(topic, encode_entry([message], producer_name="p"))


def drain(engine: Engine, trigger) -> int:
    """Step until a step acknowledges nothing; returns how many were acknowledged."""
    total = 0
    while (outcome := engine.delivery.deliver_once(trigger)).acknowledged:
        total += outcome.acknowledged
    return total


def trigger_of(engine: Engine, topic: TopicName = TOPIC, partitions: int | None = None, **body):
    engine.admin.create_topic(topic, partitions)
    trigger, _ = engine.triggers.put(topic, "t", {"target": LAMBDA, "initialPosition": "Earliest", **body})  # fmt: skip
    return trigger


def test_shared_runs_up_to_maximum_concurrency_batches_at_once():
    target, clock = OverlapTarget(pair=2), Clock(START_MS)
    engine, _ = make_engine(target, clock)
    trigger = trigger_of(engine, batchSize=1, maximumConcurrency=2)
    produce(engine, clock, "a", "b", "c", "d", "e")
    outcome = engine.delivery.deliver_once(trigger)  # a batch per slot and one message more
    assert (outcome.delivered, outcome.acknowledged, outcome.invocations) == (3, 3, 3)
    assert drain(engine, trigger) == 2
    assert max(len(o) for o in target.overlaps) == 2 and len(target.batches) == 5


def test_key_shared_never_has_two_batches_of_one_key_in_flight_and_keeps_each_keys_order():
    target, clock = OverlapTarget(pair=2), Clock(START_MS)
    engine, _ = make_engine(target, clock)
    trigger = trigger_of(engine, subscriptionType="Key_Shared", batchSize=2, maximumConcurrency=3)
    produce(engine, clock, "a", "a", "a", "b", "a", "c", "b", "c")
    assert drain(engine, trigger) == 8
    for overlap in target.overlaps:
        held = [k for batch in overlap for k in {key for key, _ in batch}]
        assert len(held) == len(set(held)), overlap
    assert target.overlaps[1] == [[("a", "s"), ("a", "s")], [("b", "s"), ("c", "s")]]
    sequence = [r["payload"] for b in target.batches for r in b]
    assert len(sequence) == 8
    for key in "abc":
        ids = [r["messageId"] for b in target.batches for r in b if r["key"] == key]
        assert ids == sorted(ids, key=lambda i: int(i.split(":")[1]))


def test_failover_has_one_batch_per_partition_in_flight_in_order():
    target, clock = OverlapTarget(pair=2), Clock(START_MS)
    engine, _ = make_engine(target, clock)
    trigger = trigger_of(engine, partitions=2, subscriptionType="Failover", batchSize=2, maximumConcurrency=4)  # fmt: skip
    for p in (0, 1):
        produce(engine, clock, *[f"p{p}-{i}" for i in range(5)], topic=TOPIC.partition(p))
    assert drain(engine, trigger) == 10
    for overlap in target.overlaps:
        partitions = [batch[0][1] for batch in overlap]
        assert len(partitions) == len(set(partitions)), overlap
    assert max(len(o) for o in target.overlaps) == 2
    for p in "01":
        keys = [key for key, part in (k for b in target.batches for k in [(r["key"], r["topic"][-1]) for r in b]) if part == p]  # fmt: skip
        assert keys == [f"p{p}-{i}" for i in range(5)]


def test_a_failing_key_shared_batch_is_bisected_and_the_bad_message_dead_lettered_in_order():
    target, clock = OverlapTarget(), Clock(START_MS)
    engine, _ = make_engine(target, clock)
    trigger = trigger_of(engine, subscriptionType="Key_Shared", batchSize=6, deadLetterPolicy={"maxRedeliverCount": 1})  # fmt: skip
    produce(engine, clock, "a", "b", "a!", "b", "a", "c")
    first = engine.delivery.deliver_once(trigger)
    assert (first.acknowledged, first.retried, first.held) == (4, 1, 1)
    # whole batch 500 -> [a b a!] 500 -> [a b] ok, [a!] 500; then [b c] ok, the last a held
    assert [len(b) for b in target.batches] == [6, 3, 2, 1, 2]
    assert target.sent()[-3:] == [("a", 0), ("b", 0), ("c", 0)]
    second = engine.delivery.deliver_once(trigger)  # a! (count 1) fails again; a held again
    assert (second.retried, second.held) == (1, 1)
    third = engine.delivery.deliver_once(trigger)  # a! dead-lettered: the last a goes out
    assert (third.acknowledged, third.retried) == (1, 0)
    assert target.sent()[-1] == ("a", 0)
    dlq = TopicName.parse("persistent://public/default/orders-t-DLQ")
    assert engine.subscriptions.last_message_id(dlq) is not None


def test_shared_retries_a_failing_batch_whole_without_bisecting():
    target, clock = OverlapTarget(), Clock(START_MS)
    engine, _ = make_engine(target, clock)
    trigger = trigger_of(engine, batchSize=4)
    produce(engine, clock, "a", "b!", "c")
    outcome = engine.delivery.deliver_once(trigger)
    assert (outcome.invocations, outcome.retried, outcome.held) == (1, 3, 0)


def test_a_key_waiting_for_a_retry_holds_its_new_messages_until_the_retry_is_due():
    target, clock = OverlapTarget(), Clock(START_MS)
    engine, timers = make_engine(target, clock)
    retry = {"minDelayMs": 1000, "maxDelayMs": 1000, "multiplier": 1}
    trigger = trigger_of(engine, subscriptionType="Key_Shared", batchSize=10, retry=retry)
    produce(engine, clock, "a!", "b")
    first = engine.delivery.deliver_once(trigger)
    assert (first.acknowledged, first.retried) == (1, 1) and first.due_ms is not None
    assert START_MS + 1000 <= first.due_ms <= START_MS + 2000
    produce(engine, clock, "a", "b")
    second = engine.delivery.deliver_once(trigger)  # a's retry is not due: the new a waits
    assert (second.acknowledged, second.held, second.due_ms) == (1, 1, first.due_ms)
    assert target.sent()[-1] == ("b", 0)
    clock.now_ms = first.due_ms
    timers.release_due()
    third = engine.delivery.deliver_once(trigger)  # a! (count 1) first, then the new a
    assert (third.retried, third.held) == (1, 1)  # a! failed again: a is held again
    counts = [[(r["key"], r["redeliveryCount"]) for r in b] for b in target.batches[-2:]]
    assert counts == [[("a", 1), ("a", 0)], [("a", 1)]]


def test_the_batching_window_waits_for_a_full_batch_until_it_ends():
    target, clock = OverlapTarget(), Clock(START_MS)
    engine, _ = make_engine(target, clock)
    trigger = trigger_of(engine, batchSize=3, maximumBatchingWindowMs=500)
    produce(engine, clock, "a")
    waiting = engine.delivery.deliver_once(trigger)
    assert (waiting.delivered, waiting.held, waiting.due_ms) == (0, 1, START_MS + 500)
    clock.now_ms += 200
    produce(engine, clock, "b", "c")  # a full batch: sent before the window ends
    assert engine.delivery.deliver_once(trigger).delivered == 3
    assert target.sent() == [("a", 0), ("b", 0), ("c", 0)]  # the wait counted no redelivery
    produce(engine, clock, "d")
    assert engine.delivery.deliver_once(trigger).delivered == 0
    clock.now_ms += 500
    assert engine.delivery.deliver_once(trigger).delivered == 1


@pytest.mark.parametrize("kind", ["Shared", "Key_Shared"])
def test_a_step_with_nothing_received_reports_nothing_due(kind):
    target, clock = OverlapTarget(), Clock(START_MS)
    engine, _ = make_engine(target, clock)
    trigger = trigger_of(engine, subscriptionType=kind)
    outcome = engine.delivery.deliver_once(trigger)
    assert (outcome.delivered, outcome.due_ms, target.batches) == (0, None, [])


def test_a_delayed_delivery_does_not_hold_back_its_keys_later_messages():
    target, clock = OverlapTarget(), Clock(START_MS)
    engine, _ = make_engine(target, clock)
    trigger = trigger_of(engine, subscriptionType="Key_Shared")
    later = EntryMessage(payload=b"later", sequence_id=9, publish_time_ms=clock.now_ms, key="a", deliver_at_ms=clock.now_ms + 60_000)  # fmt: skip
    engine.producer.publish(TOPIC, encode_entry([later], producer_name="p"))
    produce(engine, clock, "a")
    outcome = engine.delivery.deliver_once(trigger)  # Pulsar's order: a delayed one comes later
    assert (outcome.acknowledged, outcome.held) == (1, 0) and target.sent() == [("a", 0)]
    assert outcome.due_ms is not None and outcome.due_ms >= clock.now_ms + 60_000


def test_a_failing_failover_batch_is_bisected_and_holds_the_rest_of_its_partition():
    target, clock = OverlapTarget(), Clock(START_MS)
    engine, _ = make_engine(target, clock)
    trigger = trigger_of(engine, subscriptionType="Failover", batchSize=4)
    produce(engine, clock, "a", "b!", "c", "d")
    outcome = engine.delivery.deliver_once(trigger)
    assert (outcome.acknowledged, outcome.retried, outcome.held) == (1, 1, 2)
    assert [len(b) for b in target.batches] == [4, 2, 1, 1]  # all, [a b!], [a], [b!]
    second = engine.delivery.deliver_once(trigger)  # b! first again (count 1): c, d wait
    assert (second.acknowledged, second.retried, second.held) == (0, 1, 2)
    keys = [[(r["key"], r["redeliveryCount"]) for r in b] for b in target.batches[4:]]
    assert keys == [[("b", 1), ("c", 0), ("d", 0)], [("b", 1), ("c", 0)], [("b", 1)]]
