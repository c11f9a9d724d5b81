"""Delayed delivery and delayed nacks on the emulator, with the real timer workflow.

Timers really wait (the emulator's Wait sleeps), so the delays here are 1-3 s and every
wait is a long-poll receive or a condition polled with a deadline.
"""

from __future__ import annotations

import dataclasses
import time
import uuid

import pytest
from delayed_support import (
    cursor_of,
    delayed_entry,
    now_ms,
    publish_200_due_in_one_second,
    receive_until,
    timer_executions,
)
from delivered import entry_ids, payloads

from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.timers import execution_name
from magnetar_core.engine import Engine
from magnetar_local.tenancy import ensure_namespaces
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.names import TopicName

TICK = 1000


def test_a_message_delivered_after_2_5_s_is_not_received_at_1_s_and_comes_within_1_5_s_of_due(
    engine, topic
):
    subs = engine.subscriptions
    c = subs.subscribe(topic, "sh", "c", "Shared", earliest=True)
    sent = now_ms()
    due = sent + 2500
    engine.producer.publish(topic, delayed_entry(b"later", due))

    assert subs.receive(topic, "sh", c.consumer_id, 10, 0) == []
    time.sleep(max(0.0, (sent + 1000 - now_ms()) / 1000))
    assert subs.receive(topic, "sh", c.consumer_id, 10, 0) == []
    came, got = receive_until(subs, topic, "sh", c.consumer_id, 10)

    assert payloads(got) == [b"later"]
    assert got[0].redelivery_count == 0
    assert came >= due // TICK * TICK  # default mode: at most one tick early
    assert came <= due + 1500


def test_in_strict_mode_a_message_delivered_at_a_time_never_comes_before_it(
    settings, topic, engine_clients
):
    engine = Engine.build(
        dataclasses.replace(settings, delayed_delivery_strict=True), clients=engine_clients
    )
    subs = engine.subscriptions
    c = subs.subscribe(topic, "sh", "c", "Shared", earliest=True)
    due = now_ms() + 2500
    engine.producer.publish(topic, delayed_entry(b"at", due))

    came, got = receive_until(subs, topic, "sh", c.consumer_id, 10)

    assert payloads(got) == [b"at"]  # within receive_until's 10 s
    assert due <= came  # never early; how late depends on the machine (docs/benchmarks.md)


def test_an_exclusive_subscription_gets_a_delayed_message_at_once(engine, topic):
    subs = engine.subscriptions
    c = subs.subscribe(topic, "ex", "c", "Exclusive", earliest=True)
    engine.producer.publish(topic, delayed_entry(b"now", now_ms() + 60_000))

    assert payloads(subs.receive(topic, "ex", c.consumer_id, 10, 0)) == [b"now"]


def test_delayed_messages_do_not_hold_back_the_messages_after_them(engine, topic, make_entry):
    subs = engine.subscriptions
    c = subs.subscribe(topic, "sh", "c", "Shared", earliest=True)
    due = now_ms() + 2000
    engine.producer.publish(topic, delayed_entry(b"late", due))
    engine.producer.publish(topic, make_entry(b"on-time"))

    assert payloads(subs.receive(topic, "sh", c.consumer_id, 10, 0)) == [b"on-time"]
    came, got = receive_until(subs, topic, "sh", c.consumer_id, 10)
    assert payloads(got) == [b"late"] and came >= due // TICK * TICK


def test_key_shared_honours_the_delay(engine, topic):
    subs = engine.subscriptions
    c = subs.subscribe(topic, "ks", "c", "Key_Shared", earliest=True)
    due = now_ms() + 2500
    engine.producer.publish(topic, delayed_entry(b"keyed", due, key="k"))

    # at once, it may come only if the machine was so slow that its tick had begun by the
    # time the receive returned (the dispatch reads the clock before that): the publish and
    # receive take ~0.1 s, the tick begins 1.5-2.5 s after the publish
    first = subs.receive(topic, "ks", c.consumer_id, 10, 0)
    returned = now_ms()
    came, got = (returned, first) if first else receive_until(subs, topic, "ks", c.consumer_id, 10)
    assert payloads(got) == [b"keyed"]
    assert due // TICK * TICK <= came <= due + 1500


def test_with_delayed_delivery_switched_off_a_delayed_message_comes_at_once(
    settings, topic, engine_clients
):
    engine = Engine.build(
        dataclasses.replace(settings, delayed_delivery_enabled=False), clients=engine_clients
    )
    subs = engine.subscriptions
    c = subs.subscribe(topic, "sh", "c", "Shared", earliest=True)
    engine.producer.publish(topic, delayed_entry(b"now", now_ms() + 60_000))

    assert payloads(subs.receive(topic, "sh", c.consumer_id, 10, 0)) == [b"now"]


def test_a_nack_with_a_2_s_delay_redelivers_after_2_s_with_count_plus_one(
    engine, topic, make_entry
):
    subs = engine.subscriptions
    c = subs.subscribe(topic, "n", "c", "Shared", earliest=True)
    engine.producer.publish(topic, make_entry(b"retry-me"))
    first = subs.receive(topic, "n", c.consumer_id, 10, 0)

    nacked = now_ms()
    assert subs.negative_acknowledge(topic, "n", c.consumer_id, entry_ids(first), 2000) == 1
    assert subs.receive(topic, "n", c.consumer_id, 10, 0) == []
    came, again = receive_until(subs, topic, "n", c.consumer_id, 10)

    assert payloads(again) == [b"retry-me"]
    assert again[0].redelivery_count == 1
    assert nacked + 2000 <= came <= nacked + 2000 + TICK + 1500


def test_a_message_due_in_the_year_10000_waits_and_the_messages_after_it_are_received(
    engine, topic, make_entry, aws_clients, local_stack
):
    """Issue 11, defect 1: the poison message used to make every receive a 502 (its
    bucket's ``dueAt`` could not be formatted); now it is held and starts no timer."""
    subs = engine.subscriptions
    shared = subs.subscribe(topic, "sh", "c", "Shared", earliest=True)
    keyed = subs.subscribe(topic, "ks", "c", "Key_Shared", earliest=True)
    engine.producer.publish(topic, delayed_entry(b"year-10000", 253_402_300_800_000, key="k"))
    for i in range(3):
        engine.producer.publish(topic, make_entry(b"m%d" % i, key="k"))

    for sub, consumer in (("sh", shared), ("ks", keyed)):
        got = subs.receive(topic, sub, consumer.consumer_id, 10, 1000)
        assert payloads(got) == [b"m0", b"m1", b"m2"]
        assert subs.receive(topic, sub, consumer.consumer_id, 10, 0) == []
        assert cursor_of(engine, topic, sub)[1].delayed_count() == 1
    pk = cursor_of(engine, topic, "sh")[0]
    suffixes = {
        execution_name(pk, sub, cursor_of(engine, topic, sub)[1].timer_id, 0).split("-", 1)[1]
        for sub in ("sh", "ks")
    }
    started = [
        name
        for name in timer_executions(aws_clients.stepfunctions, local_stack)
        if "-" in name and name.split("-", 1)[1] in suffixes  # the worker's stack has others
    ]
    assert started == []  # Step Functions cannot wait past a year: no execution


def test_a_nack_with_zero_delay_redelivers_at_once(engine, topic, make_entry):
    subs = engine.subscriptions
    c = subs.subscribe(topic, "n", "c", "Shared", earliest=True)
    engine.producer.publish(topic, make_entry(b"m"))
    first = subs.receive(topic, "n", c.consumer_id, 10, 0)
    subs.negative_acknowledge(topic, "n", c.consumer_id, entry_ids(first), 0)
    again = subs.receive(topic, "n", c.consumer_id, 10, 0)
    assert [d.redelivery_count for d in again] == [1]


def test_200_delayed_messages_due_in_the_same_second_start_exactly_one_execution(
    engine, topic, aws_clients, local_stack
):
    subs = engine.subscriptions
    topic, c, due, early, pk, state = publish_200_due_in_one_second(engine, topic)
    assert early == []
    assert state.delayed_count() == 200 and list(state.delayed) == [due // 1000 * 1000]
    got: list = []
    end = time.monotonic() + 30
    while len(got) < 200 and time.monotonic() < end:
        got += subs.receive(topic, "many", c.consumer_id, 1000, 1000)

    assert sorted(payloads(got)) == [b"m%03d" % i for i in range(200)]
    assert min(d.entry_id for d in got) == 0
    name = execution_name(pk, "many", state.timer_id, due // 1000 * 1000)
    suffix = name.split("-", 1)[1]
    names = timer_executions(aws_clients.stepfunctions, local_stack)
    assert [n for n in names if n.endswith(suffix)] == [name]


def test_a_release_racing_with_a_cursor_write_is_not_lost(engine, topic, make_entry, aws_clients):
    subs = engine.subscriptions
    c = subs.subscribe(topic, "race", "c", "Shared", earliest=True)
    engine.producer.publish(topic, make_entry(b"plain"))
    due = now_ms() + 3000  # the emulator's timer may fire up to 1 s early: keep it later
    engine.producer.publish(topic, delayed_entry(b"delayed", due))
    plain = subs.receive(topic, "race", c.consumer_id, 10, 0)
    pk, stale = cursor_of(engine, topic, "race")
    assert payloads(plain) == [b"plain"] and stale.delayed_count() == 1
    assert stale.released == set()

    key = {"pk": {"S": pk}, "sub": {"S": "race"}}
    end = time.monotonic() + 10
    while time.monotonic() < end:  # await the timer's release
        item = aws_clients.dynamodb.get_item(
            TableName="magnetar-cursors", Key=key, ConsistentRead=True
        )["Item"]
        if "rel" in item:
            break
        time.sleep(0.05)
    assert "rel" in item

    with pytest.raises(ConditionFailed):  # a write based on a read before the release loses
        engine.subscriptions.context.cursors.put(pk, stale)
    # an ack written after the release carries the unconsumed release over
    assert subs.acknowledge(topic, "race", c.consumer_id, entry_ids(plain), False) == 1
    came, got = receive_until(subs, topic, "race", c.consumer_id, 5)
    assert payloads(got) == [b"delayed"]
    _, after = cursor_of(engine, topic, "race")
    assert after.released == set() and after.delayed == {}


def namespace_topic(engine) -> TopicName:
    """A topic in a namespace nobody configured (``public/<fresh>``), created."""
    topic = TopicName.parse(f"persistent://public/dd-{uuid.uuid4().hex[:8]}/t")
    ensure_namespaces(engine, f"{topic.tenant}/{topic.namespace}")
    return topic


def test_with_the_namespace_switch_off_a_delayed_message_on_shared_comes_at_once(engine):
    topic = namespace_topic(engine)
    engine.namespaces.set_delayed_delivery(
        topic.tenant, topic.namespace, {"active": False, "tickTime": 1000}
    )
    subs = engine.subscriptions
    c = subs.subscribe(topic, "sh", "c", "Shared", earliest=True)
    engine.producer.publish(topic, delayed_entry(b"now", now_ms() + 60_000))

    assert payloads(subs.receive(topic, "sh", c.consumer_id, 10, 0)) == [b"now"]
    assert cursor_of(engine, topic, "sh")[1].delayed == {}


def test_a_namespace_tick_sets_the_due_buckets(engine):
    topic = namespace_topic(engine)
    engine.namespaces.set_delayed_delivery(
        topic.tenant, topic.namespace, {"active": True, "tickTime": 7000}
    )
    subs = engine.subscriptions
    c = subs.subscribe(topic, "sh", "c", "Shared", earliest=True)
    due = (now_ms() // 7000 + 5) * 7000 + 3500  # mid-tick: a 1 s tick would give another
    engine.producer.publish(topic, delayed_entry(b"later", due))

    assert subs.receive(topic, "sh", c.consumer_id, 10, 0) == []
    assert list(cursor_of(engine, topic, "sh")[1].delayed) == [due - 3500]


class LostTimers:
    """A timer starter whose executions never fire (failed, or never started)."""

    def __init__(self) -> None:
        self.started: list[int] = []

    def start(self, pk: str, subscription: str, timer_id: str, bucket_ms: int) -> bool:
        self.started.append(bucket_ms)
        return True


def test_a_bucket_whose_timer_never_fires_is_released_after_the_grace(
    settings, topic, engine_clients
):
    clock = {"now": 1_800_000_000_000}
    lost = LostTimers()
    engine = Engine.build(
        dataclasses.replace(
            settings, delayed_delivery_tick_ms=TICK, delayed_delivery_release_grace_ms=30_000
        ),
        runtime=Runtime(now_ms=lambda: clock["now"]),
        clients=engine_clients,
        starter=lost,
    )
    subs = engine.subscriptions
    c = subs.subscribe(topic, "sh", "c", "Shared", earliest=True)
    due = clock["now"] + 2000
    engine.producer.publish(topic, delayed_entry(b"stranded", due))

    assert subs.receive(topic, "sh", c.consumer_id, 10, 0) == []
    assert lost.started == [due]
    clock["now"] = due + 30_000  # overdue, but not by more than the grace
    assert subs.receive(topic, "sh", c.consumer_id, 10, 0) == []
    clock["now"] += 1
    got = subs.receive(topic, "sh", c.consumer_id, 10, 0)

    assert payloads(got) == [b"stranded"] and [d.redelivery_count for d in got] == [0]
    assert cursor_of(engine, topic, "sh")[1].delayed == {}


def test_stats_count_the_entries_waiting_in_the_delayed_set_per_subscription(engine, make_entry):
    base = TopicName.parse(f"persistent://public/default/dls-{uuid.uuid4().hex[:8]}")
    engine.topics.create(base, 2)
    subs = engine.subscriptions
    due = now_ms() + 60_000
    batch = [
        EntryMessage(payload=b"b%d" % i, sequence_id=i, publish_time_ms=1, deliver_at_ms=due)
        for i in range(2)
    ]
    for i in range(2):
        part = base.partition(i)
        c = subs.subscribe(part, "sh", "c", "Shared", earliest=True)
        subs.subscribe(part, "ex", "x", "Exclusive", earliest=True)
        engine.producer.publish(part, encode_entry(batch, producer_name="d"))
        engine.producer.publish(part, make_entry(b"now"))
        engine.producer.publish(part, delayed_entry(b"one", due))
        assert payloads(subs.receive(part, "sh", c.consumer_id, 10, 0)) == [b"now"]

    one = engine.admin.stats(base.partition(0), partitioned=False)["subscriptions"]
    total = engine.admin.stats(base, partitioned=True)["subscriptions"]

    # msgDelayed counts entries (a batch counts once), msgBacklog messages (issue 11, defect 9)
    assert (one["sh"]["msgDelayed"], one["ex"]["msgDelayed"]) == (2, 0)
    assert (total["sh"]["msgDelayed"], total["ex"]["msgDelayed"]) == (4, 0)
    assert one["sh"]["msgBacklog"] == 4  # the batch's 2, "now" (unacked) and "one"


def test_a_timer_of_a_short_wait_runs_as_express_and_of_a_long_wait_as_standard(
    engine, topic, make_entry, aws_clients, local_stack
):
    """Express executions are billed by the second waited: cheaper than Standard's
    transitions below ~70 s (``TimerKinds``); the express timer really releases."""
    subs = engine.subscriptions
    c = subs.subscribe(topic, "kinds", "c", "Shared", earliest=True)
    soon = now_ms() + 2 * TICK
    engine.producer.publish(topic, delayed_entry(b"soon", soon))
    engine.producer.publish(topic, make_entry(b"nacked"))
    got = subs.receive(topic, "kinds", c.consumer_id, 10, 0)
    assert payloads(got) == [b"nacked"]
    subs.negative_acknowledge(topic, "kinds", c.consumer_id, entry_ids(got), 600_000)  # 10 min
    pk, state = cursor_of(engine, topic, "kinds")
    assert state.delayed_count() == 2
    _, again = receive_until(subs, topic, "kinds", c.consumer_id, 20)
    assert payloads(again) == [b"soon"]
    buckets = sorted(state.delayed)
    express = timer_executions(aws_clients.stepfunctions, local_stack,
                               "TIMER_EXPRESS_STATE_MACHINE_ARN")  # fmt: skip
    standard = timer_executions(aws_clients.stepfunctions, local_stack, "TIMER_STATE_MACHINE_ARN")
    names = [execution_name(pk, "kinds", state.timer_id, b) for b in buckets]
    assert [n for n in express if n in names] == [names[0]]
    assert [n for n in standard if n in names] == [names[1]]
