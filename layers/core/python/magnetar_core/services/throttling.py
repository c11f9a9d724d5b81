"""Enforcing rate limits and backlog quotas with no AWS request per message (issue 14).

Per container (process), per partition log: the policies come from ``Quotas.applied``
(cached ``POLICY_CACHE_MS``); limiters are token buckets in memory (``domain.throttle``), each
at ``rate / containers`` where ``containers`` is the expected number of containers serving
one partition at once (``RATE_LIMIT_CONTAINERS``); the backlog is measured with one cursor
Query and one index Query at most every ``check_ms`` per partition while a backlog quota
applies, plus the bytes this container committed since. docs/architecture/quotas-and-capacity.md ("Quotas and
rate limits") states the error this allows.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from magnetar_core.domain.cursor.grants import fold_grants, hashes_loader
from magnetar_core.domain.errors import (
    ProducerBlockedQuotaExceededError,
    ProducerBlockedQuotaExceededException,
    Throttled,
)
from magnetar_core.domain.quotas import (
    DESTINATION_STORAGE,
    EVICTION,
    EXCEPTION,
    BacklogQuota,
    DispatchRate,
)
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.throttle import Backlog, Limiter, backlog_exceeded
from magnetar_core.ports import CursorStore, LogStore
from magnetar_core.services.quotas import Quotas
from magnetar_core.services.topics import PartitionRef
from magnetar_wire.names import TopicName

if TYPE_CHECKING:
    from magnetar_core.services.subscriptions.operations import CursorOperations


@dataclass
class _Measured:
    backlog: Backlog
    added_bytes: int = 0


class Throttling:
    """Admission for produce, subscribe and dispatch. ``containers`` (>= 1) divides every
    rate; ``check_ms``: how stale a measured backlog may get before it is measured again."""

    def __init__(
        self,
        quotas: Quotas,
        log: LogStore,
        cursors: CursorStore,
        runtime: Runtime,
        *,
        containers: int = 1,
        check_ms: int = 5_000,
        evictions: Callable[[], CursorOperations] | None = None,
    ) -> None:
        self._quotas = quotas
        self._log = log
        self._cursors = cursors
        self._rt = runtime
        self._containers = max(1, containers)
        self._check_ms = check_ms
        self._evictions = evictions
        self._limiters: dict[tuple, tuple[object, Limiter | None]] = {}
        self._backlogs: dict[str, _Measured] = {}
        self._lock = threading.Lock()

    def _limiter(
        self, key: tuple, rate: object, make: Callable[[float], Limiter | None]
    ) -> Limiter | None:
        """The limiter under ``key`` for ``rate`` (a new one when the rate changed)."""
        with self._lock:
            held = self._limiters.get(key)
            if held is None or held[0] != rate:
                held = (rate, make(self._rt.monotonic_ms()))
                self._limiters[key] = held
            return held[1]

    def _take(self, limiter: Limiter | None, messages: int, size_bytes: int) -> float:
        """Spend ``messages`` and ``size_bytes`` from ``limiter`` when it allows them now and
        return 0; else spend nothing and return the ms to wait (no limiter: 0)."""
        if limiter is None:
            return 0.0
        with self._lock:
            now = self._rt.monotonic_ms()
            wait_ms = limiter.wait_ms(now)
            if wait_ms <= 0:
                limiter.take(messages, size_bytes, now)
            return wait_ms

    def _share(self, limit: int) -> int:
        """This container's share of a limit (at least 1); -1 (no limit) for ``limit`` <= 0."""
        return max(1, limit // self._containers) if limit > 0 else -1

    def _dispatch_limiter(self, key: tuple, rate: DispatchRate | None) -> Limiter | None:
        if rate is None:
            return None
        return self._limiter(key, rate, lambda now: Limiter.of(
            self._share(rate.msgs_per_period), self._share(rate.bytes_per_period),
            rate.period_s * 1000, now))  # fmt: skip

    # ------------------------------------------------------------ produce
    def admit_publish(self, ref: PartitionRef, messages: int, size_bytes: int) -> None:
        """Let an entry of ``messages`` messages and ``size_bytes`` bytes go to ``ref``, or
        raise Throttled (429, retry after) past the publish rate,
        ProducerBlockedQuotaExceededError (429) past a producer_request_hold backlog quota,
        ProducerBlockedQuotaExceededException past a producer_exception one."""
        applied = self._quotas.applied(ref.topic)
        if applied.backlog_quotas:
            self._check_backlog(ref, applied.backlog_quotas)
        rate = applied.publish_rate
        if rate is None:
            return
        limiter = self._limiter(
            ("pub", ref.key),
            rate,
            lambda now: Limiter.of(
                self._share(rate.msgs_per_s), self._share(rate.bytes_per_s), 1000, now
            ),
        )
        wait_ms = self._take(limiter, messages, size_bytes)
        if wait_ms <= 0:
            return
        raise Throttled(
            f"{ref.topic} is above its publish rate ({rate.msgs_per_s} msg/s, "
            f"{rate.bytes_per_s} bytes/s); retry after {wait_ms:.0f} ms",
            retry_after_ms=int(wait_ms) + 1,
        )

    def committed(self, ref: PartitionRef, size_bytes: int) -> None:
        """An entry of ``size_bytes`` was committed to ``ref`` by this container."""
        with self._lock:
            measured = self._backlogs.get(ref.key)
            if measured is not None:
                measured.added_bytes += size_bytes

    def _check_backlog(
        self, ref: PartitionRef, quotas: tuple[tuple[str, BacklogQuota], ...]
    ) -> None:
        now_ms = self._rt.now_ms()
        backlog = self._backlog(ref, now_ms)
        for kind, quota in quotas:
            if not backlog_exceeded(quota, kind, backlog, now_ms):
                continue
            if quota.policy == EVICTION:
                self._evict_backlog(ref, kind, quota)
                continue
            text = (f"{ref.topic}'s backlog is over its {kind} quota ({quota.limit_size_bytes} "
                    f"bytes, {quota.limit_time_s} s)")  # fmt: skip
            if quota.policy == EXCEPTION:
                raise ProducerBlockedQuotaExceededException(text)
            raise ProducerBlockedQuotaExceededError(
                f"{text}; held until consumers catch up", retry_after_ms=1000
            )

    def _backlog(self, ref: PartitionRef, now_ms: int) -> Backlog:
        """The backlog as last measured plus what this container committed since; measured
        again when older than ``check_ms``."""
        with self._lock:
            held = self._backlogs.get(ref.key)
        if held is None or now_ms - held.backlog.measured_ms >= self._check_ms:
            held = _Measured(self.measure(ref, now_ms))
            with self._lock:
                self._backlogs[ref.key] = held
        b = held.backlog
        return Backlog(b.size_bytes + held.added_bytes, b.oldest_publish_ms, b.measured_ms)

    def measure(self, ref: PartitionRef, now_ms: int) -> Backlog:
        """Pulsar's estimated backlog of ``ref``: the bytes after the slowest durable
        cursor's mark-delete, and the publish time of the first message there (one cursor
        Query, one index Query)."""
        cursors = [c for c in self._cursors.list(ref.key) if c.durable]
        for cursor in cursors:  # acks still on consumers' grant items count as done
            grant_of = partial(self._cursors.grant, ref.key, cursor.subscription)
            fold_grants(
                cursor, grant_of, hashes_loader(lambda ids: self._log.get_many(ref.key, ids))
            )
        durable = [c.mark_delete for c in cursors]
        head = self._log.head(ref.key)
        if not durable or head < 0 or min(durable) >= head:
            return Backlog(0, 0, now_ms)
        rows = self._log.range_counts(ref.key, min(durable) + 1, head)
        oldest = next((r.publish_ms for r in rows if r.messages > 0), 0)
        return Backlog(sum(r.size_bytes for r in rows), oldest, now_ms)

    def _evict_backlog(self, ref: PartitionRef, kind: str, quota: BacklogQuota) -> None:
        """consumer_backlog_eviction: move every durable cursor past its oldest backlog until
        the quota holds for it (skip the oldest entries; expire those too old). Costs a
        cursor Query, an index Query per cursor and a cursor write per cursor moved; runs
        at most once per ``check_ms`` per partition and container (when measured over)."""
        if self._evictions is None:
            return
        operations, now_ms = self._evictions(), self._rt.now_ms()
        head = self._log.head(ref.key)
        for cursor in self._cursors.list(ref.key):
            if not cursor.durable or cursor.mark_delete >= head:
                continue
            if kind != DESTINATION_STORAGE:
                operations.expire(ref, cursor.subscription, now_ms - quota.limit_time_s * 1000)
                continue
            rows = self._log.range_counts(ref.key, cursor.mark_delete + 1, head)
            excess, drop = sum(r.size_bytes for r in rows) - quota.limit_size_bytes, 0
            for row in rows:
                if excess <= 0:
                    break
                excess -= row.size_bytes
                drop += 1 if row.messages > 0 else 0
            if drop:
                operations.skip(ref, cursor.subscription, drop)
        with self._lock:
            self._backlogs.pop(ref.key, None)  # measured again at the next produce

    # ------------------------------------------------------------ consume
    def admit_subscribe(self, topic: TopicName, subscription: str, consumer: str) -> None:
        """Raise Throttled (429) when ``consumer`` subscribes more often than the
        subscribe rate allows (per consumer name and subscription, per period)."""
        rate = self._quotas.applied(topic).subscribe_rate
        if rate is None or rate.per_consumer <= 0:
            return
        key = ("sub", str(topic), subscription, consumer)
        limiter = self._limiter(key, rate, lambda now: Limiter.of(
            rate.per_consumer, -1, rate.period_s * 1000, now))  # fmt: skip
        wait_ms = self._take(limiter, 1, 0)
        if wait_ms <= 0:
            return
        raise Throttled(
            f"Consumer {consumer} subscribes to {topic} above the subscribe rate "
            f"({rate.per_consumer} per {rate.period_s} s); retry after {wait_ms:.0f} ms",
            retry_after_ms=int(wait_ms) + 1,
        )

    def dispatch_allowance(
        self, topic: TopicName, subscription: str, wanted: int
    ) -> tuple[int, float]:
        """How many of ``wanted`` messages a receive may take now under the topic's
        dispatchRate and the subscriptionDispatchRate, and the ms until more may go (0: no
        wait)."""
        allowed, wait_ms = wanted, 0.0
        for limiter in self._dispatch_limiters(topic, subscription):
            with self._lock:
                now = self._rt.monotonic_ms()
                allowed = min(allowed, limiter.allowance(wanted, now))
                wait_ms = max(wait_ms, limiter.wait_ms(now))
        return allowed, wait_ms

    def dispatched(
        self, topic: TopicName, subscription: str, messages: int, size_bytes: int
    ) -> None:
        """Spend what a receive dispatched from the dispatch limiters."""
        for limiter in self._dispatch_limiters(topic, subscription):
            with self._lock:
                limiter.take(messages, size_bytes, self._rt.monotonic_ms())

    def _dispatch_limiters(self, topic: TopicName, subscription: str) -> list[Limiter]:
        """The limiters of the topic's dispatchRate and of the subscription's
        subscriptionDispatchRate, those that apply."""
        applied = self._quotas.applied(topic)
        limiters = (
            self._dispatch_limiter(("dt", str(topic)), applied.dispatch_rate),
            self._dispatch_limiter(("ds", str(topic), subscription), applied.subscription_dispatch_rate),
        )  # fmt: skip
        return [limiter for limiter in limiters if limiter is not None]
