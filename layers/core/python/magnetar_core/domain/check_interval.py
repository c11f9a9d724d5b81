"""How long a long-poll waits between head checks when no commit can wake it (AWS: Lambda
containers share no memory, so a commit in one never reaches a wait in another).

The interval adapts to the partition's recent activity: right after a delivery (or a check
that found an entry) messages are likely to follow within milliseconds, so the wait checks
every ``min_ms``; the longer nothing happened, the longer the pause, up to ``max_ms`` (the
``RECEIVE_CHECK_INTERVAL_MS`` of before, so an idle consumer costs no more than it did:
``60_000 / max_ms`` GetItems per idle minute).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CheckInterval:
    """The pause before the next head check, in ms, from the time since the last activity.

    ``pause_ms(idle_ms)`` is ``idle_ms * idle_fraction`` clamped to ``[min_ms, max_ms]``;
    ``max_ms`` when nothing happened yet (``idle_ms`` None). With the defaults (20, 100,
    0.25) a wait checks every 20 ms for the first 80 ms after activity, then backs off to
    100 ms by 400 ms: about 7 more GetItems than fixed 100 ms checks per burst of activity,
    and the same ones per idle minute. Raises ValueError for bounds that make no sense.
    """

    min_ms: float = 20.0
    max_ms: float = 100.0
    idle_fraction: float = 0.25

    def __post_init__(self) -> None:
        if not 0 < self.min_ms <= self.max_ms:
            raise ValueError(
                f"The check interval needs 0 < min_ms <= max_ms, not {self.min_ms} and "
                f"{self.max_ms}: set RECEIVE_CHECK_MIN_INTERVAL_MS at most "
                "RECEIVE_CHECK_INTERVAL_MS"
            )
        if self.idle_fraction <= 0:
            raise ValueError(f"idle_fraction must be positive, not {self.idle_fraction}")

    def pause_ms(self, idle_ms: float | None) -> float:
        """The pause (ms) before the next check, ``idle_ms`` after the last activity (None:
        no activity known)."""
        if idle_ms is None:
            return self.max_ms
        return max(self.min_ms, min(self.max_ms, max(idle_ms, 0.0) * self.idle_fraction))
