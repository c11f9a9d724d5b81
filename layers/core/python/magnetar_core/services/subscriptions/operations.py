"""An operator's cursor operations on one log (a non-partitioned topic or one partition):
skip, clear the backlog, expire by age, reset to a time or a message id, create a
subscription at a position. Each move of a cursor is one optimistic update
(``SubscriptionContext.update``: read, change purely, conditional write, retry a lost race);
positions come from ``Seeking`` (the consumers' seek), never computed twice."""

from __future__ import annotations

from magnetar_core.domain.cursor.state import EXCLUSIVE, CursorState
from magnetar_core.domain.errors import ConditionFailed, Conflict
from magnetar_core.services.subscriptions.base import SubscriptionContext, check_subscription
from magnetar_core.services.subscriptions.grants import Grants, Revoked, fold_revoked
from magnetar_core.services.subscriptions.seeking import EARLIEST, LATEST, Seeking
from magnetar_core.services.topics import PartitionRef


class CursorOperations:
    """pulsar-admin's subscription verbs on one partition's cursor. Every method raises
    SubscriptionNotFound (404) when the cursor is missing and ServiceUnitNotReady (503)
    when every conditional write lost its race; nothing changes then."""

    def __init__(self, context: SubscriptionContext, seeking: Seeking) -> None:
        self._ctx = context
        self._seeking = seeking

    def skip(self, ref: PartitionRef, subscription: str, entries: int) -> int:
        """Acknowledge the next ``entries`` unacknowledged entries holding messages after
        the mark-delete (a batch is one entry, as Pulsar's managed cursor skips entries;
        markers between them go too). Returns how many were skipped (fewer when the
        backlog is shorter)."""
        log = self._ctx.log

        def change(state: CursorState) -> tuple[int, bool]:
            head = log.head(ref.key)
            if head <= state.mark_delete:
                return 0, False
            rows = log.range_counts(ref.key, state.mark_delete + 1, head)
            pending = [
                r.entry_id for r in rows if r.messages > 0 and not state.acks.is_acked(r.entry_id)
            ]
            chosen = pending[:entries]
            if not chosen:
                return 0, False
            state.acknowledge_through(chosen[-1])
            return len(chosen), True

        return self._ctx.update(ref, subscription, change)

    def clear_backlog(self, ref: PartitionRef, subscription: str) -> int:
        """Acknowledge everything published so far (Pulsar's skip_all); returns how many
        ids the mark-delete moved over."""
        head = self._ctx.log.head(ref.key)
        return self._through(ref, subscription, head)

    def expire(self, ref: PartitionRef, subscription: str, older_than_ms: int) -> int:
        """Acknowledge every entry whose messages were all published before the epoch-ms
        ``older_than_ms`` (the mark-delete only moves forward); returns how many ids the
        mark-delete moved over."""
        first_fresh = self._seeking.entry_at_time(ref, older_than_ms)
        return self._through(ref, subscription, first_fresh - 1)

    def _through(self, ref: PartitionRef, subscription: str, entry_id: int) -> int:
        def change(state: CursorState) -> tuple[int, bool]:
            moved = state.acknowledge_through(entry_id)
            return moved, moved > 0

        return self._ctx.update(ref, subscription, change)

    def reset_to_time(self, ref: PartitionRef, subscription: str, timestamp_ms: int) -> None:
        """Deliver again from the first entry published at or after epoch-ms
        ``timestamp_ms`` (backwards or forwards); everything in flight is dropped."""
        entry_id = self._seeking.entry_at_time(ref, timestamp_ms)
        self._reset(ref, subscription, (entry_id, 0, 1))

    def reset_to_id(
        self, ref: PartitionRef, subscription: str, message_id: str, inclusive: bool
    ) -> None:
        """Deliver again from ``message_id`` (a text id, ``earliest`` or ``latest``): that
        message first when ``inclusive``, else the one after it. Raises InvalidMessage for a
        malformed id."""
        position = self._seeking.position_of(ref, message_id, inclusive)
        self._reset(ref, subscription, position)

    def _reset(self, ref: PartitionRef, subscription: str, position: tuple[int, int, int]) -> None:
        revoked = Revoked(Grants(self._ctx), ref, [], None)

        def change(state: CursorState) -> tuple[None, bool]:
            fold_revoked(state, revoked, self._ctx.hashes_of(ref))
            state.seek(*position)
            return None, True

        self._ctx.update(ref, subscription, change, prepare=revoked.take_all)

    def create(self, ref: PartitionRef, subscription: str, message_id: str) -> None:
        """Create a durable subscription with no consumer, starting at ``message_id``
        (``earliest``, ``latest`` or a text id, that message included). Raises
        InvalidMessage (bad name or id), Conflict (409) when it exists."""
        check_subscription(subscription)
        if message_id == LATEST:
            last = self._ctx.log.last(ref.key)
            state = CursorState.new(subscription, EXCLUSIVE, last.entry_id if last else -1, False)
        else:
            position = self._seeking.position_of(ref, message_id, True)
            state = CursorState.new(subscription, EXCLUSIVE, -1, True)
            if message_id != EARLIEST:
                state.seek(*position)
        try:
            self._ctx.cursors.put(ref.key, state)  # version 0: only if none exists
        except ConditionFailed:
            raise Conflict(
                f"Subscription already exists for topic: {subscription} on {ref.topic}"
            ) from None
