"""Cumulative counters of the stats, pure: what the expire job folded of deleted entries
(``ExpiredTotals``, one record per ledger) and what a subscription dispatched
(``OutCounters``, kept in its cursor), with rates over the last completed minute.

Pulsar's ``msgInCounter``/``bytesInCounter`` never go down when old ledgers are trimmed, and
its rates are over the last stats interval (a minute by default). Here no counter costs a
write of its own: messages in are counted from the index when stats are asked for, plus the
totals the expire job folds before deleting index items; messages out ride on the cursor
write every dispatch makes anyway.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

RATE_WINDOW_MS = 60_000
"""Rates are per second over the last completed window of this length (epoch-aligned)."""


class EntryCounts(NamedTuple):
    """One index item as the stats see it: ``messages`` (0 for markers and chunks other than
    a message's last), ``size_bytes`` stored, ``publish_ms`` its earliest publish time."""

    entry_id: int
    messages: int
    size_bytes: int
    publish_ms: int


def last_window(now_ms: int) -> tuple[int, int]:
    """``[start_ms, end_ms)`` of the last completed rate window before ``now_ms``."""
    end = now_ms - now_ms % RATE_WINDOW_MS
    return end - RATE_WINDOW_MS, end


def per_second(amount: int) -> float:
    """``amount`` over one rate window, per second."""
    return amount * 1000 / RATE_WINDOW_MS


@dataclass
class ExpiredTotals:
    """Messages, bytes and entries of a ledger's entries at or below ``through`` that the
    expire job deleted (-1: none yet). Entries above ``through`` are counted from the index;
    entries at or below it only from here, even while their items are still there (a run
    that crashed between folding and deleting), so nothing counts twice."""

    through: int = -1
    messages: int = 0
    size_bytes: int = 0
    entries: int = 0

    def fold(self, rows: Iterable[EntryCounts], through: int) -> ExpiredTotals:
        """These totals plus the ``rows`` in ``(self.through, through]`` (others ignored),
        now covering everything up to ``through``; unchanged when ``through`` is not past
        ``self.through``."""
        if through <= self.through:
            return self
        kept = [r for r in rows if self.through < r.entry_id <= through]
        return ExpiredTotals(
            through,
            self.messages + sum(r.messages for r in kept),
            self.size_bytes + sum(r.size_bytes for r in kept),
            self.entries + sum(1 for r in kept if r.size_bytes > 0),
        )


@dataclass
class OutCounters:
    """A subscription's dispatched messages and bytes since it was created (redeliveries
    count again, as Pulsar's ``msgOutCounter``), and those of the current and previous rate
    windows (``window_ms``: the start of the current one, 0: none)."""

    messages: int = 0
    size_bytes: int = 0
    window_ms: int = 0
    window_messages: int = 0
    window_bytes: int = 0
    previous_messages: int = 0
    previous_bytes: int = 0

    def record(self, messages: int, size_bytes: int, now_ms: int) -> None:
        """Count one dispatch of ``messages`` messages in entries of ``size_bytes``."""
        window = now_ms - now_ms % RATE_WINDOW_MS
        if window != self.window_ms:
            adjacent = window - self.window_ms == RATE_WINDOW_MS
            self.previous_messages = self.window_messages if adjacent else 0
            self.previous_bytes = self.window_bytes if adjacent else 0
            self.window_ms, self.window_messages, self.window_bytes = window, 0, 0
        self.messages += messages
        self.size_bytes += size_bytes
        self.window_messages += messages
        self.window_bytes += size_bytes

    def last_window(self, now_ms: int) -> tuple[int, int]:
        """``(messages, bytes)`` dispatched in the last completed window before ``now_ms``."""
        start, _ = last_window(now_ms)
        if self.window_ms == start:
            return self.window_messages, self.window_bytes
        if self.window_ms == start + RATE_WINDOW_MS:
            return self.previous_messages, self.previous_bytes
        return 0, 0

    def to_list(self) -> list[int]:
        """A compact form for storage (``from_list`` reads it back)."""
        return [
            self.messages, self.size_bytes, self.window_ms, self.window_messages,
            self.window_bytes, self.previous_messages, self.previous_bytes,
        ]  # fmt: skip

    @classmethod
    def from_list(cls, values: list[int]) -> OutCounters:
        """Inverse of ``to_list``; ``[]`` (never dispatched) gives zeros."""
        return cls(*values)
