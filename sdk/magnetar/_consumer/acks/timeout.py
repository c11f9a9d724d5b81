"""The ack timeout, checked once per tick as Pulsar's ``UnAckedMessageTracker`` does: a
message handed to the application at ``t`` goes back at the first tick instant at or after
``t + timeout`` (so within ``timeout + tick``). Times are seconds of the tracker's clock.
Not thread-safe: the ``AckTracker`` calls it under its lock.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from magnetar.message_id import MessageId

if TYPE_CHECKING:
    from magnetar._consumer.sub import Sub

__all__ = ["UnackedTimeouts"]


class UnackedTimeouts:
    """Deliveries not acknowledged yet, by (sub-consumer, id text); ``timeout`` 0: off."""

    def __init__(self, timeout: float, tick: float, epoch: float) -> None:
        self.timeout = timeout
        self._tick = min(tick, timeout) if timeout else 0.0
        self._epoch = epoch  # tick instants are epoch + k * tick
        # (sub, id text) -> (handed out, id, the redelivery count it came with if known)
        self._since: dict[tuple[Sub, str], tuple[float, MessageId, int | None]] = {}

    def handed(self, sub: Sub, texts: list[str], msg_id: MessageId, now: float,
               seen: int | None = None) -> None:  # fmt: skip
        """The message ``msg_id`` (its id ``texts``) was handed to the application, with
        redelivery count ``seen`` (kept for a single-entry message only)."""
        if self.timeout:
            for text in texts:
                self._since[(sub, text)] = (now, msg_id, seen if len(texts) == 1 else None)

    def settled(self, sub: Sub, text: str) -> None:
        """The message with id ``text`` was acknowledged or negatively acknowledged."""
        self._since.pop((sub, text), None)

    def settled_up_to(self, sub: Sub, msg_id: MessageId) -> None:
        """Everything of ``sub`` up to ``msg_id`` was acknowledged (cumulatively)."""
        for key in [k for k, v in self._since.items() if k[0] is sub and v[1] <= msg_id]:
            del self._since[key]

    def clear(self) -> None:
        """Forget every delivery."""
        self._since.clear()

    def expired(self, now: float) -> dict[Sub, dict[str, int | None]]:
        """Remove and return the deliveries whose timeout passed by the last tick: per
        sub-consumer, id text -> the redelivery count it came with (None: unknown)."""
        if not self.timeout or not self._since:
            return {}
        tick = self._epoch + math.floor((now - self._epoch) / self._tick + 1e-9) * self._tick
        due: dict[Sub, dict[str, int | None]] = {}
        for key, (since, _, seen) in list(self._since.items()):
            if since + self.timeout <= tick + 1e-9:
                del self._since[key]
                due.setdefault(key[0], {})[key[1]] = seen
        return due

    def next_check(self) -> float | None:
        """The tick instant at which the oldest delivery times out (None: nothing tracked)."""
        if not self.timeout or not self._since:
            return None
        first = min(since for since, _, _ in self._since.values()) + self.timeout
        return self._epoch + math.ceil((first - self._epoch) / self._tick - 1e-9) * self._tick
