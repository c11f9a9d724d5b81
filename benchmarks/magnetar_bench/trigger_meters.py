"""What ``magnetar perf triggers`` measures while a trigger delivers: what the target saw
(``Seen``), the AWS requests of the trigger driver's threads (``driver_requests``) and the
driver's wakes, steps and time (``StepMeter``)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

DRIVER_THREADS = ("trigger-driver", "trigger-batch", "entry-get")
"""Threads whose AWS requests are the delivery's: the driver, its batches' workers, and the
entry readers (a receive of several entries reads them in an ``entry-get`` pool; the run has
no consumer but the trigger, so every entry read is the trigger's)."""


@dataclass
class Seen:
    """What the target function saw: each record's latency (ms), the ids, the calls."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    latencies_ms: list[float] = field(default_factory=list)
    ids: set[str] = field(default_factory=set)
    invocations: int = 0
    duplicates: int = 0
    last_ms: float = 0.0

    def handler(self, event: dict, _context: object) -> dict:
        """The target: notes each record, acknowledges the batch."""
        now_ms = time.time() * 1000
        with self.lock:
            self.invocations += 1
            self.last_ms = now_ms
            for record in event["records"]:
                if record["messageId"] in self.ids:
                    self.duplicates += 1
                    continue
                self.ids.add(record["messageId"])
                self.latencies_ms.append(now_ms - record["publishTime"])
        return {}

    def count(self) -> int:
        with self.lock:
            return len(self.ids)


@contextlib.contextmanager
def driver_requests() -> Iterator[Counter[str]]:
    """Counts the AWS requests the trigger driver's threads make within the block."""
    from magnetar_core.adapters.aws.clients import REQUESTS

    counted: Counter[str] = Counter()
    record = REQUESTS.record

    def record_driver(operation: str) -> None:
        if threading.current_thread().name.startswith(DRIVER_THREADS):
            counted[operation] += 1
        record(operation)

    REQUESTS.record = record_driver  # type: ignore[method-assign]
    try:
        yield counted
    finally:
        del REQUESTS.record  # the class's method again


@dataclass
class StepMeter:
    """Wraps a driver's ``run_topic`` and its engine's ``deliver_once``: wakes, steps,
    steps that moved nothing, and the seconds spent in ``run_topic`` (the fan-out's time)."""

    wakes: int = 0
    steps: int = 0
    idle_steps: int = 0
    seconds: float = 0.0

    @contextlib.contextmanager
    def attached(self, driver) -> Iterator[StepMeter]:
        """Meter ``driver`` within the block (its methods are restored after it)."""
        run_topic, deliver_once = driver.run_topic, driver.engine.delivery.deliver_once

        def timed_run(topic):
            start = time.perf_counter()
            try:
                return run_topic(topic)
            finally:
                self.wakes += 1
                self.seconds += time.perf_counter() - start

        def counted_step(trigger):
            outcome = deliver_once(trigger)
            self.steps += 1
            self.idle_steps += not outcome.progressed
            return outcome

        driver.run_topic = timed_run
        driver.engine.delivery.deliver_once = counted_step
        try:
            yield self
        finally:
            del driver.run_topic, driver.engine.delivery.deliver_once  # the classes' again
