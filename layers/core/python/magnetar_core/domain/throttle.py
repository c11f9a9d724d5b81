"""Rate limiters and the backlog quota check, pure: time is passed in (ms).

``TokenBucket`` refills ``permits`` every ``period_ms`` continuously, holds at most one
period's worth, and admits a request while it holds any permit at all, going into debt for
the rest (as Pulsar's limiters let a large batch through, then hold the next ones): so a
batch larger than the bucket still passes, and the long-run rate is the configured one.
``Limiter`` pairs a message bucket with a byte bucket (either may be off). ``backlog_exceeded``
decides a BacklogQuota against a measured backlog. Not thread-safe: callers lock.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from magnetar_core.domain.quotas import BacklogQuota


class TokenBucket:
    """``permits`` per ``period_ms`` (> 0), starting full at ``now_ms``."""

    def __init__(self, permits: float, period_ms: float, now_ms: float) -> None:
        if permits <= 0 or period_ms <= 0:
            raise ValueError("a token bucket needs permits > 0 and period_ms > 0")
        self.permits = permits
        self.period_ms = period_ms
        self._tokens = float(permits)
        self._at_ms = now_ms

    def _refill(self, now_ms: float) -> None:
        elapsed = max(0.0, now_ms - self._at_ms)
        self._tokens = min(self.permits, self._tokens + elapsed * self.permits / self.period_ms)
        self._at_ms = max(self._at_ms, now_ms)

    def tokens(self, now_ms: float) -> float:
        """The permits held now (negative: in debt)."""
        self._refill(now_ms)
        return self._tokens

    def wait_ms(self, now_ms: float) -> float:
        """How long until the bucket holds a permit again (0: it holds one now)."""
        tokens = self.tokens(now_ms)
        if tokens > 0:
            return 0.0
        return (1e-9 - tokens) * self.period_ms / self.permits

    def take(self, n: float, now_ms: float) -> None:
        """Spend ``n`` permits, into debt if need be."""
        self._refill(now_ms)
        self._tokens -= n


@dataclass
class Limiter:
    """A message bucket and a byte bucket (None: that rate is not limited)."""

    messages: TokenBucket | None
    bytes: TokenBucket | None

    @classmethod
    def of(cls, msgs: int, size_bytes: int, period_ms: float, now_ms: float) -> Limiter | None:
        """A limiter of ``msgs`` and ``size_bytes`` per ``period_ms`` (<= 0: unlimited);
        None when neither is limited."""
        m = TokenBucket(msgs, period_ms, now_ms) if msgs > 0 else None
        b = TokenBucket(size_bytes, period_ms, now_ms) if size_bytes > 0 else None
        return None if m is None and b is None else cls(m, b)

    def wait_ms(self, now_ms: float) -> float:
        """0 when a request may go now, else ms until it may."""
        return max((b.wait_ms(now_ms) for b in (self.messages, self.bytes) if b), default=0.0)

    def allowance(self, wanted: int, now_ms: float) -> int:
        """How many messages of ``wanted`` may go now (0 while any bucket is in debt)."""
        if self.wait_ms(now_ms) > 0:
            return 0
        if self.messages is None:
            return wanted
        return max(1, min(wanted, math.floor(self.messages.tokens(now_ms))))

    def take(self, msgs: int, size_bytes: int, now_ms: float) -> None:
        """Spend what went: ``msgs`` messages of ``size_bytes`` in all."""
        if self.messages is not None:
            self.messages.take(msgs, now_ms)
        if self.bytes is not None:
            self.bytes.take(size_bytes, now_ms)


@dataclass(frozen=True)
class Backlog:
    """A measured backlog: its bytes and the publish time (ms) of its oldest message (0:
    empty), as of ``measured_ms``."""

    size_bytes: int
    oldest_publish_ms: int
    measured_ms: int


def backlog_exceeded(quota: BacklogQuota, quota_type: str, backlog: Backlog, now_ms: int) -> bool:
    """Whether ``backlog`` breaks ``quota`` of ``quota_type`` at ``now_ms``: destination_storage
    compares bytes with limitSize, message_age the oldest message's age with limitTime (s);
    -1 (or below 0) is no limit."""
    if quota_type == "destination_storage":
        return 0 <= quota.limit_size_bytes < backlog.size_bytes
    if quota.limit_time_s < 0 or backlog.oldest_publish_ms <= 0:
        return False
    return now_ms - backlog.oldest_publish_ms > quota.limit_time_s * 1000
