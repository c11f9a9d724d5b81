"""Acknowledgement and redelivery rules of a cursor, pure.

An entry wholly acknowledged leaves every part of the cursor: the redelivery set and its
count, every lease, Key_Shared masks and the delayed set. An entry sent back (negative ack,
a consumer gone) counts one more redelivery and waits in the redelivery set — or, with a
nack delay, in the delayed set under its due bucket. An entry whose next delivery would
exceed the dead letter policy goes to the outbox instead (``DeadLettering``).
``Acknowledgements`` works on the parts ``CursorState`` hands it for one operation and keeps
nothing of its own; on a Key_Shared subscription ``KeySharedAcks`` also releases lease masks
and draining hashes.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping

from magnetar_core.domain.cursor.acks import Acked, AckRecords
from magnetar_core.domain.cursor.consumers import ConsumerRoster
from magnetar_core.domain.cursor.delays import DelayedSet
from magnetar_core.domain.cursor.key_shared_acks import KeySharedAcks
from magnetar_core.domain.cursor.key_shared_state import HashesOf, KeySharedState
from magnetar_core.domain.cursor.reads import ReadState


class Acknowledgements:
    """The cross-part rules of acks and redeliveries over one cursor's parts."""

    def __init__(
        self,
        acks: AckRecords,
        reads: ReadState,
        roster: ConsumerRoster,
        delays: DelayedSet,
        key_shared: KeySharedState | None,
    ) -> None:
        self.acks, self.reads, self.roster, self.delays = acks, reads, roster, delays
        self.key_shared = key_shared
        self.ks = None if key_shared is None else KeySharedAcks(key_shared, acks, reads, roster)

    # -- acknowledgement -------------------------------------------------------------------

    def acknowledge(self, positions: Iterable[tuple[int, int]], hashes_of: HashesOf | None) -> int:
        """Acknowledge ``(entry_id, batch_index)`` positions individually.

        ``batch_index`` -1 acks the whole entry; otherwise one message of a batch entry, whose
        size the cursor recorded when it dispatched it. Positions never dispatched are
        ignored. On Key_Shared, ``hashes_of`` loads hashes when acks release draining ones.
        Returns how many positions changed the state.
        """
        positions = list(positions)
        touched = self.ks.before_ack(positions, hashes_of) if self.ks else []
        changed = 0
        for entry_id, batch_index in positions:
            if entry_id >= self.reads.read_position:
                continue
            outcome = self.acks.acknowledge(entry_id, batch_index)
            if outcome is Acked.ENTRY:
                self.forget_entry(entry_id)
            elif outcome is Acked.MESSAGE and self.reads.messages.split(entry_id):
                self._settle_counts(entry_id)
            if outcome is not Acked.NOTHING:
                changed += 1
        if self.ks:
            self.ks.after_ack(touched)
        self.acks.advance()
        return changed

    def _settle_counts(self, entry_id: int) -> None:
        """An acknowledged message's count of its own goes; the entry's count is the one
        its unacknowledged messages agree on, if they do (``MessageCounts.settle``)."""
        size = self.acks.size_of(entry_id)
        unacked = self.acks.unacked_indexes(entry_id, size)
        count = self.reads.messages.settle(entry_id, self.reads.count_of(entry_id), unacked)
        if count:
            self.reads.redelivery_counts[entry_id] = count

    def acknowledge_cumulative(self, entry_id: int, batch_index: int) -> int:
        """Acknowledge everything up to and including one position (Exclusive only); a
        position at or beyond the read position means everything dispatched. Returns how
        many entries became acknowledged."""
        if entry_id >= self.reads.read_position:
            entry_id, batch_index = self.reads.read_position - 1, -1
        full = self.acks.ack_through(entry_id, batch_index)
        before = self.acks.mark_delete
        if full > self.acks.mark_delete:
            self.acks.mark_delete = full
            self.forget_up_to(full)
        self.roster.drop_empty()
        self.acks.advance()
        return max(0, self.acks.mark_delete - before)

    def acknowledge_through(self, entry_id: int) -> int:
        """An operator's cumulative move (skip, clear backlog, expire): every entry up to and
        including ``entry_id``, dispatched or not, is acknowledged; the mark-delete moves
        there and the read position at least past it. Entries in flight up to it leave their
        leases (a later ack of them changes nothing). Returns how many ids the mark-delete
        moved over (0: it was at or beyond ``entry_id``)."""
        before = self.acks.mark_delete
        if entry_id <= before:
            return 0
        self.acks.mark_delete = entry_id
        self.forget_up_to(entry_id)
        self.reads.skip_to(entry_id + 1)
        self.roster.drop_empty()
        self.acks.advance()
        return entry_id - before

    def forget_up_to(self, up_to: int) -> None:
        """Drop every record of entries at or below ``up_to`` (acknowledged now): acks,
        redeliveries, leases, batch acks and sizes, redelivery counts, Key_Shared masks and
        delayed entries (empty leases stay until ``ConsumerRoster.drop_empty``)."""
        self.acks.forget_up_to(up_to)
        self.reads.forget_up_to(up_to)
        self.roster.forget_up_to(up_to)
        if self.key_shared is not None:
            self.key_shared.forget(lambda e: e <= up_to)
        self.delays.forget(up_to=up_to)

    def ack_entry(self, entry_id: int) -> None:
        """Acknowledge a whole entry and drop it from every other part."""
        self.acks.ack_entry(entry_id)
        self.forget_entry(entry_id)

    def forget_entry(self, entry_id: int) -> None:
        """An entry is wholly acknowledged: it leaves every part but the ack records."""
        self.reads.forget(entry_id)
        self.roster.forget(entry_id)
        if self.key_shared is not None:
            self.key_shared.forget(lambda e: e == entry_id)
        if self.delays.delayed:
            self.delays.forget([entry_id])

    def skip_missing(self, first_present: int) -> int:
        """Step the read position over ids the log no longer holds (deleted by the expiry
        job: acknowledged by every durable cursor, or expired) up to ``first_present``, the
        first id the log still has at or after it; they count as acknowledged. Returns how
        many ids were skipped."""
        start = self.reads.read_position
        gap = self.reads.skip_to(first_present)
        if gap:
            self.acks.acked.add_range(start, first_present - 1)
            self.acks.advance()
        return gap

    # -- negative acknowledgement and redelivery -------------------------------------------

    def negative_acknowledge(
        self,
        consumer_id: str,
        entry_ids: Iterable[int],
        hashes_of: HashesOf | None,
        bucket_of: Callable[[int], int | None] | None,
        seen: Mapping[int, int] | None = None,
        counted: bool = True,
        indexes: Mapping[int, Collection[int]] | None = None,
    ) -> int:
        """Send entries in flight to ``consumer_id`` back for redelivery (count + 1; not
        counted when ``counted`` is False: a trigger's delivery hands back messages it held
        unsent, which must not come nearer the dead letter topic).

        ``bucket_of(redelivery_count)`` gives the due bucket of a delayed nack (None: at
        once); a delayed entry waits in the delayed set until its bucket is released.
        On Key_Shared a nack names messages: ``indexes`` maps an entry to the batch indexes
        nacked (absent: all the consumer holds of it); only those go back and count, the
        consumer keeps the rest (``KeySharedAcks.nacked``), and a delayed nack of part of
        an entry delays that part only (``KeySharedAcks.delay_parts``).
        ``seen`` maps entry ids to the redelivery count of the delivery the consumer nacks:
        an entry not in flight to the consumer, or whose count differs (a stale nack —
        retried, or a second nack of one delivery — of a copy redelivered since), is left
        alone (on Key_Shared: each message whose count differs). Returns how many entries
        went back (wholly or in part).
        """
        lease = self.roster.leases.get(consumer_id)
        if lease is None:
            return 0
        mine = sorted(e for e in set(entry_ids) if e in lease)
        parts: dict[int, set[int]] | None = None
        if self.ks:
            parts = self.ks.nacked(consumer_id, mine, indexes, seen)
            held = sorted(parts)
        else:
            held = [e for e in mine if not self._stale(e, seen)]
        buckets = {e: bucket_of(self._highest(e, parts)) if bucket_of else None for e in held}
        whole = set(held)
        if self.ks and parts is not None:
            delayed = {e: parts[e] for e in held if self.delays.pending(buckets[e])}
            if delayed:
                self.ks.delay_parts(delayed, self.delays.union())
            whole = set(self.ks.give_back(consumer_id, parts, hashes_of))
        for entry_id in held:
            if entry_id in whole:
                lease.remove(entry_id)
            part = parts[entry_id] if parts is not None else None
            self.requeue(entry_id, buckets[entry_id], counted, part)
        self.roster.drop_empty()
        return len(held)

    def _highest(self, entry_id: int, parts: Mapping[int, set[int]] | None) -> int:
        """The highest redelivery count of the messages going back of an entry."""
        if parts is None or not self.reads.messages.split(entry_id):
            return self.reads.count_of(entry_id)
        return max(self.reads.message_count(entry_id, i) for i in parts[entry_id])

    def _stale(self, entry_id: int, seen: Mapping[int, int] | None) -> bool:
        """Whether a nack that saw redelivery count ``seen[entry_id]`` is of an earlier
        delivery than the consumer's current one (unknown, False, without a count)."""
        if not seen or entry_id not in seen:
            return False
        return seen[entry_id] != self.reads.count_of(entry_id)

    def holdings(self, consumer_id: str) -> dict[int, set[int]] | None:
        """On Key_Shared, ``{entry: batch indexes}`` the consumer holds (None otherwise:
        it holds its entries whole)."""
        return self.ks.holdings(consumer_id) if self.ks else None

    def redeliver_all(
        self,
        consumer_id: str,
        hashes_of: HashesOf | None,
        held: Mapping[int, set[int]] | None = None,
    ) -> int:
        """Send every entry in flight to ``consumer_id`` back for redelivery (count + 1 for
        the messages it held: ``held``, as ``holdings`` said before its masks went, else
        ``holdings`` now); returns how many went back."""
        lease = self.roster.leases.get(consumer_id)
        if not lease:
            return 0
        parts = held
        if parts is None:  # (given: the consumer left, its masks and draining hashes gone)
            parts = self.holdings(consumer_id)
            if self.ks and parts is not None:
                self.ks.give_back(consumer_id, parts, hashes_of)
        del self.roster.leases[consumer_id]
        for entry_id in lease:
            self.requeue(entry_id, part=parts.get(entry_id) if parts is not None else None)
        return len(lease)

    def requeue(
        self,
        entry_id: int,
        bucket: int | None = None,
        counted: bool = True,
        part: set[int] | None = None,
    ) -> None:
        """An entry (its messages ``part``; None: all) left its consumer unacknowledged:
        count them (unless not ``counted``), and make the entry available again — at once,
        or once ``bucket`` is released when that is still pending."""
        if bucket is not None and self.delays.pending(bucket):
            self.delays.defer(entry_id, bucket)
        else:
            self.reads.redeliver.add(entry_id)
        if not counted:
            return
        if part is None:
            self.reads.went_back(entry_id)
        else:
            size = self.acks.size_of(entry_id)
            self.reads.went_back(entry_id, part, self.acks.unacked_indexes(entry_id, size))

    def consume_releases(self, now_ms: int, grace_ms: int | None) -> int:
        """Make the entries of every released bucket whose time has come available again
        (see ``DelayedSet.consume_releases``); returns how many joined the redelivery set
        (entries acknowledged meanwhile do not)."""
        moved = 0
        released = self.delays.consume_releases(now_ms, grace_ms)
        for entry_id in released:
            if not self.acks.is_acked(entry_id):
                self.reads.redeliver.add(entry_id)
                moved += 1
        if self.key_shared is not None and self.key_shared.delayed and released:
            waiting = self.delays.union()
            self.key_shared.undelay([e for e in released if e not in waiting])
        return moved
