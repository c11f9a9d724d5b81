"""Where a cursor's dispatch reads next, pure: read position, redelivery set and counts.

``read_position`` is the next entry never dispatched; ``redeliver`` holds entries below it
that are ready to be dispatched again; ``redelivery_counts`` says how many times an entry
went back (Pulsar's redelivery count, handed to the consumer with each delivery);
``messages`` the counts of single messages of split batch entries (``MessageCounts``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from itertools import islice

from magnetar_core.domain.cursor.message_counts import MessageCounts
from magnetar_core.domain.cursor.records import Delivery
from magnetar_core.domain.rangeset import RangeSet


@dataclass
class ReadState:
    """The read position, the entries to redeliver and their redelivery counts."""

    read_position: int = 0
    redeliver: RangeSet = field(default_factory=RangeSet)
    redelivery_counts: dict[int, int] = field(default_factory=dict)
    messages: MessageCounts = field(default_factory=MessageCounts)

    def count_of(self, entry_id: int) -> int:
        """How many times the entry went back for redelivery (0: never); a message with a
        count of its own says so in ``message_count``."""
        return self.redelivery_counts.get(entry_id, 0)

    def message_count(self, entry_id: int, index: int) -> int:
        """How many times message ``index`` of the entry went back (-1: the entry's)."""
        return self.messages.count_of(entry_id, index, self.count_of(entry_id))

    def deliveries(self, entry_id: int, indexes: list[int], count: int) -> list[Delivery]:
        """The deliveries of batch indexes ``indexes`` (ascending) of an entry of ``count``
        messages: one (batch indexes None when they are all of it), or, when the messages
        differ in redelivery count, one per run of equal counts, in index order (so a key's
        messages keep their order)."""
        if not self.messages.split(entry_id):
            mask = None if len(indexes) == count else tuple(indexes)
            return [Delivery(entry_id, self.count_of(entry_id), mask)]
        runs: list[tuple[int, list[int]]] = []
        for i in indexes:
            n = self.message_count(entry_id, i)
            if runs and runs[-1][0] == n:
                runs[-1][1].append(i)
            else:
                runs.append((n, [i]))
        if len(runs) == 1 and len(indexes) == count:
            return [Delivery(entry_id, runs[0][0], None)]
        return [Delivery(entry_id, n, tuple(run)) for n, run in runs]

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

    def went_back(
        self,
        entry_id: int,
        indexes: Iterable[int] | None = None,
        unacked: Collection[int] = (),
    ) -> None:
        """Count one more redelivery of the entry (it left its consumer unacknowledged), or,
        with ``indexes``, of those messages of it only (``unacked``: the entry's batch
        indexes not acknowledged, to keep only counts that differ)."""
        if indexes is None:
            self.redelivery_counts[entry_id] = self.count_of(entry_id) + 1
            self.messages.bump_all(entry_id)
            return
        count = self.messages.bump(entry_id, indexes, self.count_of(entry_id), unacked)
        if count:
            self.redelivery_counts[entry_id] = count
        else:
            self.redelivery_counts.pop(entry_id, None)

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
        self.messages.forget(entry_id)

    def forget_up_to(self, up_to: int) -> None:
        """Drop every entry at or below ``up_to`` (acknowledged)."""
        self.redeliver.remove_up_to(up_to)
        for key in [k for k in self.redelivery_counts if k <= up_to]:
            del self.redelivery_counts[key]
        self.messages.forget_up_to(up_to)

    def reset(self, entry_id: int) -> None:
        """Read from ``entry_id`` on, nothing to redeliver, every count gone (a seek)."""
        self.read_position = entry_id
        self.redeliver = RangeSet()
        self.redelivery_counts = {}
        self.messages.reset()
