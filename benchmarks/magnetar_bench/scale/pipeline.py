"""The SDK's ``send_async`` without batching: messages arrive at a steady rate into the
producer's queue; one request is in flight at a time and carries every entry queued by
then (up to 100, a multi-entry request: ``application/vnd.magnetar.entries``), as the
SDK's sender pipelines (``magnetar._producer.pipeline``). An entry that failed goes back to the
queue's front with those after it, in order, and is resent after the SDK's backoff."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from magnetar_bench.scale.clients import FAILURES, ProducerSpec, failed, sdk_backoff_ms
from magnetar_bench.scale.world import World
from magnetar_core.engine import Engine
from magnetar_core.services.entries import PublishResult
from magnetar_core.services.produce.many import ManyResult
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.frames import MAX_ENTRIES_PER_REQUEST, encode_frames

QUEUE_POLL_MS = 1.0
"""How often an idle sender looks at its queue (virtual ms)."""

Queued = tuple[str, str, bytes, float]  # payload, key, entry, when it was sent (virtual ms)


def pipelined_producer(world: World, index: int, spec: ProducerSpec) -> None:
    """One producer: an arrival every ``spec.interval_ms``, sent pipelined."""
    queue: deque[Queued] = deque()
    world.sim.spawn(_arrivals, world, index, spec, queue)
    attempt = 0
    while not world.sim.stopping or queue:
        if not queue:
            world.sim.sleep(QUEUE_POLL_MS)
            continue
        batch = [queue.popleft() for _ in range(min(len(queue), MAX_ENTRIES_PER_REQUEST))]
        try:
            result = world.lambdas.invoke("produce", _many(world, [q[2] for q in batch]))
        except FAILURES as error:
            failed(world, error)
            queue.extendleft(reversed(batch))
            world.sim.sleep(sdk_backoff_ms(world, attempt))
            attempt += 1
            continue
        committed = 0
        for queued, outcome in zip(batch, result.results, strict=True):
            if not isinstance(outcome, PublishResult):
                break
            _confirmed(world, queued, outcome)
            committed += 1
        if committed < len(batch):
            failed(world, _EntryFailed(result.results[committed]))
            queue.extendleft(reversed(batch[committed:]))
            world.sim.sleep(sdk_backoff_ms(world, attempt))
            attempt += 1
        else:
            attempt = 0


class _EntryFailed(Exception):
    def __init__(self, failure: object) -> None:
        super().__init__(str(failure))
        self.code = getattr(failure, "code", "UnknownError")
        self.status = getattr(failure, "status", 500)


def _many(world: World, entries: list[bytes]) -> Callable[[Engine], ManyResult]:
    body = encode_frames(entries)
    return lambda engine: engine.produce_many.publish(world.topic, body)


def _confirmed(world: World, queued: Queued, result: PublishResult) -> None:
    payload, key, _, sent_ms = queued
    world.record.sent(payload, key, (result.partition, result.ledger_id, result.entry_id, -1))
    if world.in_window():
        world.tally.done += 1
        world.tally.last_ms = world.sim.now_ms
        world.tally.send_ms.append(world.sim.now_ms - sent_ms)


def _arrivals(world: World, index: int, spec: ProducerSpec, queue: deque[Queued]) -> None:
    sequence = 0
    while not world.sim.stopping:
        payload = f"{index}:{sequence}"
        key = f"k{sequence % spec.keys}" if spec.keys else ""
        message = EntryMessage(payload=payload.encode().ljust(spec.payload_bytes, b"."),
                               sequence_id=sequence, key=key or None,
                               publish_time_ms=int(world.runtime.now_ms()))  # fmt: skip
        queue.append(
            (payload, key, encode_entry([message], producer_name=f"p{index}"), world.sim.now_ms)
        )
        sequence += 1
        world.sim.sleep(spec.interval_ms)
