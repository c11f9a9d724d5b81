"""Delay timers as a use case: buckets by the options and the clock (domain.timers), and
the start of one timer workflow execution per new bucket through the TimerStarter port.

Nothing here fails a dispatch for one entry or one bucket: an entry whose due bucket cannot
be computed goes out at once, a bucket beyond the timer horizon gets no execution, and a
timer that cannot be started (other than for throttling) is left to the overdue rule
(``TimerOptions.release_grace_ms``); each is logged with its entry ids.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import replace
from itertools import islice
from typing import TYPE_CHECKING

from magnetar_core.domain import metering
from magnetar_core.domain.errors import StorageFault
from magnetar_core.domain.timers import (
    NackBackoff,
    TimerOptions,
    beyond_horizon,
    due_bucket,
    nack_bucket,
)
from magnetar_core.ports import TimerStarter

if TYPE_CHECKING:
    from magnetar_core.domain.cursor.state import CursorState
    from magnetar_core.domain.log import IndexEntry

log = logging.getLogger("magnetar.timers")


class DelayTimers:
    """Buckets by the options and the clock, and starts of the timers of new buckets.

    ``starter`` is the TimerStarter port (``adapters.aws.timers`` on AWS; None: no state
    machine configured — then nothing is ever delayed); ``now_ms`` the clock (epoch ms).
    """

    def __init__(
        self, options: TimerOptions, starter: TimerStarter | None, now_ms: Callable[[], int]
    ) -> None:
        self.options = options
        self._starter = starter
        self._now_ms = now_ms

    @property
    def active(self) -> bool:
        """Whether delays are honoured (enabled and a state machine to run the timers)."""
        return self.options.enabled and self._starter is not None

    def due_of(
        self, entries: Iterable[IndexEntry], now_ms: int, tick_ms: int | None = None
    ) -> dict[int, int]:
        """``{entry_id: bucket}`` of the index entries whose ``deliver_at_ms`` is still to
        come (delayed delivery: Shared and Key_Shared callers only), bucketed by ``tick_ms``
        (a namespace's tick; None: the options'). An entry whose bucket cannot be computed
        (a corrupt index item) is logged and left out: it goes out at once."""
        if not self.active:
            return {}
        options = self.options
        if tick_ms is not None and tick_ms != options.tick_ms:
            options = replace(options, tick_ms=tick_ms)
        out: dict[int, int] = {}
        for entry in entries:
            try:
                bucket = due_bucket(entry.deliver_at_ms, now_ms, options)
            except (TypeError, ValueError, OverflowError) as exc:
                log.error(
                    "entry %s: deliverAt %r cannot be placed in a delay bucket (%s); "
                    "delivered at once", entry.entry_id, entry.deliver_at_ms, exc,
                )  # fmt: skip
                continue
            if bucket is not None:
                out[entry.entry_id] = bucket
        return out

    def nack_buckets(
        self, delay_ms: int, backoff: NackBackoff | None
    ) -> Callable[[int], int | None] | None:
        """A ``bucket_of(redelivery_count)`` for a nack delayed by ``delay_ms`` or by
        ``backoff`` (which wins), or None for an immediate redelivery."""
        if not self.active or (delay_ms <= 0 and backoff is None):
            return None
        now = self._now_ms()

        def bucket_of(count: int) -> int | None:
            delay = backoff.delay_ms(count) if backoff is not None else delay_ms
            return nack_bucket(now, delay, self.options)

        return bucket_of

    def start_new(self, pk: str, state: CursorState, before: set[int], new_id: str) -> int:
        """Start the timers of buckets in ``state.delayed`` that were not in ``before`` (call
        before writing the cursor: a lost write only leaves a harmless spare release). Sets
        ``state.timer_id`` to ``new_id`` when it has none. Returns how many were new
        executions. A bucket beyond the timer horizon starts none, and one whose start
        fails is logged and skipped: either is released once overdue by the grace. Raises
        TooManyRequests (throttling: the caller's change is retried later)."""
        fresh = sorted(set(state.delayed) - before)
        if not fresh or self._starter is None:
            return 0
        if not state.timer_id:
            state.timer_id = new_id
        now = self._now_ms()
        started = 0
        for bucket in fresh:
            if beyond_horizon(bucket, now, self.options.horizon_ms):
                continue  # Step Functions cannot wait that long; the overdue rule releases it
            try:
                started += self._starter.start(pk, state.subscription, state.timer_id, bucket)
            except (StorageFault, ValueError, OverflowError) as exc:
                log.error(
                    "timer of bucket %s of %s on %s (entries %s) not started: %s; released "
                    "once overdue", bucket, state.subscription, pk,
                    list(islice(state.delayed[bucket], 20)), exc,
                )  # fmt: skip
        metering.count(metering.TIMER_STARTS, started)
        return started
