"""Subscriptions: consumers, the long-poll receive (dispatcher), acks, nacks, redelivery.

Every operation is one optimistic read-modify-write of the cursor item: read it strongly
consistent, apply a pure change (``cursor.CursorState``), write it conditional on the
version, and on a lost race retry with jitter. A receive commits the lease before it reads
entry objects, so a crash in between only delays those messages (at-least-once).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import islice
from typing import TypeVar

from magnetar_wire.ids import parse_message_id

from .cursor import EXCLUSIVE, SUBSCRIPTION_TYPES, ConsumerInfo, CursorState, Delivery
from .errors import (
    ConditionFailed,
    ConsumerBusy,
    ConsumerNotFound,
    CumulativeAcknowledgementNotAllowedError,
    InvalidMessage,
    NotAllowedError,
    ServiceUnitNotReady,
    SubscriptionNotFound,
)
from .index_cache import IndexCache
from .names import TopicName
from .policies import Runtime
from .storage.cursors import CursorStore
from .storage.entries import EntryStore
from .storage.log import IndexEntry, LogStore
from .topics import PartitionRef, Topics

T = TypeVar("T")
_SUBSCRIPTION = re.compile(r"^[A-Za-z0-9_=:.\-]{1,256}$")


@dataclass(frozen=True)
class ConsumerHandle:
    """A registered consumer, as returned to the client on subscribe."""

    consumer_id: str
    consumer_name: str
    subscription: str
    topic: TopicName


@dataclass(frozen=True)
class DeliveredEntry:
    """An entry handed to a consumer, with its bytes exactly as produced."""

    topic: TopicName
    ledger_id: int
    entry_id: int
    partition: int
    redelivery_count: int
    batch_indexes: tuple[int, ...] | None
    data: bytes | None
    url: str | None = None


@dataclass(frozen=True)
class DispatchLimits:
    """Knobs of the dispatcher: times in ms."""

    max_wait_ms: int = 20_000
    check_interval_ms: int = 100
    max_unacked_entries: int = 50_000
    max_attempts: int = 16
    cursor_recheck_every: int = 10


class Subscriptions:
    """The server side of consumers."""

    def __init__(
        self,
        topics: Topics,
        log: LogStore,
        cursors: CursorStore,
        entries: EntryStore,
        runtime: Runtime,
        limits: DispatchLimits,
        index_cache: IndexCache,
        inline_entry_max_bytes: int = 1024 * 1024,
        response_inline_budget_bytes: int = 3 * 1024 * 1024,
    ) -> None:
        self._inline_max = inline_entry_max_bytes
        self._inline_budget = response_inline_budget_bytes
        self._topics = topics
        self._log = log
        self._cursors = cursors
        self._entries = entries
        self._rt = runtime
        self._limits = limits
        self._index = index_cache
        self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="entry-get")

    # -- consumers -------------------------------------------------------------------------

    def subscribe(
        self,
        topic: TopicName,
        subscription: str,
        consumer_name: str | None,
        sub_type: str,
        earliest: bool,
    ) -> ConsumerHandle:
        """Register a consumer, creating the subscription at the initial position if new.

        Raises InvalidMessage (bad name/type), ConsumerBusy (Exclusive taken, type clash).
        """
        _check_subscription(subscription)
        if sub_type in ("Failover", "Key_Shared", "KeyShared"):
            raise NotAllowedError(
                f"Subscription type {sub_type!r} is not served yet; use one of {', '.join(SUBSCRIPTION_TYPES)}"
            )
        if sub_type not in SUBSCRIPTION_TYPES:
            raise InvalidMessage(
                f"Unknown subscription type {sub_type!r}: use Exclusive, Shared, Failover or Key_Shared"
            )
        ref = self._topics.resolve(topic, create=True)
        now = self._rt.now_ms()
        info = ConsumerInfo(
            self._rt.new_id()[:16], consumer_name or self._rt.new_id()[:5], now, now
        )
        for attempt in range(self._limits.max_attempts):
            state = self._cursors.get(ref.key, subscription)
            if state is None:
                last = self._log.last(ref.key)
                state = CursorState.new(
                    subscription, sub_type, last.entry_id if last else -1, earliest
                )
            state.add_consumer(info, sub_type)
            try:
                self._cursors.put(ref.key, state)
                return ConsumerHandle(info.consumer_id, info.name, subscription, topic)
            except ConditionFailed:
                self._rt.sleep_ms(self._rt.backoff.delay_ms(attempt))
        raise ServiceUnitNotReady(f"Subscription {subscription} is too busy to join; retry")

    def close(self, topic: TopicName, subscription: str, consumer_id: str) -> int:
        """Unregister a consumer; its unacked entries go back for redelivery. Idempotent."""
        ref = self._topics.resolve(topic, create=False)

        def change(state: CursorState) -> tuple[int, bool]:
            if consumer_id not in state.consumers:
                return 0, False
            return state.remove_consumer(consumer_id), True

        return self._update(ref, subscription, change, missing_ok=True, default=0)

    def unsubscribe(self, topic: TopicName, subscription: str, consumer_id: str) -> None:
        """Delete the subscription on behalf of one of its consumers.

        Raises ConsumerNotFound, or ConsumerBusy when other consumers are connected.
        """
        ref = self._topics.resolve(topic, create=False)
        state = self._cursor(ref, subscription, consumer_id)
        if set(state.consumers) - {consumer_id}:
            raise ConsumerBusy(f"Subscription {subscription} has other connected consumers")
        self._delete(ref, state)

    def delete_subscription(self, topic: TopicName, subscription: str, force: bool) -> None:
        """Admin: delete a subscription; raises SubscriptionNotFound, ConsumerBusy."""
        ref = self._topics.resolve(topic, create=False)
        state = self._cursors.get(ref.key, subscription)
        if state is None:
            raise SubscriptionNotFound(f"Subscription {subscription} does not exist on {topic}")
        if state.consumers and not force:
            raise ConsumerBusy(
                f"Subscription {subscription} has {len(state.consumers)} connected consumers; use force=true"
            )
        self._delete(ref, state)

    def _delete(self, ref: PartitionRef, state: CursorState) -> None:
        try:
            self._cursors.delete(ref.key, state)
        except ConditionFailed:
            raise ServiceUnitNotReady(
                f"Subscription {state.subscription} changed meanwhile; retry"
            ) from None

    # -- receive ---------------------------------------------------------------------------

    def receive(
        self,
        topic: TopicName,
        subscription: str,
        consumer_id: str,
        max_messages: int,
        wait_ms: int,
        by_reference: bool = False,
    ) -> list[DeliveredEntry]:
        """Dispatch up to ``max_messages`` messages, long-polling up to ``wait_ms``.

        Redeliveries come first, then new entries in order. Returns [] when nothing came.
        With ``by_reference``, entries above the inline limits come as presigned URLs (the
        response must fit Lambda's 6 MB). Raises ConsumerNotFound, InvalidMessage.
        """
        if not 1 <= max_messages <= 10_000:
            raise InvalidMessage(f"maxMessages must be between 1 and 10000, not {max_messages}")
        if not 0 <= wait_ms <= self._limits.max_wait_ms:
            raise InvalidMessage(
                f"waitMs must be between 0 and {self._limits.max_wait_ms}, not {wait_ms}"
            )
        ref = self._topics.resolve(topic, create=False)
        deadline = self._rt.monotonic_ms() + wait_ms
        while True:
            deliveries, read_position = self._dispatch(ref, subscription, consumer_id, max_messages)
            if deliveries:
                return self._fetch(ref, deliveries, by_reference)
            if not self._await_more(ref.key, read_position, deadline):
                return []

    def _await_more(self, key: str, read_position: int, deadline: float) -> bool:
        """Wait until the entry at ``read_position`` exists, a cursor re-check is due, or
        the deadline passes (then False). One small read per check."""
        for _ in range(self._limits.cursor_recheck_every):
            left = deadline - self._rt.monotonic_ms()
            if left <= 0:
                return False
            self._rt.sleep_ms(min(self._limits.check_interval_ms, left))
            if self._log.exists(key, read_position):
                return True
        return True

    def _dispatch(
        self, ref: PartitionRef, subscription: str, consumer_id: str, max_messages: int
    ) -> tuple[list[tuple[Delivery, IndexEntry]], int]:
        for attempt in range(self._limits.max_attempts):
            state = self._cursor(ref, subscription, consumer_id)
            redeliveries = list(islice(state.redeliver, max_messages))
            fresh = [
                e
                for e in self._log.read_from(ref.key, state.read_position, min(max_messages, 1000))
                if not e.fence
            ]
            self._index.put_many(ref.key, fresh)
            known = {e.entry_id: e for e in fresh}
            known.update(self._index.resolve(ref.key, redeliveries, self._log.get_many))
            candidates = [(e, known[e].count) for e in redeliveries if e in known]
            candidates += [(e.entry_id, e.count) for e in fresh]
            deliveries = state.dispatch(
                consumer_id, candidates, max_messages, self._limits.max_unacked_entries
            )
            if not deliveries:
                return [], state.read_position
            try:
                self._cursors.put(ref.key, state)
            except ConditionFailed:
                self._rt.sleep_ms(self._rt.backoff.delay_ms(attempt))
                continue
            return [(d, known[d.entry_id]) for d in deliveries], state.read_position
        raise ServiceUnitNotReady(f"Subscription {subscription} is too busy to dispatch; retry")

    def _fetch(
        self,
        ref: PartitionRef,
        deliveries: list[tuple[Delivery, IndexEntry]],
        by_reference: bool,
    ) -> list[DeliveredEntry]:
        """Read the entries: inline while they fit the response budget, else as URLs."""
        inline: set[int] = set()
        budget = self._inline_budget
        for d, item in deliveries:
            if not by_reference or (item.length <= self._inline_max and item.length <= budget):
                inline.add(d.entry_id)
                budget -= item.length

        def get(pair: tuple[Delivery, IndexEntry]) -> DeliveredEntry:
            d, item = pair
            data = url = None
            if d.entry_id in inline:
                data = self._entries.get(item.object_key, item.offset, item.length)
            else:
                url = self._entries.download_url(item.object_key)
            return DeliveredEntry(
                ref.topic,
                ref.ledger_id,
                d.entry_id,
                ref.partition,
                d.redelivery_count,
                d.batch_indexes,
                data,
                url,
            )

        if len(deliveries) == 1:
            return [get(deliveries[0])]
        return list(self._pool.map(get, deliveries))

    # -- acknowledgement -------------------------------------------------------------------

    def acknowledge(
        self,
        topic: TopicName,
        subscription: str,
        consumer_id: str,
        message_ids: list[str],
        cumulative: bool,
    ) -> int:
        """Acknowledge messages; returns how many positions changed the cursor.

        Raises InvalidMessage (bad ids), ConsumerNotFound,
        CumulativeAcknowledgementNotAllowedError (cumulative on a Shared subscription).
        """
        ref = self._topics.resolve(topic, create=False)
        positions = _positions(message_ids, ref)

        def change(state: CursorState) -> tuple[int, bool]:
            if consumer_id not in state.consumers:
                raise ConsumerNotFound(f"Consumer {consumer_id} is not connected to {subscription}")
            if cumulative:
                if state.sub_type != EXCLUSIVE:
                    raise CumulativeAcknowledgementNotAllowedError(
                        f"Cumulative acknowledgement is not allowed on {state.sub_type} subscriptions"
                    )
                if not positions:
                    return 0, False
                done = state.acknowledge_cumulative(*max(positions))
            else:
                done = state.acknowledge(positions)
            return done, done > 0

        return self._update(ref, subscription, change)

    def negative_acknowledge(
        self, topic: TopicName, subscription: str, consumer_id: str, message_ids: list[str]
    ) -> int:
        """Send the entries of these messages back for redelivery; returns how many."""
        ref = self._topics.resolve(topic, create=False)
        entry_ids = [entry for entry, _ in _positions(message_ids, ref)]

        def change(state: CursorState) -> tuple[int, bool]:
            self._require_consumer(state, consumer_id)
            moved = state.negative_acknowledge(consumer_id, entry_ids)
            return moved, moved > 0

        return self._update(ref, subscription, change)

    def redeliver_unacknowledged(
        self, topic: TopicName, subscription: str, consumer_id: str
    ) -> int:
        """Send everything in flight to this consumer back for redelivery; returns how many."""
        ref = self._topics.resolve(topic, create=False)

        def change(state: CursorState) -> tuple[int, bool]:
            self._require_consumer(state, consumer_id)
            moved = state.redeliver_all(consumer_id)
            return moved, moved > 0

        return self._update(ref, subscription, change)

    # -- plumbing --------------------------------------------------------------------------

    def _cursor(self, ref: PartitionRef, subscription: str, consumer_id: str) -> CursorState:
        state = self._cursors.get(ref.key, subscription)
        if state is None:
            raise SubscriptionNotFound(f"Subscription {subscription} does not exist on {ref.topic}")
        self._require_consumer(state, consumer_id)
        return state

    @staticmethod
    def _require_consumer(state: CursorState, consumer_id: str) -> None:
        if consumer_id not in state.consumers:
            raise ConsumerNotFound(
                f"Consumer {consumer_id} is not connected to subscription {state.subscription}; subscribe again"
            )

    def _update(
        self,
        ref: PartitionRef,
        subscription: str,
        change: Callable[[CursorState], tuple[T, bool]],
        missing_ok: bool = False,
        default: T | None = None,
    ) -> T:
        for attempt in range(self._limits.max_attempts):
            state = self._cursors.get(ref.key, subscription)
            if state is None:
                if missing_ok:
                    return default
                raise SubscriptionNotFound(
                    f"Subscription {subscription} does not exist on {ref.topic}"
                )
            result, changed = change(state)
            if not changed:
                return result
            try:
                self._cursors.put(ref.key, state)
                return result
            except ConditionFailed:
                self._rt.sleep_ms(self._rt.backoff.delay_ms(attempt))
        raise ServiceUnitNotReady(f"Subscription {subscription} is too busy; retry")


def _check_subscription(name: str) -> None:
    if not isinstance(name, str) or not _SUBSCRIPTION.fullmatch(name):
        raise InvalidMessage(
            f"Invalid subscription name {name!r}: use 1-256 letters, digits and - _ = : ."
        )


def _positions(message_ids: list[str], ref: PartitionRef) -> list[tuple[int, int]]:
    """``(entry_id, batch_index)`` of the ids that belong to this partition's ledger."""
    if not isinstance(message_ids, list) or not all(isinstance(m, str) for m in message_ids):
        raise InvalidMessage("messageIds must be a list of message id strings like '1:0:-1:-1'")
    out = []
    for text in message_ids:
        try:
            ledger, entry, partition, batch = parse_message_id(text)
        except ValueError as exc:
            raise InvalidMessage(str(exc)) from exc
        if ledger == ref.ledger_id and partition == ref.partition and entry >= 0:
            out.append((entry, batch))
    return out
