"""Acknowledgement records of a cursor, pure: the mark-delete, acked ranges, batch-index acks.

Positions are entry ids of one ledger. Everything at or below ``mark_delete`` is
acknowledged; above it, ``acked`` holds individually acknowledged entries and
``batch_acks`` the acknowledged batch indexes of partly acknowledged entries, whose sizes
(messages per entry, recorded when the entry was dispatched) are in ``batch_sizes``.
``CursorState`` keeps one ``AckRecords`` and tells the other parts when an entry is done.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from magnetar_core.domain.rangeset import RangeSet


class Acked(Enum):
    """What one individual acknowledgement did (``AckRecords.acknowledge``)."""

    NOTHING = "nothing"
    """Already acknowledged, or an index outside the entry: the records did not change."""
    MESSAGE = "message"
    """One more batch index of a partly acknowledged entry."""
    ENTRY = "entry"
    """The whole entry is acknowledged now."""


@dataclass
class AckRecords:
    """Which entries (and batch indexes) of the ledger are acknowledged."""

    mark_delete: int = -1
    acked: RangeSet = field(default_factory=RangeSet)
    batch_acks: dict[int, set[int]] = field(default_factory=dict)
    batch_sizes: dict[int, int] = field(default_factory=dict)

    def is_acked(self, entry_id: int) -> bool:
        """Whether the whole entry is acknowledged (at or below the mark-delete, or acked)."""
        return entry_id <= self.mark_delete or entry_id in self.acked

    def size_of(self, entry_id: int) -> int:
        """Messages in the entry, as recorded at dispatch (1 when not recorded)."""
        return self.batch_sizes.get(entry_id, 1)

    def record_size(self, entry_id: int, count: int) -> None:
        """Remember that a dispatched entry holds ``count`` messages (only batches: > 1)."""
        if count > 1:
            self.batch_sizes[entry_id] = count

    def acked_indexes(self, entry_id: int) -> set[int]:
        """Acknowledged batch indexes of a partly acknowledged entry (empty: none)."""
        return self.batch_acks.get(entry_id, set())

    def unacked_indexes(self, entry_id: int, count: int) -> list[int]:
        """Batch indexes ``0..count-1`` of the entry not acknowledged yet."""
        acked = self.batch_acks.get(entry_id, ())
        return [i for i in range(count) if i not in acked]

    def unacked_messages(self, entry_id: int) -> int:
        """Messages of the entry not acknowledged yet (its recorded size less batch acks)."""
        return self.size_of(entry_id) - len(self.batch_acks.get(entry_id, ()))

    def delivery_mask(self, entry_id: int, count: int) -> tuple[int, ...] | None:
        """The batch indexes to deliver of an entry of ``count`` messages: None for all of
        them (nothing acknowledged yet), else those not acknowledged."""
        if not self.batch_acks.get(entry_id):
            return None
        return tuple(self.unacked_indexes(entry_id, count))

    def acknowledge(self, entry_id: int, batch_index: int) -> Acked:
        """Record an individual ack of a dispatched entry (``batch_index`` -1: all of it).

        An index of an entry of one message acknowledges the entry; an index at or beyond
        its recorded size changes nothing. The mark-delete does not move here (``advance``).
        """
        if self.is_acked(entry_id):
            return Acked.NOTHING
        size = self.size_of(entry_id)
        if batch_index < 0 or size <= 1:
            self.ack_entry(entry_id)
            return Acked.ENTRY
        if batch_index >= size:
            return Acked.NOTHING
        indexes = self.batch_acks.setdefault(entry_id, set())
        if batch_index in indexes:
            return Acked.NOTHING
        indexes.add(batch_index)
        if len(indexes) >= size:
            self.ack_entry(entry_id)
            return Acked.ENTRY
        return Acked.MESSAGE

    def ack_entry(self, entry_id: int) -> None:
        """Mark the whole entry acknowledged; its batch records go."""
        self.acked.add(entry_id)
        self.batch_acks.pop(entry_id, None)
        self.batch_sizes.pop(entry_id, None)

    def ack_through(self, entry_id: int, batch_index: int) -> int:
        """Record a cumulative ack's batch indexes ``0..batch_index`` of ``entry_id``
        (``batch_index`` -1: the whole entry); returns the last entry now wholly covered
        (``entry_id``, or the one before when indexes of it remain unacknowledged)."""
        size = self.size_of(entry_id)
        if not 0 <= batch_index < size - 1:
            return entry_id
        indexes = self.batch_acks.setdefault(entry_id, set())
        indexes.update(range(batch_index + 1))
        return entry_id if len(indexes) >= size else entry_id - 1

    def advance(self) -> None:
        """Move the mark-delete over the acked range that touches it, if any."""
        ranges = self.acked.ranges()
        if ranges and ranges[0][0] <= self.mark_delete + 1:
            self.mark_delete = max(self.mark_delete, ranges[0][1])
            self.acked.remove_up_to(self.mark_delete)

    def forget_up_to(self, up_to: int) -> None:
        """Drop the records of entries at or below ``up_to`` (the mark-delete covers them)."""
        self.acked.remove_up_to(up_to)
        for table in (self.batch_acks, self.batch_sizes):
            for key in [k for k in table if k <= up_to]:
                del table[key]

    def reset(self, entry_id: int, skip: int, batch_size: int) -> None:
        """Start over before ``entry_id``, its first ``skip`` messages (of ``batch_size``)
        counted as acknowledged; every other record goes."""
        self.mark_delete = entry_id - 1
        self.acked = RangeSet()
        self.batch_acks, self.batch_sizes = {}, {}
        if skip > 0:
            self.batch_acks[entry_id] = set(range(skip))
            self.batch_sizes[entry_id] = batch_size
