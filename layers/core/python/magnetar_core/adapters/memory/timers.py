"""In-memory delay timers: the redelivery-timer workflow without Step Functions.

``start`` records one timer per (partition ledger, subscription, timer id, bucket), by the
workflow's deterministic execution name. When the runtime's clock reaches a bucket, the
timer releases it the way ``infra/statemachines/redelivery-timer.asl.json`` does: through
``CursorStore.release`` (add the bucket to the cursor's released set, bump its version; a
deleted cursor is left alone). ``release_due`` does that for every due timer; a background
thread (``run`` / ``stop``) calls it as the clock passes the next due bucket.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from magnetar_core.adapters.memory.cursors import CursorStore
from magnetar_core.domain.timers import execution_input, execution_name


@dataclass(frozen=True)
class _Timer:
    pk: str
    subscription: str
    bucket_ms: int


class TimerStarter:
    """Starts (records) and fires the timers of due buckets on a memory ``CursorStore``."""

    def __init__(self, cursors: CursorStore, now_ms: Callable[[], int]) -> None:
        self._cursors = cursors
        self._now_ms = now_ms
        self._started: set[str] = set()
        self._pending: dict[str, _Timer] = {}
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopping = False

    def start(self, pk: str, subscription: str, timer_id: str, bucket_ms: int) -> bool:
        """Start the timer that releases ``bucket_ms`` (epoch ms) on cursor ``(pk,
        subscription)``; True if started now, False if it already existed (a retried start).
        The workflow's input is built as the AWS adapter builds it (the same values fail)."""
        name = execution_name(pk, subscription, timer_id, bucket_ms)
        execution_input(pk, subscription, bucket_ms)
        with self._cond:
            if name in self._started:
                return False
            self._started.add(name)
            self._pending[name] = _Timer(pk, subscription, bucket_ms)
            self._cond.notify_all()
        return True

    def pending(self) -> list[tuple[str, str, int]]:
        """``(pk, subscription, bucket_ms)`` of timers not fired yet, by bucket."""
        with self._cond:
            timers = list(self._pending.values())
        return sorted((t.pk, t.subscription, t.bucket_ms) for t in timers)

    def release_due(self) -> int:
        """Fire every timer whose bucket the clock has reached; returns how many fired."""
        now = self._now_ms()
        with self._cond:
            due = {n: t for n, t in self._pending.items() if t.bucket_ms <= now}
            for name in due:
                del self._pending[name]
        for timer in sorted(due.values(), key=lambda t: t.bucket_ms):
            self._cursors.release(timer.pk, timer.subscription, timer.bucket_ms)
        return len(due)

    def run(self, poll_ms: int = 50) -> TimerStarter:
        """Fire timers in a daemon thread as they fall due, checking the clock at least
        every ``poll_ms`` (the clock may be a fake one that jumps). Returns self."""
        with self._cond:
            if self._thread is not None:
                return self
            self._stopping = False
            self._thread = threading.Thread(
                target=self._loop, args=(poll_ms,), name="memory-timers", daemon=True
            )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the background thread (idempotent)."""
        with self._cond:
            thread, self._thread = self._thread, None
            self._stopping = True
            self._cond.notify_all()
        if thread is not None:
            thread.join()

    def _loop(self, poll_ms: int) -> None:
        while True:
            self.release_due()
            with self._cond:
                if self._stopping:
                    return
                wait_ms = poll_ms
                if self._pending:
                    soonest = min(t.bucket_ms for t in self._pending.values())
                    wait_ms = max(0, min(poll_ms, soonest - self._now_ms()))
                if wait_ms:
                    self._cond.wait(wait_ms / 1000)
