"""Delay timers, pure: due buckets, execution names and inputs of the timer workflow.

A message (or a negatively acknowledged entry) that must wait goes into its cursor's delayed
set under a *due bucket*; one Step Functions execution per (partition ledger, subscription,
bucket) waits until the bucket is due and then adds the bucket to the cursor item's released
set ``rel`` (see ``infra/statemachines/redelivery-timer.asl.json``). Buckets are epoch
milliseconds, always whole seconds (the emulator's Wait truncates fractions of a second).

Pulsar's rules (``delayedDeliveryTickTimeMillis``, ``isDelayedDeliveryDeliverAtTimeStrict``):
by default a message may go out up to one tick early (its bucket is the tick it falls in);
in strict mode never early (its bucket is the next tick boundary at or after its time).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from magnetar_core.ports import TimerStarter

if TYPE_CHECKING:
    from magnetar_core.domain.cursor.state import CursorState
    from magnetar_core.domain.log import IndexEntry

SECOND_MS = 1000


@dataclass(frozen=True)
class TimerOptions:
    """Delayed delivery and nack-delay knobs: ``tick_ms`` in milliseconds (>= 1).

    ``enabled`` False (or no state machine) delivers delayed messages at once, as Pulsar's
    ``delayedDeliveryEnabled=false`` does; nack delays then become immediate redeliveries.
    ``release_grace_ms``: a bucket overdue by more than this counts as released even if its
    timer never fired (a failed or lost execution strands nothing).
    """

    tick_ms: int = 1000
    strict: bool = False
    enabled: bool = True
    release_grace_ms: int = 30_000

    def __post_init__(self) -> None:
        if self.tick_ms < 1:
            raise ValueError(f"tick_ms must be >= 1, not {self.tick_ms}")
        if self.release_grace_ms < 0:
            raise ValueError(f"release_grace_ms must be >= 0, not {self.release_grace_ms}")


def _ceil_to(value: int, step: int) -> int:
    return -(-value // step) * step


def due_bucket(deliver_at_ms: int, now_ms: int, options: TimerOptions) -> int | None:
    """The bucket (epoch ms, whole seconds) a message due at ``deliver_at_ms`` waits in, or
    None when it may go out now.

    Default mode: the message is due once its tick (``deliver_at`` rounded down to the tick)
    has started — up to one tick early — and its bucket is that tick start, rounded up to
    whole seconds. Strict mode: due once ``deliver_at`` has passed; the bucket is the next
    tick boundary at or after it, rounded up to whole seconds. Either way the bucket is
    later than ``now_ms`` whenever the result is not None.
    """
    if deliver_at_ms <= 0:
        return None
    if options.strict:
        if deliver_at_ms <= now_ms:
            return None
        bucket = _ceil_to(deliver_at_ms, options.tick_ms)
    else:
        bucket = deliver_at_ms // options.tick_ms * options.tick_ms
        if bucket <= now_ms:
            return None
    return _ceil_to(bucket, SECOND_MS)


def nack_bucket(now_ms: int, delay_ms: int, options: TimerOptions) -> int | None:
    """The bucket of an entry negatively acknowledged with ``delay_ms`` (strict: a nack
    delay is a minimum), or None for an immediate redelivery."""
    if delay_ms <= 0:
        return None
    return due_bucket(now_ms + delay_ms, now_ms, TimerOptions(options.tick_ms, True))


def execution_name(pk: str, subscription: str, timer_id: str, bucket_ms: int) -> str:
    """The deterministic execution name of one bucket's timer (<= 80 characters, letters,
    digits and ``-``): a retried start of the same timer is refused as already existing.
    ``timer_id`` tells apart cursors that reuse a deleted subscription's name."""
    digest = hashlib.sha256(f"{pk}\n{subscription}\n{timer_id}".encode()).hexdigest()[:40]
    return f"t{bucket_ms // SECOND_MS}-{digest}"


def iso_utc(epoch_ms: int) -> str:
    """``2026-11-21T16:30:00Z``: whole seconds (rounded up), UTC, the form Wait expects."""
    seconds = _ceil_to(epoch_ms, SECOND_MS) // SECOND_MS
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def execution_input(pk: str, subscription: str, bucket_ms: int) -> str:
    """The workflow input: the cursor key, the bucket (also as the one-element string list
    DynamoDB's number-set ``ADD`` takes) and ``dueAt``."""
    return json.dumps(
        {
            "pk": pk,
            "sub": subscription,
            "bucket": bucket_ms,
            "buckets": [str(bucket_ms)],
            "dueAt": iso_utc(bucket_ms),
        },
        separators=(",", ":"),
    )


@dataclass(frozen=True)
class NackBackoff:
    """Pulsar's ``MultiplierRedeliveryBackoff``: ``min(max, min * multiplier**count)`` ms
    for a message redelivered ``count`` times (1, 2, 4, ... 32, 60, 60 s with the defaults).
    Raises ValueError for a negative minimum, a maximum below it or a multiplier below 1."""

    min_delay_ms: int = 1000
    max_delay_ms: int = 60_000
    multiplier: float = 2.0

    def __post_init__(self) -> None:
        if self.min_delay_ms < 0 or self.max_delay_ms < self.min_delay_ms:
            raise ValueError("backoff needs 0 <= minDelayMs <= maxDelayMs")
        if self.multiplier < 1:
            raise ValueError("backoff multiplier must be >= 1")

    def delay_ms(self, redelivery_count: int) -> int:
        """The delay before redelivery number ``redelivery_count + 1``."""
        if redelivery_count <= 0:
            return self.min_delay_ms
        exponent = min(redelivery_count, 64)
        return int(min(self.max_delay_ms, self.min_delay_ms * self.multiplier**exponent))


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
        (a namespace's tick; None: the options')."""
        if not self.active:
            return {}
        options = self.options
        if tick_ms is not None and tick_ms != options.tick_ms:
            options = replace(options, tick_ms=tick_ms)
        out: dict[int, int] = {}
        for entry in entries:
            bucket = due_bucket(entry.deliver_at_ms, now_ms, options)
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
        executions. Raises TooManyRequests, StorageFault."""
        fresh = sorted(set(state.delayed) - before)
        if not fresh or self._starter is None:
            return 0
        if not state.timer_id:
            state.timer_id = new_id
        return sum(self._starter.start(pk, state.subscription, state.timer_id, b) for b in fresh)
