"""Key_Shared dispatch of a cursor, pure: message-level leases, order by key.

A Key_Shared subscription routes each *message* by its sticky key hash (``0..65535``), so
the messages of one batch entry may go to several consumers. The cursor still leases whole
entries per consumer (``ConsumerRoster.leases``); for an entry of which a consumer holds only
some messages, ``KeySharedState.masks[consumer][entry]`` lists the batch indexes it holds
(absent: every message of the entry not yet acknowledged). The redelivery set holds exactly
the entries below the read position with *available* messages: neither acknowledged nor
leased to anyone.

Order by key (Pulsar 4.0): a hash has unacknowledged messages at one consumer at a time.
When a join moves hashes to another consumer while their previous owner still holds
unacknowledged messages of them, they become *draining* (``keyshared.DrainingHashes``) and
are not dispatched to the new owner until those are acknowledged, negatively acknowledged,
or the previous owner leaves. ``allow_out_of_order`` turns that off.

Per-message hashes come from the index items; methods that need hashes of entries the caller
did not pass take a ``hashes_of`` loader and call it only when something is draining (or, on
a join, for the entries in flight to consumers losing hashes). ``KeySharedCursor`` works on
the parts ``CursorState`` hands it for one operation; it keeps nothing of its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from magnetar_core.domain.cursor.acknowledgements import Acknowledgements
from magnetar_core.domain.cursor.acks import AckRecords
from magnetar_core.domain.cursor.consumers import ConsumerRoster
from magnetar_core.domain.cursor.delays import DelayedSet
from magnetar_core.domain.cursor.key_shared_acks import KeySharedAcks
from magnetar_core.domain.cursor.key_shared_state import (
    HashesOf,
    KeySharedOptions,
    KeySharedState,
)
from magnetar_core.domain.cursor.reads import ReadState
from magnetar_core.domain.cursor.records import ConsumerInfo, Delivery
from magnetar_core.domain.keyshared.draining import Move
from magnetar_core.domain.rangeset import RangeSet
from magnetar_core.domain.response_budget import Room


class KeySharedCursor:
    """Joins and dispatch of a Key_Shared subscription whose state is ``ks``. With
    ``reader`` (the acknowledgement rules of a reader's, non-durable, cursor) what is
    handed out is acknowledged at once."""

    def __init__(
        self,
        ks: KeySharedState,
        acks: AckRecords,
        reads: ReadState,
        roster: ConsumerRoster,
        delays: DelayedSet,
        reader: Acknowledgements | None = None,
    ) -> None:
        self.ks, self.acks, self.reads, self.roster, self.delays = ks, acks, reads, roster, delays
        self.holdings = KeySharedAcks(ks, acks, reads, roster)
        self.reader = reader

    # -- joins -----------------------------------------------------------------------------

    @classmethod
    def join(
        cls,
        current: KeySharedState | None,
        info: ConsumerInfo,
        options: KeySharedOptions,
        subscription: str,
        parts: tuple[AckRecords, ReadState, ConsumerRoster, DelayedSet],
        hashes_of: HashesOf | None,
    ) -> KeySharedState:
        """A consumer joins the subscription's selector with ``options`` (``current``: the
        subscription's state, None when it was not Key_Shared); hashes the join moved are
        blocked at their previous owners (``block_moved``). Returns the state. Raises
        ConsumerAssignError / HashRangeConflict (STICKY ranges), ConsumerBusy (options that
        differ from the subscription's), ValueError (``block_moved``)."""
        ks = KeySharedState.for_join(current, options, subscription)
        moves = ks.join(info.consumer_id, info.name, options)
        cls(ks, *parts).block_moved(moves, hashes_of)
        return ks

    def block_moved(self, moves: Iterable[Move], hashes_of: HashesOf | None) -> None:
        """After a join moved hash ranges (``KeySharedState.join``): block each moved hash
        its previous owner still holds unacknowledged messages of, until they are settled.
        Raises ValueError when such an owner holds entries and ``hashes_of`` is None."""
        moves = list(moves)
        draining = self.ks.draining
        for prev in {m[2] for m in moves if m[2] is not None and m[2] in self.roster.leases}:
            spans = [(s, e) for s, e, p, _ in moves if p == prev]
            for h, n in self.unacked_hashes(prev, hashes_of).items():
                owner = draining.draining_consumer(h)
                if owner in (None, prev) and any(s <= h <= e for s, e in spans):
                    draining.block(h, prev, n)

    def unacked_hashes(self, consumer_id: str, hashes_of: HashesOf | None) -> dict[int, int]:
        """``{hash: unacked messages}`` held by one consumer."""
        lease = self.roster.leases.get(consumer_id)
        if not lease:
            return {}
        if hashes_of is None:
            raise ValueError("hashes_of is needed to find the hashes of messages in flight")
        hashes = hashes_of(list(lease))
        counts: dict[int, int] = {}
        for entry_id in lease:
            per = hashes.get(entry_id, ())
            for i in self.holdings.held_by(consumer_id, entry_id, len(per)):
                counts[per[i]] = counts.get(per[i], 0) + 1
        return counts

    # -- figures ---------------------------------------------------------------------------

    def unacked_messages(self, consumer_id: str) -> int:
        """Messages in flight to one consumer (batch indexes counted one by one)."""
        lease = self.roster.leases.get(consumer_id)
        if not lease:
            return 0
        total = 0
        for entry_id in lease:
            mask = self.ks.mask_of(consumer_id, entry_id)
            total += len(mask) if mask is not None else self.acks.unacked_messages(entry_id)
        return total

    # -- dispatch --------------------------------------------------------------------------

    def dispatch(
        self,
        consumer_id: str,
        candidates: Iterable[tuple[int, tuple[int, ...]]],
        max_messages: int,
        max_unacked_messages: int,
        max_masked_entries: int,
        due: Mapping[int, int] | None,
        room: Room | None = None,
    ) -> list[Delivery]:
        """Lease to ``consumer_id`` the messages the selector gives it, in entry order.

        ``candidates`` are ``(entry_id, per-message hashes)``: redelivery entries ascending,
        then (unless the window was truncated) new entries from the read position. A message
        is handed out when it is available, its hash selects this consumer and it is not
        draining elsewhere, nor waiting in the delayed set: of a delayed entry with a delay
        mask (``KeySharedAcks.delay_parts``) the messages outside the mask are available.
        The read position advances over every new entry considered; an
        entry keeps its place in the redelivery set while it has messages left for others.
        Stops once ``max_messages`` messages are handed out, the consumer holds
        ``max_unacked_messages``, or a new partial lease would exceed ``max_masked_entries``
        masks in the subscription, entries with message counts of their own included
        (``MessageCounts``: both grow the cursor item). ``due`` maps entries that
        must wait to their due bucket: an entry nobody holds goes to the delayed set
        instead. With ``room``, it stops before an entry the response has no room for, once
        it holds one. Returns Deliveries (none when the consumer is not in the selector;
        an entry whose messages differ in redelivery count comes as one per run of equal
        counts, in batch index order: ``ReadState.deliveries``).
        """
        ks, acks, reads = self.ks, self.acks, self.reads
        if consumer_id not in ks.selector.consumers():
            return []
        held = self.unacked_messages(consumer_id)
        masked = ks.masked_entries() + len(reads.messages.counts)  # both grow the item
        waiting = self.delays.union() if self.delays.delayed else RangeSet()
        given = 0
        out: list[Delivery] = []
        for entry_id, hashes in candidates:
            if given >= max_messages or held >= max_unacked_messages:
                break
            if out and room is not None and not room.fits(entry_id):
                break  # the rest waits for the next receive
            count = len(hashes)
            fresh = entry_id == reads.read_position and entry_id not in reads.redeliver
            held_back = ks.delayed.get(entry_id, ()) if entry_id in waiting else ()
            if entry_id in waiting and not held_back:
                continue  # delayed whole
            if not fresh and entry_id not in reads.redeliver:
                continue
            if count == 0 or acks.is_acked(entry_id):
                reads.redeliver.remove(entry_id)
                if fresh:
                    reads.read_position += 1
                    if count == 0:  # a marker: nothing to deliver, step over it
                        acks.acked.add(entry_id)
                continue
            bucket = due.get(entry_id) if due else None
            if (
                bucket is not None
                and self.delays.pending(bucket)
                and not self.roster.holds(entry_id)
            ):
                reads.read_position += fresh
                reads.redeliver.remove(entry_id)
                self.delays.defer(entry_id, bucket)
                ks.undelay([entry_id])  # it waits whole now
                continue
            available = [i for i in self.holdings.available(entry_id, count) if i not in held_back]
            mine = [
                i
                for i in available
                if ks.selector.select(hashes[i]) == consumer_id
                and not ks.draining.is_blocked(hashes[i], consumer_id)
            ]
            prior = ks.mask_of(consumer_id, entry_id)
            unacked = count - len(acks.acked_indexes(entry_id))
            partial = len(mine) + len(prior or ()) < unacked
            new_mask = bool(mine) and partial and prior is None
            if new_mask and masked >= max_masked_entries:
                break
            if fresh:
                reads.read_position += 1
            acks.record_size(entry_id, count)
            if len(mine) < len(available):
                reads.redeliver.add(entry_id)
            else:
                reads.redeliver.remove(entry_id)
            if not mine:
                continue
            self.roster.lease_of(consumer_id).add(entry_id)
            ks.add_mask(consumer_id, entry_id, mine, partial)
            masked += new_mask
            given += len(mine)
            held += len(mine)
            out.extend(reads.deliveries(entry_id, mine, count))
            if room is not None:
                room.charge(entry_id)
        if self.reader is not None:  # a reader's cursor holds nothing back
            positions = [(d.entry_id, i) for d in out for i in (d.batch_indexes or (-1,))]
            self.reader.acknowledge(positions, None)
        return out
