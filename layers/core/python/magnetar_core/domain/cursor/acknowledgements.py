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

from collections.abc import Callable, Iterable, Mapping

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
            if outcome is not Acked.NOTHING:
                changed += 1
        if self.ks:
            self.ks.after_ack(touched)
        self.acks.advance()
        return changed

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
    ) -> int:
        """Send entries in flight to ``consumer_id`` back for redelivery (count + 1; not
        counted when ``counted`` is False: a trigger's delivery hands back messages it held
        unsent, which must not come nearer the dead letter topic).

        ``bucket_of(redelivery_count)`` gives the due bucket of a delayed nack (None: at
        once); a delayed entry waits in the delayed set until its bucket is released.
        On Key_Shared, a delayed nack of the consumer's part of a split batch entry delays
        that part only (``KeySharedAcks.delay_parts``).
        ``seen`` maps entry ids to the redelivery count of the delivery the consumer nacks:
        an entry not in flight to the consumer, or whose count differs (a stale nack —
        retried, or a second nack of one delivery — of a copy redelivered since), is left
        alone. Returns how many entries went back.
        """
        lease = self.roster.leases.get(consumer_id)
        held = sorted(
            e
            for e in set(entry_ids)
            if lease is not None and e in lease and not self._stale(consumer_id, e, seen)
        )
        buckets = {e: bucket_of(self.reads.count_of(e)) if bucket_of else None for e in held}
        if self.ks:
            delayed = [e for e in held if self.delays.pending(buckets[e])]
            if delayed:
                self.ks.delay_parts(consumer_id, delayed, self.delays.union())
            self.ks.release(consumer_id, held, hashes_of)
        for entry_id in held:
            if lease is not None:
                lease.remove(entry_id)
            self.requeue(entry_id, buckets[entry_id], counted)
        self.roster.drop_empty()
        return len(held)

    def _stale(self, consumer_id: str, entry_id: int, seen: Mapping[int, int] | None) -> bool:
        """Whether a nack that saw redelivery count ``seen[entry_id]`` is of an earlier
        delivery than the consumer's current one. Unknown (False) without a count, and for a
        Key_Shared entry split between consumers (the consumer's part may come from an
        earlier delivery than the entry's count)."""
        if not seen or entry_id not in seen:
            return False
        ks = self.key_shared
        if ks is not None and ks.mask_of(consumer_id, entry_id) is not None:
            return False
        return seen[entry_id] != self.reads.count_of(entry_id)

    def redeliver_all(self, consumer_id: str, hashes_of: HashesOf | None) -> int:
        """Send every entry in flight to ``consumer_id`` back for redelivery (count + 1);
        returns how many went back."""
        lease = self.roster.leases.get(consumer_id)
        if not lease:
            return 0
        if self.ks:
            self.ks.release(consumer_id, list(lease), hashes_of)
        del self.roster.leases[consumer_id]
        for entry_id in lease:
            self.requeue(entry_id)
        return len(lease)

    def requeue(self, entry_id: int, bucket: int | None = None, counted: bool = True) -> None:
        """An entry left its consumer unacknowledged: count it (unless not ``counted``),
        and make it available again — at once, or once ``bucket`` is released when that is
        still pending."""
        if bucket is not None and self.delays.pending(bucket):
            self.delays.defer(entry_id, bucket)
        else:
            self.reads.redeliver.add(entry_id)
        if counted:
            self.reads.went_back(entry_id)

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
