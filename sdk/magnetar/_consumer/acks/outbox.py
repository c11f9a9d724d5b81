"""The requests of acks and nacks waiting to be sent, in order, per sub-consumer.

A sub-consumer's requests go out strictly in the order they were made (an ack retried
later never lands after a nack made after it: the service would send the entry back with
the acknowledged messages). After a retryable failure the sub-consumer's queue waits a
jittered, bounded backoff (``JitteredBackoff``) before the failed request is sent again.
Only one sender works on a sub-consumer at a time (``take`` marks it busy until ``done``).
Not thread-safe: the ``AckTracker`` calls it under its lock.
"""

from __future__ import annotations

import collections
from typing import TYPE_CHECKING

from magnetar._transport.failures import JitteredBackoff

if TYPE_CHECKING:
    from magnetar._consumer.sub import Sub

__all__ = ["Outbox", "Request"]

Request = tuple[str, dict]  # (action, body) of one POST .../{action}


class Outbox:
    """Per sub-consumer FIFO queues of requests, with retry times."""

    def __init__(self, backoff: JitteredBackoff) -> None:
        self._backoff = backoff
        self._queues: dict[Sub, collections.deque[Request]] = {}
        self._retry_at: dict[Sub, float] = {}
        self.attempts: dict[Sub, int] = {}  # failed attempts in a row
        self._busy: set[Sub] = set()

    def add(self, sub: Sub, action: str, body: dict) -> None:
        """Queue one request after the sub-consumer's earlier ones."""
        self._queues.setdefault(sub, collections.deque()).append((action, body))

    def take(self, now: float, force: bool = False) -> list[tuple[Sub, list[Request]]]:
        """Every queue that may be sent now (its backoff is over, or ``force``) and that no
        other sender works on; they are busy until ``done``."""
        out = []
        for sub, queue in list(self._queues.items()):
            if sub in self._busy or (not force and self._retry_at.get(sub, 0.0) > now):
                continue
            out.append((sub, list(queue)))
            del self._queues[sub]
            self._busy.add(sub)
        return out

    def done(self, sub: Sub, unsent: list[Request], now: float) -> None:
        """A sender finished ``sub``; ``unsent`` (from the request that failed on) goes back
        to the front of its queue, to be tried again after the backoff."""
        self._busy.discard(sub)
        if not unsent:
            self.attempts.pop(sub, None)
            self._retry_at.pop(sub, None)
            return
        queue = self._queues.setdefault(sub, collections.deque())
        queue.extendleft(reversed(unsent))
        attempt = self.attempts.get(sub, 0)
        self.attempts[sub] = attempt + 1
        self._retry_at[sub] = now + self._backoff.delay(attempt)

    def next_at(self) -> float | None:
        """When the earliest queue may be sent (None: nothing queued but busy ones)."""
        times = [self._retry_at.get(s, 0.0) for s in self._queues if s not in self._busy]
        return min(times, default=None)

    def pending(self) -> bool:
        """Whether any request waits or is being sent."""
        return bool(self._queues or self._busy)

    def busy(self) -> bool:
        """Whether a sender works on some sub-consumer now."""
        return bool(self._busy)

    def drain(self) -> list[tuple[Sub, list[Request]]]:
        """Remove and return every queued request (they will not be sent)."""
        out = [(sub, list(queue)) for sub, queue in self._queues.items()]
        self._queues.clear()
        self._retry_at.clear()
        self.attempts.clear()
        return out
