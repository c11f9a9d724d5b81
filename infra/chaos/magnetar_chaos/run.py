"""One chaos run: a workload under a fault plan, then the model's invariants.

``chaos_run(client, workload, ...)`` drives the workload (swapping one consumer of every
subscription once ``swap_at`` of the messages are acked), waits until every confirmed send
is acked on every subscription (or ``deadline_s``, or, with ``stall_s``, until nothing was
delivered, acked or nacked for that long: a hang), stops, takes what is left, reads back
the topic and its stats, and returns the report: counts, faults injected, gateway answers,
invariants.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import magnetar as pulsar
from magnetar_chaos.faults import FaultInjector
from magnetar_chaos.model import Model
from magnetar_chaos.observer import GatewayObserver
from magnetar_chaos.workload import Running, Workload, position_of


def chaos_run(
    client: pulsar.Client,
    workload: Workload,
    *,
    injector: FaultInjector | None = None,
    observer: GatewayObserver | None = None,
    swap_at: float | None = 0.25,
    deadline_s: float = 300.0,
    stall_s: float | None = None,
    during: Callable[[Running, Model], None] | None = None,
) -> dict[str, Any]:
    """Run ``workload``; ``during(running, model)`` is called about every 0.2 s while it
    runs (soak: churn, restarts). Returns the report (``report["ok"]``: every invariant
    held and the workload finished; ``report["stalled"]``: it stopped because nothing moved
    for ``stall_s`` seconds, not because ``deadline_s`` passed, which on a loaded machine
    only says it was slow: what is left is taken by ``drain_leftovers`` and checked all
    the same)."""
    model = Model(partitions=workload.partitions)
    started = time.monotonic()
    running = Running(client, workload, model).start()
    subs = workload.subscription_types()
    swapped = swap_at is None
    deadline = started + deadline_s
    sends_done_s = None
    next_stats = 0.0
    moved, moved_at, stalled = -1, started, False
    while time.monotonic() < deadline:
        if (now_moved := model.activity()) != moved:
            moved, moved_at = now_moved, time.monotonic()
        elif stall_s is not None and time.monotonic() - moved_at >= stall_s:
            stalled = True
            break
        if time.monotonic() >= next_stats:
            watch_backlogs(client, workload, subs, model)
            next_stats = time.monotonic() + 2.0
        if sends_done_s is None and running.producers_done(0.01):
            sends_done_s = time.monotonic() - started
        if sends_done_s is not None and model.done(list(subs)):
            break
        progress = min(model.progress(list(subs)).values())
        if swap_at is not None and not swapped and progress >= swap_at * workload.messages:
            for sub in subs:
                running.swap(sub)
            swapped = True
        if during is not None:
            during(running, model)
        time.sleep(0.2)
    timed_out = not (running.producers_done(0.01) and model.done(list(subs)))
    drained_s = time.monotonic() - started
    if injector is not None:
        injector.enabled = False  # the read-back below is not part of the experiment
    running.stop()
    running.producers_done(60)  # a slow run's sends end before the drain (a hang guard)
    leftovers = drain_leftovers(client, workload, model)
    read_back(client, workload, model)
    stats = _stats(client, workload, subs)
    results = model.check(
        subs, observer.acked_then_dispatched() if observer is not None else None, stats
    )
    return {
        "ok": all(r["ok"] for r in results.values()) and not timed_out,
        "timed_out": timed_out,
        "stalled": stalled,
        "seconds": {
            "sends": round(sends_done_s or drained_s, 1),
            "drained": round(drained_s, 1),
            "last_moved": round(moved_at - started, 1),
        },
        "workload": {
            "messages": workload.messages,
            "partitions": workload.partitions,
            "producers": workload.producers,
            "subscriptions": subs,
            "consumers_per_subscription": workload.consumers_per_subscription,
            "nack_rate": workload.nack_rate,
            "topic": workload.full_topic,
        },  # fmt: skip
        "counts": {**model.counts(), "drained_at_end": leftovers},
        "faults": injector.summary() if injector is not None else None,
        "gateway": observer.summary() if observer is not None else None,
        "invariants": results,
        "errors": running.errors[:20],
    }


def watch_backlogs(
    client: pulsar.Client, workload: Workload, subs: dict[str, str], model: Model
) -> None:
    """Note any negative ``msgBacklog`` the stats show now (a failed stats call is skipped:
    the stats request is under injection too)."""
    path = workload.admin_path + ("/partitioned-stats" if workload.partitions > 0 else "/stats")
    try:
        stats = client._t.call("GET", path)
    except pulsar.PulsarException:
        return
    for sub in subs:
        backlog = stats["subscriptions"].get(sub, {}).get("msgBacklog", 0)
        if backlog < 0:
            model.negative_backlogs.append(f"{sub}: {backlog}")


def drain_leftovers(client: pulsar.Client, workload: Workload, model: Model) -> dict[str, int]:
    """After the workload: one consumer per subscription takes and acks whatever is still
    unacknowledged (messages whose ack was lost with its consumer: at-least-once; the rest
    of a run stopped at its deadline), until every confirmed send is acked (each receive
    waiting up to 30 s: a hang guard) and then nothing comes for 2 s; returns how many per
    subscription (recorded as deliveries)."""
    from magnetar_chaos.workload import TYPES, position_of

    taken: dict[str, int] = {}
    for sub, kind in workload.subscription_types().items():
        consumer = client.subscribe(workload.full_topic, sub, consumer_type=TYPES[kind])
        taken[sub] = 0
        try:
            while True:
                msg = consumer.receive(2000 if model.done([sub]) else 30_000)
                model.delivered(sub, msg.data().decode(), msg.partition_key(),
                                position_of(msg.message_id()), msg.redelivery_count())  # fmt: skip
                consumer.acknowledge(msg)
                model.ack_requested(sub, msg.data().decode())
                taken[sub] += 1
        except pulsar.Timeout:
            pass
        finally:
            consumer.close()
    return taken


def read_back(client: pulsar.Client, workload: Workload, model: Model) -> None:
    """Count what the topic holds, by (producer name, sequence id), with readers from the
    earliest message of every partition."""
    topics = (
        [f"{workload.full_topic}-partition-{p}" for p in range(workload.partitions)]
        if workload.partitions > 0
        else [workload.full_topic]
    )
    for p, topic in enumerate(topics):
        reader = client.create_reader(topic, pulsar.MessageId.earliest)
        try:
            while reader.has_message_available():
                msg = reader.read_next(10_000)
                model.stored[(msg.producer_name(), msg.sequence_id())] += 1
                model.stored_messages += 1
                model.read_back(msg.data().decode(), position_of(msg.message_id()),
                                p if workload.partitions > 0 else -1)  # fmt: skip
        finally:
            reader.close()


def _stats(client: pulsar.Client, workload: Workload, subs: dict[str, str]) -> dict[str, Any]:
    """The topic's (partitioned) stats once the consumers' acks have landed: polled until
    the backlogs are 0 or 10 s passed (acks are grouped and sent in the background)."""
    path = workload.admin_path + ("/partitioned-stats" if workload.partitions > 0 else "/stats")
    deadline = time.monotonic() + 10
    while True:
        stats: dict[str, Any] = client._t.call("GET", path)
        backlogs = [stats["subscriptions"].get(s, {}).get("msgBacklog", 0) for s in subs]
        if all(b == 0 for b in backlogs) or time.monotonic() > deadline:
            return stats
        time.sleep(0.2)
