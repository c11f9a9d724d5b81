"""Delay timers, pure: due buckets, execution names and inputs of the timer workflow.

A message (or a negatively acknowledged entry) that must wait goes into its cursor's delayed
set under a *due bucket*; one Step Functions execution per (partition ledger, subscription,
bucket) waits until the bucket is due and then adds the bucket to the cursor item's released
set ``rel`` (see ``infra/statemachines/redelivery-timer.asl.json``). Buckets are epoch
milliseconds, always whole seconds (the emulator's Wait truncates fractions of a second).

Pulsar's rules (``delayedDeliveryTickTimeMillis``, ``isDelayedDeliveryDeliverAtTimeStrict``):
by default a message may go out up to one tick early (its bucket is the tick it falls in);
in strict mode never early (its bucket is the next tick boundary at or after its time).

Every function here is total over Java longs: a time or delay of any int64 gives a bucket
of at most ``MAX_BUCKET_MS`` (a time beyond waits there) and an execution input Step
Functions takes (``dueAt`` at most 9999-12-31T23:59:59Z). A Standard execution lives at most a
year, so no timer is started for a bucket more than ``TIMER_HORIZON_MS`` ahead
(``beyond_horizon``); such a bucket is released by the overdue rule (``release_grace_ms``).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from datetime import UTC, datetime

SECOND_MS = 1000
DAY_MS = 24 * 3600 * SECOND_MS
INT64_MAX = 2**63 - 1
"""The largest time or delay taken (ms): a Java long, as in Pulsar."""
MAX_BUCKET_MS = INT64_MAX // SECOND_MS * SECOND_MS
"""The latest bucket (epoch ms): the last whole second within a Java long."""
TIMER_HORIZON_MS = 360 * DAY_MS
"""How far ahead a timer may wait: Step Functions Standard runs an execution for at most a
year (365 days), less a margin for the start and the release."""
_MAX_ISO_SECONDS = int(datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp())


@dataclass(frozen=True)
class TimerOptions:
    """Delayed delivery and nack-delay knobs: ``tick_ms`` in milliseconds (>= 1).

    ``enabled`` False (or no state machine) delivers delayed messages at once, as Pulsar's
    ``delayedDeliveryEnabled=false`` does; nack delays then become immediate redeliveries.
    ``release_grace_ms``: a bucket overdue by more than this counts as released even if its
    timer never fired (a failed or lost execution strands nothing). ``horizon_ms``: no
    timer is started for a bucket further ahead than this (``TIMER_HORIZON_MS``).
    """

    tick_ms: int = 1000
    strict: bool = False
    enabled: bool = True
    release_grace_ms: int = 30_000
    horizon_ms: int = TIMER_HORIZON_MS

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
    later than ``now_ms`` whenever the result is not None (a ``now_ms`` at the very end of
    time aside), and at most ``MAX_BUCKET_MS``.
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
    return min(_ceil_to(bucket, SECOND_MS), MAX_BUCKET_MS)


def nack_bucket(now_ms: int, delay_ms: int, options: TimerOptions) -> int | None:
    """The bucket of an entry negatively acknowledged with ``delay_ms`` (strict: a nack
    delay is a minimum, up to ``MAX_BUCKET_MS``), or None for an immediate redelivery."""
    if delay_ms <= 0:
        return None
    due = min(now_ms + delay_ms, MAX_BUCKET_MS)
    return due_bucket(due, min(now_ms, due - 1), TimerOptions(options.tick_ms, True))


def beyond_horizon(bucket_ms: int, now_ms: int, horizon_ms: int = TIMER_HORIZON_MS) -> bool:
    """Whether a timer for ``bucket_ms`` would wait longer than ``horizon_ms`` from
    ``now_ms`` (then none is started: the bucket is released once overdue)."""
    return bucket_ms - now_ms > horizon_ms


def execution_name(pk: str, subscription: str, timer_id: str, bucket_ms: int) -> str:
    """The deterministic execution name of one bucket's timer (<= 80 characters, letters,
    digits and ``-``): a retried start of the same timer is refused as already existing.
    ``timer_id`` tells apart cursors that reuse a deleted subscription's name."""
    digest = hashlib.sha256(f"{pk}\n{subscription}\n{timer_id}".encode()).hexdigest()[:40]
    return f"t{bucket_ms // SECOND_MS}-{digest}"


def iso_utc(epoch_ms: int) -> str:
    """``2026-11-21T16:30:00Z``: whole seconds (rounded up), UTC, the form Wait expects;
    clamped to 1970-01-01T00:00:00Z .. 9999-12-31T23:59:59Z (any int64 is accepted)."""
    seconds = min(max(_ceil_to(epoch_ms, SECOND_MS) // SECOND_MS, 0), _MAX_ISO_SECONDS)
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
    Raises ValueError for a negative minimum, a maximum below it or a multiplier below 1 or
    not finite."""

    min_delay_ms: int = 1000
    max_delay_ms: int = 60_000
    multiplier: float = 2.0

    def __post_init__(self) -> None:
        if self.min_delay_ms < 0 or self.max_delay_ms < self.min_delay_ms:
            raise ValueError("backoff needs 0 <= minDelayMs <= maxDelayMs")
        if not math.isfinite(self.multiplier) or self.multiplier < 1:
            raise ValueError("backoff multiplier must be a finite number >= 1")

    def delay_ms(self, redelivery_count: int) -> int:
        """The delay before redelivery number ``redelivery_count + 1`` (ms, at most
        ``max_delay_ms``; a product too big for a float is the maximum)."""
        if redelivery_count <= 0:
            return self.min_delay_ms
        exponent = min(redelivery_count, 64)
        try:
            delay = self.min_delay_ms * self.multiplier**exponent
        except OverflowError:
            return self.max_delay_ms
        return self.max_delay_ms if delay >= self.max_delay_ms else int(delay)


@dataclass(frozen=True)
class TimerKinds:
    """Which workflow waits for a due bucket. An Express execution is billed $1.00 per
    million starts plus its duration (64 MB at $0.00001667 per GB-s: ~$1.04 per million
    for each second waited); a Standard one $0.025 per thousand state transitions (3 for
    a timer: $75 per million) whatever it waits. Express is cheaper while the wait is under
    ~70 s and can wait 5 minutes at most, so it takes waits up to ``express_max_wait_ms``
    (default 60 s; 0: Standard always)."""

    express_max_wait_ms: int = 60 * SECOND_MS

    def express(self, bucket_ms: int, now_ms: int) -> bool:
        """Whether the timer of ``bucket_ms`` (epoch ms), started at ``now_ms``, runs as
        an Express execution."""
        return bucket_ms - now_ms <= self.express_max_wait_ms
