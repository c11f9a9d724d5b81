"""Entry-level dispatch of a cursor (Exclusive, Shared, Failover), pure.

Each entry goes whole to one consumer: redeliveries first, then new entries from the read
position. ``SharedDispatch`` works on the parts ``CursorState`` hands it for one call and
keeps nothing of its own; Key_Shared routes messages instead (``key_shared``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from magnetar_core.domain.cursor.acknowledgements import Acknowledgements
from magnetar_core.domain.cursor.acks import AckRecords
from magnetar_core.domain.cursor.consumers import ConsumerRoster
from magnetar_core.domain.cursor.delays import DelayedSet
from magnetar_core.domain.cursor.reads import ReadState
from magnetar_core.domain.cursor.records import Delivery
from magnetar_core.domain.rangeset import RangeSet
from magnetar_core.domain.response_budget import Room


def fair_share(available_entries: int, held: Mapping[str, int], consumers: int, own: str) -> int:
    """How many of ``available_entries`` one receive of consumer ``own`` may lease, on a
    Shared subscription of ``consumers`` registered consumers where ``held`` says how many
    entries each has in flight.

    Every consumer's target is an equal share of everything dispatchable (in flight or
    not); a receive takes no more than brings its consumer up to the target, and no more
    than an equal split of what is available among the consumers still below it. Pulsar's
    Shared dispatcher deals entries round-robin to the consumers with permits; a receive
    here leases for one consumer at a time, so without a bound the first long-poll to find
    a backlog would lease all of it while the others wait idle. With the bound the next
    consumers' receives find the rest; a consumer at its target (a slow one, holding what
    it has not acknowledged: Pulsar's consumer without permits) gets nothing until it
    acknowledges some or the others take theirs. A lone active consumer never stalls: once
    it has acknowledged what it holds, it is below the target again."""
    if consumers <= 1 or available_entries <= 0:
        return max(available_entries, 0)
    target = -(-(available_entries + sum(held.values())) // consumers)
    below = max(1, consumers - sum(1 for n in held.values() if n >= target))
    split = -(-available_entries // below)
    return max(0, min(split, target - held.get(own, 0)))


class SharedDispatch:
    """Leases whole entries to consumers. With ``reader`` (the acknowledgement rules of a
    reader's, non-durable, cursor) it leases nothing: what is handed out is acknowledged."""

    def __init__(
        self,
        acks: AckRecords,
        reads: ReadState,
        roster: ConsumerRoster,
        delays: DelayedSet,
        reader: Acknowledgements | None = None,
    ) -> None:
        self.acks, self.reads, self.roster, self.delays = acks, reads, roster, delays
        self.reader = reader

    def dispatch(
        self,
        consumer_id: str,
        candidates: Iterable[tuple[int, int]],
        max_messages: int,
        max_unacked_entries: int,
        due: Mapping[int, int] | None = None,
        room: Room | None = None,
        max_entries: int | None = None,
    ) -> list[Delivery]:
        """Lease entries to ``consumer_id``: redeliveries first, then new entries in order.

        ``candidates`` are ``(entry_id, message_count)`` of entries that exist, ascending for
        new ones: the caller passes the redelivery entries it resolved and the entries it
        read at or after the read position. Stops once ``max_messages`` messages are handed
        out (an entry is never split) or the consumer holds ``max_unacked_entries``.
        ``due`` maps entries that must wait to their due bucket: those go to the delayed set
        instead (unless the bucket counts as released already). A marker (0 messages) at
        the read position is stepped over and counts as acknowledged. With ``room``, it
        also stops before an entry the response has no room for, once it holds one. The
        mark-delete then moves over what is acknowledged. ``max_entries`` (None: no bound)
        caps the entries leased by this call (``fair_share``).
        """
        acks, reads = self.acks, self.reads
        waiting = self.delays.union() if self.delays.delayed else RangeSet()
        lease = self.roster.lease_of(consumer_id)
        held = len(lease)
        given = 0
        out: list[Delivery] = []
        for entry_id, count in candidates:
            if given >= max_messages or held >= max_unacked_entries:
                break
            if max_entries is not None and len(out) >= max_entries:
                break
            if out and room is not None and not room.fits(entry_id):
                break  # the rest waits for the next receive
            if count == 0:  # a marker: nothing to deliver, step over it
                if entry_id == reads.read_position:
                    reads.read_position += 1
                    acks.acked.add(entry_id)
                continue
            if entry_id in waiting or not reads.claim(entry_id) or acks.is_acked(entry_id):
                continue
            bucket = due.get(entry_id) if due else None
            if bucket is not None and self.delays.pending(bucket):
                self.delays.defer(entry_id, bucket)
                continue
            mask = acks.delivery_mask(entry_id, count)
            given += count if mask is None else len(mask)
            out.append(Delivery(entry_id, reads.count_of(entry_id), mask))
            if room is not None:
                room.charge(entry_id)
            if self.reader is not None:  # a reader's cursor holds nothing back
                self.reader.ack_entry(entry_id)
                continue
            acks.record_size(entry_id, count)
            lease.add(entry_id)
            held += 1
        if not lease:
            self.roster.leases.pop(consumer_id, None)
        acks.advance()
        return out
