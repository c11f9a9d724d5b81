"""Small policy objects: retry backoff with jitter, and the clocks and id factories passed in."""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class JitterBackoff:
    """Full-jitter exponential backoff for retrying lost optimistic writes.

    ``delay_ms(attempt)`` is uniform in ``[0, min(cap_ms, base_ms * 2**attempt)]``.
    """

    base_ms: float = 2.0
    cap_ms: float = 100.0
    rng: random.Random = field(default_factory=random.Random)

    def delay_ms(self, attempt: int) -> float:
        return self.rng.uniform(0, min(self.cap_ms, self.base_ms * (2 ** min(attempt, 16))))


class LedgerIds:
    """Ledger ids that never repeat, as BookKeeper's: ``epoch ms * 1000 + a counter``, each
    above the last this source gave out (a clock that steps back never makes one again).
    A topic (or partition) created again, or created again in a service that restarted
    with none of its state, gets a ledger id no earlier incarnation had, so its message
    ids are never another message's. Thread-safe."""

    PER_MS = 1000

    def __init__(self, now_ms: Callable[[], int] | None = None) -> None:
        self._now_ms = now_ms or (lambda: int(time.time() * 1000))
        self._last = 0
        self._lock = threading.Lock()

    def __call__(self) -> int:
        with self._lock:
            self._last = max(self._now_ms() * self.PER_MS, self._last + 1)
            return self._last


def numbered_ledgers() -> int:
    """A ledger source for test doubles only: each incarnation of a topic gets the last one's
    ledger + 1 (1 for the first), as long as its store remembers the last one, so tests can
    name ids (``1:0:-1:-1``); a store that forgets reuses them, so never in a service."""
    return 1


@dataclass(frozen=True)
class Runtime:
    """What the engine takes from the world: time, sleeping and fresh ids (pass fakes in
    tests); ``new_ledger_id`` gives a new topic or partition its ledger (``LedgerIds``)."""

    now_ms: Callable[[], int] = field(default=lambda: int(time.time() * 1000))
    monotonic_ms: Callable[[], float] = field(default=lambda: time.monotonic() * 1000)
    sleep_ms: Callable[[float], None] = field(default=lambda ms: time.sleep(ms / 1000))
    new_id: Callable[[], str] = field(default=lambda: uuid.uuid4().hex)
    new_ledger_id: Callable[[], int] = field(default_factory=LedgerIds)
    backoff: JitterBackoff = field(default_factory=JitterBackoff)
