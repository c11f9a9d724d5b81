"""A Key_Shared trigger over batch entries that mix keys (memory service): a message's
redelivery count rises only when that message was sent and failed. A message held back
behind its key's failing one, or sent in another batch, keeps its own count; only the
message that keeps failing goes to the dead letter topic."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field

from fake_clock import Clock

from magnetar_core.adapters.memory import memory_stores
from magnetar_core.adapters.memory.timers import TimerStarter
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.triggers.records import TargetAnswer
from magnetar_core.domain.triggers.spec import Target
from magnetar_core.engine import Engine
from magnetar_core.services.entries import delivered_messages
from magnetar_local.memory_service import memory_settings
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.names import TopicName

TOPIC = TopicName.parse("persistent://public/default/mixed")
DLQ = TopicName.parse("persistent://public/default/mixed-t-DLQ")
START_MS = 1_000_000
RETRY = {"minDelayMs": 1000, "maxDelayMs": 1000, "multiplier": 1}


@dataclass
class ItemFailures:
    """Answers with ``batchItemFailures``: a payload starting with ``!`` always fails,
    one starting with ``?`` fails on its first delivery (count 0)."""

    batches: list = field(default_factory=list)

    def invoke(self, target: Target, body: bytes, timestamp_ms: int) -> TargetAnswer:
        records = json.loads(body)["records"]
        self.batches.append(records)
        failed = [
            {"itemIdentifier": r["messageId"]}
            for r in records
            if _text(r).startswith("!") or (_text(r).startswith("?") and r["redeliveryCount"] == 0)
        ]
        return TargetAnswer(200, json.dumps({"batchItemFailures": failed}).encode())

    def sent(self) -> list[tuple[str, int]]:
        return [(_text(r), r["redeliveryCount"]) for b in self.batches for r in b]


def _text(record: dict) -> str:
    return base64.b64decode(record["payload"]).decode()


def engine_of(target: ItemFailures, clock: Clock) -> tuple[Engine, TimerStarter]:
    stores = memory_stores()
    timers = TimerStarter(stores.cursors, clock)  # type: ignore[arg-type]
    engine = Engine.assemble(
        memory_settings(), stores, runtime=Runtime(now_ms=clock), starter=timers, targets=target
    )
    engine.tenants.initialize_cluster()
    return engine, timers


def publish_batch(engine: Engine, clock: Clock, *messages: tuple[str, str]) -> None:
    """One batch entry of ``(key, payload)`` messages."""
    batch = [
        EntryMessage(payload=p.encode(), sequence_id=i, publish_time_ms=clock.now_ms, key=k)
        for i, (k, p) in enumerate(messages)
    ]
    engine.producer.publish(TOPIC, encode_entry(batch, producer_name="p", batched=True))


def trigger_of(engine: Engine, **body):
    engine.admin.create_topic(TOPIC, None)
    spec = {"target": {"type": "lambda", "function": "fn"}, "initialPosition": "Earliest",
            "subscriptionType": "Key_Shared", "retry": RETRY, **body}  # fmt: skip
    trigger, _ = engine.triggers.put(TOPIC, "t", spec)
    return trigger


def dead_letters(engine: Engine) -> list[str]:
    subs = engine.subscriptions
    handle = subs.subscribe(DLQ, "check", "checker", "Exclusive", True)
    got = subs.receive(DLQ, "check", handle.consumer_id, 100, 0)
    return [m.payload.decode() for _, _, _, m in delivered_messages(got)]


def step_after_retry(engine: Engine, clock: Clock, timers: TimerStarter, trigger):
    clock.now_ms += 1000
    timers.release_due()
    return engine.delivery.deliver_once(trigger)


def test_a_message_held_behind_its_keys_failing_one_keeps_count_0_and_is_not_dead_lettered():
    target, clock = ItemFailures(), Clock(START_MS)
    engine, timers = engine_of(target, clock)
    trigger = trigger_of(engine, batchSize=1, deadLetterPolicy={"maxRedeliverCount": 1})
    publish_batch(engine, clock, ("a", "!a0"), ("a", "a1"), ("b", "b0"))
    first = engine.delivery.deliver_once(trigger)  # !a0 fails: a1 held back, b0 goes
    assert (first.retried, first.held, first.acknowledged) == (1, 1, 1)
    second = step_after_retry(engine, clock, timers, trigger)  # !a0 (count 1) fails again
    assert (second.retried, second.held) == (1, 1)
    third = step_after_retry(engine, clock, timers, trigger)  # !a0 exhausted: a1 goes
    assert third.acknowledged == 1
    assert target.sent() == [("!a0", 0), ("b0", 0), ("!a0", 1), ("a1", 0)]
    assert dead_letters(engine) == ["!a0"]


def test_messages_of_one_entry_failing_in_different_batches_each_count_once():
    target, clock = ItemFailures(), Clock(START_MS)
    engine, timers = engine_of(target, clock)
    trigger = trigger_of(engine, batchSize=2, maximumConcurrency=2,
                         deadLetterPolicy={"maxRedeliverCount": 1})  # fmt: skip
    publish_batch(engine, clock, ("a", "?a0"), ("b", "b0"), ("c", "?c0"), ("d", "d0"))
    first = engine.delivery.deliver_once(trigger)
    assert (first.retried, first.acknowledged, first.held) == (2, 2, 0)
    second = step_after_retry(engine, clock, timers, trigger)
    assert (second.retried, second.acknowledged) == (0, 2)
    assert sorted(target.sent()) == [("?a0", 0), ("?a0", 1), ("?c0", 0), ("?c0", 1),
                                     ("b0", 0), ("d0", 0)]  # fmt: skip
    assert dead_letters(engine) == []
    stats = engine.subscriptions.context.cursors.get(
        engine.topics.resolve(TOPIC, create=False).key, "t"
    )
    assert stats is not None and stats.mark_delete == 0  # the entry is wholly acknowledged
