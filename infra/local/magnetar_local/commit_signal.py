"""The local stack's commit signal: one per process, shared by every handler container.

Each container builds its own engine from the environment (``COMMIT_SIGNAL=local``, set by
``LocalStack``); ``magnetar_core.engine.commit_signal_of`` imports ``SHARED`` from here, so
a commit in a produce container wakes the long-polls waiting in receive containers, as
nothing on AWS can (there, waits poll: ``magnetar_core.domain.check_interval``). Several
stacks in one process share it too: their log keys may coincide, which costs at most a
spurious wake (one extra head check), never a lost one.

``WAKES`` is the handlers' ``TriggerWakes`` here (moto's Step Functions cannot run the wake
workflow): a wake a handler asks for (a trigger or function written, a function started,
a value produced by ``functions trigger``) goes to the trigger drivers of the process at
once, for the topics they drive.
"""

from __future__ import annotations

import threading
from typing import Protocol

from magnetar_core.adapters.memory.commit_signal import CommitSignal

__all__ = ["SHARED", "WAKES"]


class Driver(Protocol):
    def wake_known(self, topic: str) -> None: ...


class LocalWakes:
    """``ports.TriggerWakes`` in-process: wakes the registered drivers now (a wake before
    its time is harmless: a step finds nothing due and the driver waits for its due
    time)."""

    def __init__(self) -> None:
        self._drivers: list[Driver] = []
        self._lock = threading.Lock()

    def add(self, driver: Driver) -> None:
        with self._lock:
            self._drivers.append(driver)

    def remove(self, driver: Driver) -> None:
        with self._lock:
            if driver in self._drivers:
                self._drivers.remove(driver)

    def wake_at(self, topic: str, at_ms: int) -> None:
        with self._lock:
            drivers = list(self._drivers)
        for driver in drivers:
            driver.wake_known(topic)


SHARED = CommitSignal()
"""The process's signal."""

WAKES = LocalWakes()
"""The process's trigger wakes."""
