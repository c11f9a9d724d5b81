"""Acknowledgements: individual, batch-index and cumulative acks; nacks; redelivery."""

from __future__ import annotations

from magnetar_core.domain.cursor.grants import fold, reclaim
from magnetar_core.domain.cursor.state import EXCLUSIVE, FAILOVER, CursorState
from magnetar_core.domain.errors import (
    ConsumerNotFound,
    CumulativeAcknowledgementNotAllowedError,
    InvalidMessage,
)
from magnetar_core.domain.timers import INT64_MAX, NackBackoff
from magnetar_core.services.subscriptions.base import SubscriptionContext
from magnetar_core.services.subscriptions.grants import Grants, Revoked
from magnetar_core.services.timers import DelayTimers
from magnetar_core.services.topics import PartitionRef
from magnetar_wire.ids import parse_message_id
from magnetar_wire.names import TopicName


class Acknowledgements:
    """Changes of a cursor on behalf of one consumer's acks and nacks (``timers`` hold
    delayed nacks back)."""

    def __init__(self, context: SubscriptionContext, timers: DelayTimers) -> None:
        self._ctx = context
        self._timers = timers
        self._grants = Grants(context)

    def acknowledge(
        self,
        topic: TopicName,
        subscription: str,
        consumer_id: str,
        message_ids: list[str],
        cumulative: bool,
        role: str | None = None,
    ) -> int:
        """Acknowledge messages; returns how many positions changed the cursor.

        Raises InvalidMessage (bad ids), ConsumerNotFound, AuthorizationError (``role`` is
        not the consumer's),
        CumulativeAcknowledgementNotAllowedError (cumulative on Shared or Key_Shared).
        """
        ref = self._ctx.topics.resolve(topic, create=False, allow_non_persistent=True)
        positions = _positions(message_ids, ref)
        if not cumulative:  # acks of a consumer's grant go on its own item
            recorded = self._grants.acknowledge(ref, subscription, consumer_id, positions, role)
            if recorded is not None:
                return recorded

        def change(state: CursorState) -> tuple[int, bool]:
            self._ctx.granted.learn(ref.key, state)
            if consumer_id not in state.consumers:
                raise ConsumerNotFound(f"Consumer {consumer_id} is not connected to {subscription}")
            self._ctx.require_consumer(state, consumer_id, role)
            if cumulative:
                if state.sub_type not in (EXCLUSIVE, FAILOVER):
                    raise CumulativeAcknowledgementNotAllowedError(
                        f"Cumulative acknowledgement is not allowed on {state.sub_type} subscriptions"
                    )
                if not positions:
                    return 0, False
                done = state.acknowledge_cumulative(*max(positions))
            else:
                done = state.acknowledge(positions, self._ctx.hashes_of(ref))
            return done, done > 0

        return self._ctx.update(ref, subscription, change)

    def negative_acknowledge(
        self,
        topic: TopicName,
        subscription: str,
        consumer_id: str,
        message_ids: list[str],
        delay_ms: int = 0,
        backoff: NackBackoff | None = None,
        redelivery_counts: dict[str, int] | None = None,
        role: str | None = None,
        counted: bool = True,
    ) -> int:
        """Send the entries of these messages back for redelivery; returns how many.
        ``counted`` False leaves their redelivery counts as they are (a trigger's delivery
        hands back messages it received but held unsent).

        ``delay_ms`` > 0 (or a ``backoff`` by redelivery count, which wins) holds them in
        the delayed set until a timer releases their due bucket (strict: never early);
        without timers configured they come back at once. ``redelivery_counts`` (message id
        -> the redelivery count the consumer saw) makes a stale nack harmless: an entry
        whose count differs (redelivered since: a retried or repeated nack) stays where it
        is. Raises InvalidMessage, ConsumerNotFound, TooManyRequests / StorageFault
        (starting a timer).
        """
        if (
            isinstance(delay_ms, bool)
            or not isinstance(delay_ms, int)
            or not 0 <= delay_ms <= INT64_MAX
        ):
            raise InvalidMessage(
                f"delayMs must be an integer from 0 to {INT64_MAX}, not {delay_ms!r}"
            )
        ref = self._ctx.topics.resolve(topic, create=False, allow_non_persistent=True)
        positions = _positions(message_ids, ref)
        entry_ids = [entry for entry, _ in positions]
        groups = _nack_groups(message_ids, positions, redelivery_counts, ref)
        timer_id = self._ctx.runtime.new_id()[:12]
        revoked = self._revoker(ref, consumer_id, frozenset(entry_ids))

        def change(state: CursorState) -> tuple[int, bool]:
            self._ctx.require_consumer(state, consumer_id, role)
            hashes_of = self._ctx.hashes_of(ref)
            fold(state, consumer_id, revoked.get(consumer_id), hashes_of)
            before = set(state.delayed)
            bucket_of = self._timers.nack_buckets(delay_ms, backoff)
            moved = 0
            for seen, indexes in groups:  # one per redelivery count seen
                moved += state.negative_acknowledge(
                    consumer_id, list(indexes), hashes_of, bucket_of, seen, counted, indexes
                )
            if moved:
                self._timers.start_new(ref.key, state, before, timer_id)
            return moved, moved > 0

        return self._ctx.update(ref, subscription, change, prepare=revoked.prepare)

    def redeliver_unacknowledged(
        self, topic: TopicName, subscription: str, consumer_id: str, role: str | None = None
    ) -> int:
        """Send everything in flight to this consumer back for redelivery; returns how many."""
        ref = self._ctx.topics.resolve(topic, create=False, allow_non_persistent=True)
        revoked = self._revoker(ref, consumer_id, None)

        def change(state: CursorState) -> tuple[int, bool]:
            self._ctx.require_consumer(state, consumer_id, role)
            hashes_of = self._ctx.hashes_of(ref)
            back = reclaim(state, consumer_id, revoked.get(consumer_id), hashes_of)
            moved = back + state.redeliver_all(consumer_id, hashes_of)
            return moved, moved > 0

        return self._ctx.update(ref, subscription, change, prepare=revoked.prepare)

    def _revoker(
        self, ref: PartitionRef, consumer_id: str, entry_ids: frozenset[int] | None
    ) -> Revoked:
        return Revoked(self._grants, ref, [consumer_id], entry_ids)


def parse_backoff(data: object) -> NackBackoff | None:
    """A nack body's ``backoff`` object ``{"minDelayMs", "maxDelayMs", "multiplier"}``
    (defaults 1000, 60000, 2) or None; raises InvalidMessage."""
    if data is None:
        return None
    if not isinstance(data, dict) or set(data) - {"minDelayMs", "maxDelayMs", "multiplier"}:
        raise InvalidMessage("backoff must be an object of minDelayMs, maxDelayMs, multiplier")
    values = [data.get("minDelayMs", 1000), data.get("maxDelayMs", 60_000)]
    multiplier = data.get("multiplier", 2)
    if any(
        isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= INT64_MAX for v in values
    ) or (isinstance(multiplier, bool) or not isinstance(multiplier, int | float)):
        raise InvalidMessage(
            f"backoff delays must be integers (ms) from 0 to {INT64_MAX} and multiplier a number"
        )
    try:
        return NackBackoff(values[0], values[1], float(multiplier))
    except (ValueError, OverflowError) as exc:  # OverflowError: an int beyond a float
        raise InvalidMessage(f"backoff: {exc}") from exc


NackGroup = tuple[dict[int, int] | None, dict[int, set[int]]]
"""Messages a nack names that share the redelivery count seen: ``(seen by entry id, or
None: unknown; batch indexes by entry id)``."""


def _nack_groups(
    message_ids: list[str],
    positions: list[tuple[int, int]],
    counts: object,
    ref: PartitionRef,
) -> list[NackGroup]:
    """A nack's messages of this partition (``positions``) grouped by the redelivery count
    seen for them (``redeliveryCounts``, see ``_seen_counts``): on Key_Shared the messages
    of one entry may come with different counts, each checked against its own. Raises
    InvalidMessage like ``_seen_counts``."""
    seen = _seen_counts(counts, message_ids, ref)
    groups: dict[int | None, NackGroup] = {}
    for entry, index in positions:
        count = seen.get((entry, index)) if seen is not None else None
        if count is None and seen is not None:
            count = seen.get((entry, -2))  # the highest seen of the entry
        group = groups.setdefault(count, ({} if count is not None else None, {}))
        if group[0] is not None and count is not None:
            group[0][entry] = count
        group[1].setdefault(entry, set()).add(index)
    return list(groups.values())


def _seen_counts(
    counts: object, message_ids: list[str], ref: PartitionRef
) -> dict[tuple[int, int], int] | None:
    """A nack body's ``redeliveryCounts`` {message id: count seen} as counts by position
    ``(entry, batch index)`` of this partition, and by ``(entry, -2)`` the highest seen of
    the entry, or None; raises
    InvalidMessage for a malformed map or an id that is not in ``messageIds``."""
    if counts is None:
        return None
    if not isinstance(counts, dict) or not all(
        isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= INT64_MAX
        for c in counts.values()
    ):
        raise InvalidMessage(
            "redeliveryCounts must be an object of message id -> redelivery count "
            f"(an integer from 0 to {INT64_MAX})"
        )
    named = set(message_ids)
    unknown = [k for k in counts if k not in named]
    if unknown:
        raise InvalidMessage(
            f"redeliveryCounts names message id {unknown[0]!r}, which is not in messageIds"
        )
    seen: dict[tuple[int, int], int] = {}
    for text, count in counts.items():
        for entry, index in _positions([text], ref):
            seen[(entry, -2)] = max(seen.get((entry, -2), count), count)
            seen[(entry, index)] = count
    return seen


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
