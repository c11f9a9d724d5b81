"""Helpers of the delayed delivery tests on the emulator (test_delayed_delivery.py): delayed
entries, the cursor and the timer executions read back, and 200 messages due in one second."""

from __future__ import annotations

import dataclasses
import time
import uuid

import pytest

from magnetar_core.engine import Engine
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.names import TopicName


def now_ms() -> int:
    return int(time.time() * 1000)


def delayed_entry(payload: bytes, deliver_at_ms: int, key: str | None = None) -> bytes:
    message = EntryMessage(
        payload=payload, sequence_id=0, publish_time_ms=now_ms(), deliver_at_ms=deliver_at_ms
    )
    if key is not None:
        message = dataclasses.replace(message, key=key)
    return encode_entry([message], producer_name="delay-test")


def receive_until(subs, topic, sub, consumer_id, deadline_s: float, max_messages: int = 10):
    """Long-poll until something arrives; returns ``(epoch ms it came, what came)``."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        got = subs.receive(topic, sub, consumer_id, max_messages, 1000)
        if got:
            return now_ms(), got
    return None, []


def cursor_of(engine: Engine, topic, sub):
    ref = engine.topics.resolve(topic, create=False)
    return ref.key, engine.subscriptions.context.cursors.get(ref.key, sub)


def timer_executions(sfn, local_stack, workflow: str | None = None) -> list[str]:
    """Names of the executions of the timer workflows (Standard and Express), or of one
    of them (``workflow``: the handler setting naming it)."""
    settings = (
        [workflow] if workflow else ["TIMER_STATE_MACHINE_ARN", "TIMER_EXPRESS_STATE_MACHINE_ARN"]
    )
    return [
        e["name"]
        for setting in settings
        for page in sfn.get_paginator("list_executions").paginate(
            stateMachineArn=local_stack.environment[setting]
        )
        for e in page["executions"]
    ]


EARLY_MS = 1500
"""All 200 messages are published, and the cursor read back, at least this long before the
second they are due (the emulator's timer may fire up to 1 s early)."""


def publish_200_due_in_one_second(engine: Engine, topic: TopicName) -> tuple:
    """Publish 200 messages due in one second ahead, on ``topic`` or, when publishing was too
    slow to end EARLY_MS before it, again on a fresh topic with a lead the rate measured
    calls for; returns the topic, its consumer, the due time, the first (deferring) receive
    and the cursor read after it. It was a fixed lead of 20 s (7 s was not enough at a load
    of 10, nor 12 s): wall time waited on every run; a quiet run now waits about 3 s."""
    subs, lead_s = engine.subscriptions, 3.0
    for _ in range(4):
        c = subs.subscribe(topic, "many", "c", "Shared", earliest=True)
        started = now_ms()
        due = (started // 1000 + int(lead_s)) * 1000 + 400
        for i in range(200):
            if now_ms() >= due - EARLY_MS:
                break  # too slow: the bucket would come due before all of it is in
            engine.producer.publish(topic, delayed_entry(b"m%03d" % i, due))
        else:
            early = subs.receive(topic, "many", c.consumer_id, 1000, 0)
            pk, state = cursor_of(engine, topic, "many")
            if now_ms() < due - EARLY_MS:
                return topic, c, due, early, pk, state
        per_message_ms = (now_ms() - started) / (i + 1)
        lead_s = 2 + 1.5 * 200 * per_message_ms / 1000
        topic = TopicName.parse(f"persistent://public/default/it-{uuid.uuid4().hex[:10]}")
    pytest.fail(f"200 publishes never ended {EARLY_MS} ms before their due time")
