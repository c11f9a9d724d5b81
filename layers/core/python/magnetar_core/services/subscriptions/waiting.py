"""The long-poll's wait for the next entry: woken by a commit where the platform allows
(``CommitSignal.wakes``: one process, locally), else polling the head at an interval that
adapts to the partition's recent activity (``domain.check_interval``: AWS).

A wait reads the signal's ``version`` before the check it follows (the dispatch's log read,
then each ``exists``), so a commit between the check and the wait ends the wait at once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from magnetar_core.domain.check_interval import CheckInterval
from magnetar_core.ports import CommitSignal
from magnetar_core.services.subscriptions.base import SubscriptionContext

ACTIVE_KEYS = 1024
"""Partitions whose last activity a container remembers (the least recent are forgotten)."""


class HeadWait:
    """Waits for the entry at a read position; remembers each partition's last activity
    (a delivery, or a check that found the entry) by the runtime's monotonic clock."""

    def __init__(self, context: SubscriptionContext, signal: CommitSignal | None = None) -> None:
        self._ctx = context
        self._signal = signal
        limits = context.limits
        self.interval = CheckInterval(
            min(limits.check_min_interval_ms, limits.check_interval_ms), limits.check_interval_ms
        )
        self._active_at: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def version(self, key: str) -> int:
        """The signal's version of ``key``: read it before the check a wait follows."""
        return 0 if self._signal is None else self._signal.version(key)

    def active(self, key: str) -> None:
        """Something was delivered from ``key`` now: check it often for a while."""
        now = self._ctx.runtime.monotonic_ms()
        with self._lock:
            self._active_at[key] = now
            self._active_at.move_to_end(key)
            while len(self._active_at) > ACTIVE_KEYS:
                self._active_at.popitem(last=False)

    def pause_ms(self, key: str) -> float:
        """How long to wait before the next check of ``key`` (ms): the full check interval
        when commits wake waits, else the adaptive one."""
        if self._signal is not None and self._signal.wakes:
            return self.interval.max_ms
        with self._lock:
            at = self._active_at.get(key)
        idle = None if at is None else self._ctx.runtime.monotonic_ms() - at
        return self.interval.pause_ms(idle)

    def until_more(
        self, key: str, read_position: int, deadline: float, seen: int, wake_at: int | None
    ) -> bool:
        """Wait until the entry at ``read_position`` exists, a cursor re-check is due (every
        ``cursor_recheck_every`` checks, or once the epoch-ms ``wake_at`` — the earliest
        delayed bucket — has come), or the monotonic-ms ``deadline`` passes (then False).
        ``seen``: the signal's version read before the dispatch's check. One small read
        per check that timed out; a wake returns at once (no read: the dispatch reads the
        log anyway). Raises what ``LogStore.exists`` raises."""
        limits, rt = self._ctx.limits, self._ctx.runtime
        for _ in range(limits.cursor_recheck_every):
            left = deadline - rt.monotonic_ms()
            if left <= 0:
                return False
            pause = min(self.pause_ms(key), left)
            now = rt.now_ms()
            if wake_at is not None and wake_at > now:  # overdue: poll at the check interval
                pause = min(pause, wake_at - now)
            woken = self._wait(key, seen, pause)
            if woken or (wake_at is not None and rt.now_ms() >= wake_at):
                return True  # woken: a commit came after the last look, the dispatch reads it
            seen = self.version(key)
            if self._ctx.log.exists(key, read_position):
                self.active(key)
                return True
        return True

    def _wait(self, key: str, seen: int, pause_ms: float) -> bool:
        """Wait ``pause_ms``; True when a commit to ``key`` ended the wait."""
        if self._signal is None:
            self._ctx.runtime.sleep_ms(pause_ms)
            return False
        return self._signal.wait(key, seen, pause_ms)
