"""Where a cursor's dispatch reads next, pure: read position, redelivery set and counts.

``read_position`` is the next entry never dispatched; ``redeliver`` holds entries below it
that are ready to be dispatched again; ``redelivery_counts`` says how many times an entry
went back (Pulsar's redelivery count, handed to the consumer with each delivery).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import islice

from magnetar_core.domain.rangeset import RangeSet


@dataclass
class ReadState:
    """The read position, the entries to redeliver and their redelivery counts."""

    read_position: int = 0
    redeliver: RangeSet = field(default_factory=RangeSet)
    redelivery_counts: dict[int, int] = field(default_factory=dict)

    def count_of(self, entry_id: int) -> int:
        """How many times the entry went back for redelivery (0: never)."""
        return self.redelivery_counts.get(entry_id, 0)

    def claim(self, entry_id: int) -> bool:
        """Take an entry for dispatch: out of the redelivery set, or the read position
        steps over it when it is the next new one. False when it is neither."""
        if entry_id in self.redeliver:
            self.redeliver.remove(entry_id)
        elif entry_id == self.read_position:
            self.read_position += 1
        else:
            return False
        return True

    def window(self, size: int) -> tuple[list[int], bool]:
        """The first ``size`` entries of the redelivery set, and whether there are more."""
        ids = list(islice(self.redeliver, size + 1))
        return ids[:size], len(ids) > size

    def went_back(self, entry_id: int) -> None:
        """Count one more redelivery of the entry (it left its consumer unacknowledged)."""
        self.redelivery_counts[entry_id] = self.count_of(entry_id) + 1

    def skip_to(self, first_present: int) -> int:
        """Move the read position up to ``first_present``; returns how many ids it passed
        (0 when it is there or beyond already)."""
        gap = first_present - self.read_position
        if gap <= 0:
            return 0
        self.read_position = first_present
        return gap

    def forget(self, entry_id: int) -> None:
        """Drop an acknowledged entry: no redelivery, no count."""
        self.redeliver.remove(entry_id)
        self.redelivery_counts.pop(entry_id, None)

    def forget_up_to(self, up_to: int) -> None:
        """Drop every entry at or below ``up_to`` (acknowledged)."""
        self.redeliver.remove_up_to(up_to)
        for key in [k for k in self.redelivery_counts if k <= up_to]:
            del self.redelivery_counts[key]

    def reset(self, entry_id: int) -> None:
        """Read from ``entry_id`` on, nothing to redeliver, every count gone (a seek)."""
        self.read_position = entry_id
        self.redeliver = RangeSet()
        self.redelivery_counts = {}
