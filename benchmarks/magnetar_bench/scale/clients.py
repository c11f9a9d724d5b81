"""Producers and consumers as the SDK behaves, driving the services through the model's
Lambda functions with the SDK's request shapes.

- ``send`` (one message per request): the SDK's ``producer.send()``: one request, wait for
  its answer, then the next; a retryable failure (503, 429, 5xx) is retried after the
  SDK's jittered backoff (0.1 s doubling to 5 s) within the send timeout (30 s).
- batched: each request carries one entry of ``batch`` messages (the SDK's batch container
  flushed by count or its 128 KB limit).
- consumers: ``receive`` requests of ``maxMessages`` = 1 (no prefetch: ``receive()`` one
  message at a time) or the receiver queue's free space (prefetch, 1000), ``waitMs`` 5000
  (the SDK's long-poll); the application takes each message at once and acks it; acks are
  grouped as the SDK groups them (one ``ack`` request per 100 ms or per 1000 acks).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from magnetar_bench.scale.lambdas import GatewayTimeout, LambdaThrottled
from magnetar_bench.scale.world import World
from magnetar_core.domain.errors import MagnetarError
from magnetar_core.engine import Engine
from magnetar_core.services.entries import DeliveredEntry, delivered_messages
from magnetar_wire import EntryMessage, encode_entry, format_message_id

SEND_TIMEOUT_MS = 30_000
RETRY_BASE_MS, RETRY_CAP_MS = 100.0, 5_000.0
RECEIVE_WAIT_MS = 5_000
RECEIVER_QUEUE = 1000
ACK_GROUP_MS, ACK_GROUP_MAX = 100.0, 1000
FAILURES = (MagnetarError, LambdaThrottled, GatewayTimeout)
"""What a client sees as a failed request (the service's errors, the edge's 503s)."""


def failed(world: World, error: Exception) -> None:
    if world.in_window():
        status = getattr(error, "status", 500)
        world.tally.errors[f"{status} {getattr(error, 'code', type(error).__name__)}"] += 1


def sdk_backoff_ms(world: World, attempt: int) -> float:
    ceiling = min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** min(attempt, 30))
    return world.sim.rng.uniform(ceiling / 2, ceiling)


@dataclass
class ProducerSpec:
    """``batch`` messages per request of ``payload_bytes`` each; ``keys`` distinct keys
    (0: no key); ``interval_ms`` between sends (0: as fast as answers come)."""

    batch: int = 1
    payload_bytes: int = 100
    keys: int = 0
    interval_ms: float = 0.0
    pipelined: bool = False
    """``send_async`` (``pipeline``): arrivals every ``interval_ms``, every queued entry in
    the next request."""


def producer(world: World, index: int, spec: ProducerSpec) -> None:
    """One producer sending until the run stops."""
    sim, name = world.sim, f"p{index}"
    sequence = 0
    while not sim.stopping:
        started = sim.now_ms
        now = int(world.runtime.now_ms())
        messages, payloads, keys = [], [], []
        for i in range(spec.batch):
            payload = f"{index}:{sequence + i}"
            key = f"k{(sequence + i) % spec.keys}" if spec.keys else None
            body = payload.encode().ljust(spec.payload_bytes, b".")
            messages.append(EntryMessage(payload=body, sequence_id=sequence + i,
                                         publish_time_ms=now, key=key))  # fmt: skip
            payloads.append(payload)
            keys.append(key or "")
        entry = encode_entry(messages, producer_name=name, batched=spec.batch > 1)
        _send(world, entry, payloads, keys, started)
        sequence += spec.batch
        if spec.interval_ms:
            sim.sleep(max(0.0, started + spec.interval_ms - sim.now_ms))


def _send(world: World, entry: bytes, payloads: list[str], keys: list[str], started: float) -> None:
    sim, attempt = world.sim, 0
    while True:
        try:
            result = world.lambdas.invoke(
                "produce", lambda engine: engine.producer.publish(world.topic, entry)
            )
        except FAILURES as error:
            failed(world, error)
            if sim.now_ms - started >= SEND_TIMEOUT_MS or sim.stopping:
                for payload in payloads:
                    world.record.send_failed(payload)
                if world.in_window():  # what the application sees: the send failed
                    world.tally.errors["send failed (Timeout)"] += len(payloads)
                return
            sim.sleep(sdk_backoff_ms(world, attempt))
            attempt += 1
            continue
        batched = len(payloads) > 1
        for i, (payload, key) in enumerate(zip(payloads, keys, strict=True)):
            position = (result.partition, result.ledger_id, result.entry_id, i if batched else -1)
            world.record.sent(payload, key, position)
        if world.in_window():
            world.tally.done += len(payloads)
            world.tally.last_ms = sim.now_ms
            world.tally.send_ms.append(sim.now_ms - started)
        return


@dataclass
class ConsumerSpec:
    subscription: str = "scale"
    prefetch: bool = False


def consumer(world: World, index: int, spec: ConsumerSpec) -> None:
    """One consumer receiving and acking until the run stops, then closing."""
    sim, sub = world.sim, spec.subscription
    trace = world.traces.enter(f"c{index}")
    handle = world.lambdas.invoke(
        "consumers",
        lambda e: e.subscriptions.subscribe(world.topic, sub, f"c{index}", world.sub_type, True),
    )
    consumer_id, closed = handle.consumer_id, [False]
    pending: list[tuple[str, str]] = []
    sim.spawn(_ack_flusher, world, sub, consumer_id, pending, closed)
    attempt = 0
    while not sim.stopping:
        want = RECEIVER_QUEUE if spec.prefetch else 1
        started = sim.now_ms
        trace.receive_started()
        try:
            delivered = world.lambdas.invoke("receive", _receiving(world, sub, consumer_id, want))
            attempt = 0
            trace.receive_done(started, sim.now_ms, sum(1 for _ in delivered_messages(delivered)))
        except FAILURES as error:
            failed(world, error)
            sim.sleep(sdk_backoff_ms(world, attempt))
            attempt += 1
            continue
        if delivered:
            world.delivering()
        for d, _, batch_index, message in delivered_messages(delivered):
            payload = message.payload.rstrip(b".").decode()
            position = (d.partition, d.ledger_id, d.entry_id, batch_index)
            world.record.delivered(sub, payload, message.key or "", position, d.redelivery_count)
            if payload in world.acked_at[sub]:
                world.after_ack.append(f"{sub}: {payload} at {position}")
            if world.in_window():
                world.tally.done += 1
                world.tally.last_ms = sim.now_ms
                world.tally.shares[f"c{index}"] += 1
                # published in the window too: not the preloaded backlog, and not what waited
                # behind the warm-up's cold starts
                if world.published_in_window(message.publish_time_ms):
                    world.tally.publish_to_receive_ms.append(
                        world.runtime.now_ms() - message.publish_time_ms
                    )
            world.record.ack_requested(sub, payload)
            pending.append(
                (format_message_id(d.ledger_id, d.entry_id, d.partition, batch_index), payload)
            )
    closed[0] = True
    _flush(world, sub, consumer_id, pending)
    _close(world, sub, consumer_id)


def _close(world: World, sub: str, consumer_id: str) -> None:
    """Close the consumer, retrying a failure as ``_flush`` does (32 consumers closing at
    once can outlast botocore's retries on the cursor item's key)."""
    attempt = 0
    while True:
        try:
            world.lambdas.invoke(
                "consumers", lambda e: e.subscriptions.close(world.topic, sub, consumer_id)
            )
            return
        except FAILURES as error:
            failed(world, error)
            world.sim.sleep(sdk_backoff_ms(world, attempt))
            attempt += 1


def _receiving(
    world: World, sub: str, consumer_id: str, want: int
) -> Callable[[Engine], list[DeliveredEntry]]:
    return lambda e: e.subscriptions.receive(world.topic, sub, consumer_id, want, RECEIVE_WAIT_MS)


def _acking(world: World, sub: str, consumer_id: str, ids: list[str]) -> Callable[[Engine], int]:
    return lambda e: e.subscriptions.acknowledge(world.topic, sub, consumer_id, ids, False)


def _ack_flusher(
    world: World, sub: str, consumer_id: str, pending: list, closed: list[bool]
) -> None:
    while not closed[0]:
        world.sim.sleep(ACK_GROUP_MS)
        if pending and not closed[0]:
            _flush(world, sub, consumer_id, pending)


def _flush(world: World, sub: str, consumer_id: str, pending: list) -> None:
    attempt = 0
    while pending:
        group = pending[:ACK_GROUP_MAX]
        del pending[:ACK_GROUP_MAX]
        ids = [message_id for message_id, _ in group]
        try:
            world.lambdas.invoke("ack", _acking(world, sub, consumer_id, ids))
        except FAILURES as error:
            failed(world, error)
            pending[:0] = group
            world.sim.sleep(sdk_backoff_ms(world, attempt))
            attempt += 1
            continue
        for _, payload in group:
            world.acked_at[sub][payload] = world.sim.now_ms
