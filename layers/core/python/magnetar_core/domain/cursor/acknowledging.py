"""The acknowledgement operations of ``CursorState`` (its base class): acks, cumulative and
operator acks, nacks and redeliveries, a Failover take-over, the delayed set's releases.
Each is one operation of the ``Acknowledgements`` rules over the cursor's parts."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping

from magnetar_core.domain.cursor.acknowledgements import Acknowledgements
from magnetar_core.domain.cursor.acks import AckRecords
from magnetar_core.domain.cursor.consumers import ConsumerRoster
from magnetar_core.domain.cursor.dead_letters import DeadLetterOutbox
from magnetar_core.domain.cursor.delays import DelayedSet
from magnetar_core.domain.cursor.key_shared_state import HashesOf, KeySharedState
from magnetar_core.domain.cursor.reads import ReadState

__all__ = ["Acknowledging"]


class Acknowledging:
    """``CursorState``'s acknowledgement operations, over the parts it holds."""

    key_shared: KeySharedState | None
    acks: AckRecords
    reads: ReadState
    roster: ConsumerRoster
    delays: DelayedSet
    outbox: DeadLetterOutbox

    def acknowledge(
        self, positions: Iterable[tuple[int, int]], hashes_of: HashesOf | None = None
    ) -> int:
        """Acknowledge ``(entry_id, batch_index)`` positions individually (``batch_index``
        -1: the whole entry); returns how many changed the state."""
        return self._acknowledgements().acknowledge(positions, hashes_of)

    def acknowledge_cumulative(self, entry_id: int, batch_index: int) -> int:
        """Acknowledge everything up to and including one position (Exclusive only);
        returns how many entries became acknowledged."""
        return self._acknowledgements().acknowledge_cumulative(entry_id, batch_index)

    def acknowledge_through(self, entry_id: int) -> int:
        """An operator's move (skip, clear backlog, expire): everything up to and including
        ``entry_id`` is acknowledged, dispatched or not, and dead letters of those entries
        not yet published are dropped (``Acknowledgements.acknowledge_through``). Returns
        how many ids the mark-delete moved over (0: nothing changed)."""
        moved = self._acknowledgements().acknowledge_through(entry_id)
        if moved:
            self.outbox.items = [d for d in self.outbox.items if d.entry_id > entry_id]
        return moved

    def forget_up_to(self, up_to: int) -> None:
        """Drop every record of entries at or below ``up_to`` (acknowledged now)."""
        self._acknowledgements().forget_up_to(up_to)

    def skip_missing(self, first_present: int) -> int:
        """Step the read position over ids the log no longer holds, up to
        ``first_present``; they count as acknowledged. Returns how many were skipped."""
        return self._acknowledgements().skip_missing(first_present)

    def negative_acknowledge(
        self,
        consumer_id: str,
        entry_ids: Iterable[int],
        hashes_of: HashesOf | None = None,
        bucket_of: Callable[[int], int | None] | None = None,
        seen: Mapping[int, int] | None = None,
        counted: bool = True,
        indexes: Mapping[int, Collection[int]] | None = None,
    ) -> int:
        """Send entries in flight to ``consumer_id`` back for redelivery (count + 1 unless
        not ``counted``), or to the delayed set under ``bucket_of(redelivery_count)``; a
        stale nack (``seen``: the redelivery count it saw, by entry id, differs from the
        entry's) is ignored. On Key_Shared only the batch indexes ``indexes[entry]`` go
        back (absent: all the consumer holds). Returns how many went back
        (``Acknowledgements.negative_acknowledge``)."""
        acks = self._acknowledgements()
        return acks.negative_acknowledge(
            consumer_id, entry_ids, hashes_of, bucket_of, seen, counted, indexes
        )

    def redeliver_all(self, consumer_id: str, hashes_of: HashesOf | None = None) -> int:
        """Send every entry in flight to ``consumer_id`` back for redelivery (count + 1)."""
        return self._acknowledgements().redeliver_all(consumer_id, hashes_of)

    def take_over(self, consumer_id: str) -> int:
        """Failover: the active consumer ``consumer_id`` takes over what is still in flight
        to the subscription's other consumers (the one active before a switch): those
        entries go back for redelivery (count + 1), so it gets them first and in order, as
        Pulsar rewinds the cursor when the active consumer changes. Returns how many went
        back (0: nothing in flight elsewhere)."""
        others = [c for c in self.roster.leases if c != consumer_id]
        return sum(self.redeliver_all(other) for other in others)

    def defer(self, entry_id: int, bucket: int) -> bool:
        """Put an entry in the delayed set under ``bucket`` (epoch ms); True when the bucket
        is new (then its timer must be started)."""
        return self.delays.defer(entry_id, bucket)

    def consume_releases(self, now_ms: int, grace_ms: int | None = None) -> int:
        """Make the entries of released buckets whose time has come available again;
        returns how many joined the redelivery set."""
        return self._acknowledgements().consume_releases(now_ms, grace_ms)

    def _parts(self) -> tuple[AckRecords, ReadState, ConsumerRoster, DelayedSet]:
        return self.acks, self.reads, self.roster, self.delays

    def _acknowledgements(self) -> Acknowledgements:
        return Acknowledgements(*self._parts(), self.key_shared)
