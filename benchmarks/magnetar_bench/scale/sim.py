"""The model's virtual clock: a discrete-event scheduler of cooperative green threads.

Every actor (a client, an ack flusher, a Lambda invocation's caller) is a greenlet. The
only way virtual time passes is ``Simulation.sleep``: the caller is parked on a heap at
``now + ms`` and the scheduler resumes the earliest parked actor. Python's own speed never
shows on the clock: a store call modelled at 5 ms takes 5 ms of virtual time whether the
engine code around it ran for 1 µs or 1 ms of real time. Ties are broken by the order the
actors were parked, and every random draw comes from one ``random.Random(seed)``, so a run
is repeatable from its seed.

The engine's services are synchronous code; they see this clock through the ``Runtime``
(``now_ms``, ``monotonic_ms``, ``sleep_ms``, ``new_id``, the retry backoff's rng), so their
backoffs and long-poll checks advance virtual time too.
"""

from __future__ import annotations

import heapq
import itertools
import random
from collections.abc import Callable
from typing import Any

import greenlet

from magnetar_core.domain.runtime import JitterBackoff, Runtime

EPOCH_MS = 1_700_000_000_000
"""Wall-clock milliseconds at virtual time 0 (what ``Runtime.now_ms`` adds)."""


class Simulation:
    """One run's clock, scheduler and random source."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.now_ms = 0.0
        self.stopping = False
        """Set when the measured window ends: actors finish what they do and stop."""
        self._parked: list[tuple[float, int, greenlet.greenlet]] = []
        self._order = itertools.count()
        self._hub: greenlet.greenlet | None = None

    def spawn(self, fn: Callable[..., Any], *args: Any) -> None:
        """Start ``fn(*args)`` as an actor at the current virtual time."""
        actor = greenlet.greenlet(lambda: fn(*args), parent=self._hub or greenlet.getcurrent())
        heapq.heappush(self._parked, (self.now_ms, next(self._order), actor))

    def sleep(self, ms: float) -> None:
        """Let ``ms`` of virtual time pass for the calling actor; outside any actor (setting
        a run up, checking it afterwards: nothing else runs) the clock just moves on."""
        if self._hub is None or greenlet.getcurrent() is self._hub:
            self.now_ms += max(ms, 0.0)
            return
        at = self.now_ms + max(ms, 0.0)
        heapq.heappush(self._parked, (at, next(self._order), greenlet.getcurrent()))
        self._hub.switch()

    def run(self, until_ms: float) -> None:
        """Resume actors in virtual-time order until none is left or the next is due after
        ``until_ms``; an actor's exception propagates."""
        self._hub = greenlet.getcurrent()
        while self._parked and self._parked[0][0] <= until_ms:
            at, _, actor = heapq.heappop(self._parked)
            self.now_ms = at
            actor.switch()
        if self._parked:
            self.now_ms = max(self.now_ms, until_ms)

    @property
    def idle(self) -> bool:
        """No actor is left."""
        return not self._parked

    def runtime(self) -> Runtime:
        """The engine's clocks, sleep, ids and backoff on this simulation."""
        rng = self.rng
        return Runtime(
            now_ms=lambda: int(EPOCH_MS + self.now_ms),
            monotonic_ms=lambda: self.now_ms,
            sleep_ms=self.sleep,
            new_id=lambda: f"{rng.getrandbits(64):016x}",
            backoff=JitterBackoff(rng=rng),
        )
