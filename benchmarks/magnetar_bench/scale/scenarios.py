"""The scale scenarios and how one runs: set up (free of time and cost), a warm-up, the
measured window, the clients' stop, then a drain of what is left so that the chaos model's
invariants can be checked on the whole run's trace."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from magnetar_bench.scale.clients import ConsumerSpec, ProducerSpec, consumer, producer
from magnetar_bench.scale.pipeline import pipelined_producer
from magnetar_bench.scale.profile import Profile
from magnetar_bench.scale.report import figures
from magnetar_bench.scale.world import World
from magnetar_core.services.entries import delivered_messages, entry_bytes
from magnetar_wire import EntryMessage, decode_entry, encode_entry, format_message_id

CHECK_SUBSCRIPTION = "check"
"""The subscription a produce-only run drains afterwards: every confirmed send must be there."""
STOP_MS = 60_000
"""How long clients get to finish after the window (virtual)."""
BACKLOG_KEYS = 1000


@dataclass(frozen=True)
class Scenario:
    """``producers`` sending as ``producer`` says; ``consumers`` of one ``sub_type``
    subscription (``prefetch``: receiver queue, else one message per receive) draining a
    ``backlog`` of messages stored before the window (keyed over ``BACKLOG_KEYS`` keys)."""

    name: str
    producers: int = 0
    producer: ProducerSpec = field(default_factory=ProducerSpec)
    consumers: int = 0
    sub_type: str = "Shared"
    prefetch: bool = False
    backlog: int = 0
    steady: bool = False
    """For a backlog's drain: the window opens a warm-up after the first delivery (the
    consumers' cold starts and first grants excluded, as benchmarks exclude warm-up), not
    at it; the backlog is sized to outlast warm-up and window."""


def _produce(name: str, producers: int, batch: int = 1) -> Scenario:
    return Scenario(name, producers=producers, producer=ProducerSpec(batch=batch))


def _consume(
    kind: str, consumers: int, prefetch: bool, backlog: int, steady: bool = False
) -> Scenario:
    mode = "prefetch" if prefetch else "1-per-receive"
    name = f"{kind.lower()}-{consumers}-{mode}{'-steady' if steady else ''}"
    return Scenario(name, consumers=consumers, sub_type=kind, prefetch=prefetch,
                    backlog=backlog, steady=steady)  # fmt: skip


STEADY_BACKLOG = 12_000
"""A one-message-a-receive drain measured at steady state: more than 1 s of warm-up and a 5 s
window take at 2,000 msg/s."""


SCENARIOS: dict[str, Scenario] = {s.name: s for s in [
    *(_produce(f"produce-{n}", n) for n in (1, 8, 64, 256)),
    _produce("produce-batched-8x500", 8, batch=500),
    *(_consume(kind, n, prefetch, backlog)
      for kind in ("Shared", "Key_Shared") for n in (1, 8, 32)
      for prefetch, backlog in ((False, 3000), (True, 40_000))),
    _consume("Shared", 32, False, STEADY_BACKLOG, steady=True),
    _consume("Key_Shared", 32, False, STEADY_BACKLOG, steady=True),
    _consume("Key_Shared", 32, True, 40_000, steady=True),
    Scenario("latency-500-per-s", producers=5, consumers=8, prefetch=True,
             producer=ProducerSpec(interval_ms=10.0, pipelined=True)),
    Scenario("latency-500-per-s-50-send", producers=50, consumers=8, prefetch=True,
             producer=ProducerSpec(interval_ms=100.0)),
]}  # fmt: skip


TARGETS = ("produce-64", "produce-256", "produce-batched-8x500", "shared-32-1-per-receive",
           "shared-32-1-per-receive-steady", "key_shared-32-1-per-receive",
           "key_shared-32-1-per-receive-steady", "key_shared-32-prefetch",
           "key_shared-32-prefetch-steady", "latency-500-per-s")  # fmt: skip
"""The scenarios of the scale targets (docs/benchmarks.md): ``--scenarios targets``. The
consumers' rows come twice: from the first delivery (cold starts inside the window) and at
steady state (``-steady``: after a warm-up)."""


def run(scenario: Scenario, seed: int = 1, duration_s: float = 5.0, warmup_s: float = 1.0,
        profile: Profile | None = None) -> dict[str, Any]:  # fmt: skip
    """Run one scenario on a fresh model; its figures and the invariants' results."""
    world = World(seed, profile or Profile(), sub_type=scenario.sub_type)
    subscription = "scale" if scenario.consumers else CHECK_SUBSCRIPTION
    _subscribe(world, subscription)
    _preload(world, scenario.backlog)
    for i in range(scenario.producers):
        send = pipelined_producer if scenario.producer.pipelined else producer
        world.sim.spawn(send, world, i, scenario.producer)
    for i in range(scenario.consumers):
        world.sim.spawn(consumer, world, i, ConsumerSpec(subscription, scenario.prefetch))
    start_ms, end_ms = _window(world, scenario, warmup_s * 1000, duration_s * 1000)
    world.sim.run(end_ms)
    world.counting(False)
    dry = (
        bool(scenario.backlog)
        and not scenario.producers
        and _ran_dry(world, subscription, scenario.backlog)
    )
    world.sim.stopping = True
    world.sim.run(end_ms + STOP_MS)
    window_s = duration_s
    if dry:  # the window ends with the backlog's last message
        window_s = max(world.tally.last_ms - start_ms, 1.0) / 1000
    drained = _drain(world, subscription)
    _count_stored(world)
    invariants = world.record.check(
        {subscription: scenario.sub_type}, world.after_ack, _stats(world)
    )
    result = {"scenario": scenario.name, "seed": seed, "window_s": round(window_s, 3),
              **figures(world, window_s, scenario.consumers)}  # fmt: skip
    result["key_shared_order_breaks"] = (
        invariants["key_order"]["by_subscription"].get(subscription, 0)
        if scenario.sub_type == "Key_Shared" else None
    )  # fmt: skip
    result["drained_after_window"] = drained
    first = world.first_delivery_ms
    result["window_after_first_delivery_s"] = (
        round((start_ms - first) / 1000, 3) if first is not None and scenario.backlog else None
    )
    if scenario.consumers:
        result["consumers"] = world.traces.report(first)
    result["invariants"] = {name: check["ok"] for name, check in invariants.items()}
    result["invariant_details"] = {n: c for n, c in invariants.items() if not c["ok"]}
    return result


def _window(
    world: World, scenario: Scenario, warmup_ms: float, duration_ms: float
) -> tuple[float, float]:
    """Run up to the measured window's start and open it: after ``warmup_ms``, or for a
    backlog drained by consumers alone at the first delivery (the backlog would otherwise
    be spent before; ``steady``: a warm-up after the first delivery). Returns the window."""
    if scenario.backlog and not scenario.producers:
        world.drain_window_ms = None if scenario.steady else duration_ms
        world.window = (float("inf"), float("inf"))
        while world.first_delivery_ms is None and world.sim.now_ms < STOP_MS and not world.sim.idle:
            world.sim.run(world.sim.now_ms + 10.0)
        if world.first_delivery_ms is None:  # nothing was ever delivered: an empty window
            world.open_window(duration_ms)
        elif scenario.steady:  # nothing counted before: warm-up from the first delivery
            world.sim.run(world.first_delivery_ms + warmup_ms)
            world.open_window(duration_ms)
        return world.window
    world.sim.run(warmup_ms)
    world.open_window(duration_ms)
    return world.window


def _ran_dry(world: World, subscription: str, backlog: int) -> bool:
    """Every message of the backlog was delivered on ``subscription`` by now."""
    return len({d[0] for d in world.record.deliveries[subscription]}) >= backlog


def _subscribe(world: World, subscription: str) -> None:
    """Create the subscription at the start of the topic (and the topic), free."""
    world.aws.free = True
    subs = world.admin.subscriptions
    handle = subs.subscribe(world.topic, subscription, "setup", world.sub_type, True)
    subs.close(world.topic, subscription, handle.consumer_id)
    world.aws.free = False


def _preload(world: World, messages: int) -> None:
    """Store ``messages`` one-message entries before the run, free (producer ``-1``)."""
    world.aws.free = True
    for i in range(messages):
        payload, key = f"-1:{i}", f"k{i % BACKLOG_KEYS}"
        message = EntryMessage(payload=payload.encode(), sequence_id=i, key=key,
                               publish_time_ms=int(world.runtime.now_ms()))  # fmt: skip
        result = world.admin.producer.publish(
            world.topic, encode_entry([message], producer_name="preload")
        )
        world.record.sent(payload, key, (result.partition, result.ledger_id, result.entry_id, -1))
    world.aws.free = False


def _stats(world: World) -> dict[str, Any]:
    """The topic's stats once drained (free): every backlog 0, ``msgInCounter`` = stored."""
    world.aws.free = True
    try:
        return world.admin.stats.partition_stats(
            world.admin.topics.resolve(world.topic, create=False)
        )
    finally:
        world.aws.free = False


def _count_stored(world: World) -> None:
    """Read the whole log back (free): every stored message's (producer, sequence id) into
    the trace, for ``stored_once``."""
    world.aws.free = True
    ref = world.admin.topics.resolve(world.topic, create=False)
    for item in world.memory.log.read_from(ref.key, 0, 10**9):
        if item.count == 0 or item.fence:
            continue
        entry = decode_entry(entry_bytes(world.memory.entries, item))
        for message in entry.messages:
            world.record.stored[(entry.producer_name, message.sequence_id)] += 1
            world.record.stored_messages += 1
    world.aws.free = False


def _drain(world: World, subscription: str) -> int:
    """Receive and ack what is left on ``subscription`` (free), into the trace."""
    world.aws.free = True
    subs, drained = world.admin.subscriptions, 0
    consumer_id = subs.subscribe(
        world.topic, subscription, "drain", world.sub_type, True
    ).consumer_id
    while delivered := subs.receive(world.topic, subscription, consumer_id, 1000, 0):
        ids = []
        for d, _, batch_index, message in delivered_messages(delivered):
            payload = message.payload.rstrip(b".").decode()
            position = (d.partition, d.ledger_id, d.entry_id, batch_index)
            if payload in world.acked_at[subscription]:
                world.after_ack.append(f"{subscription}: {payload} at {position} (drain)")
            world.record.delivered(subscription, payload, message.key or "", position,
                                   d.redelivery_count)  # fmt: skip
            ids.append(format_message_id(d.ledger_id, d.entry_id, d.partition, batch_index))
            drained += 1
        subs.acknowledge(world.topic, subscription, consumer_id, ids, False)
    world.aws.free = False
    return drained
