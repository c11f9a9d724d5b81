"""Small policy objects: retry backoff with jitter, and the clocks and id factories passed in."""

from __future__ import annotations

import random
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


@dataclass(frozen=True)
class Runtime:
    """What the engine takes from the world: time, sleeping and fresh ids (pass fakes in tests)."""

    now_ms: Callable[[], int] = field(default=lambda: int(time.time() * 1000))
    monotonic_ms: Callable[[], float] = field(default=lambda: time.monotonic() * 1000)
    sleep_ms: Callable[[float], None] = field(default=lambda ms: time.sleep(ms / 1000))
    new_id: Callable[[], str] = field(default=lambda: uuid.uuid4().hex)
    backoff: JitterBackoff = field(default_factory=JitterBackoff)
