"""Redelivery counts of single messages of batch entries, pure.

A cursor counts redeliveries by entry (``ReadState.redelivery_counts``). On Key_Shared the
messages of one batch entry go their own ways (several consumers; a trigger sends, retries
and holds back each message on its own), so a message's count may rise only when *that*
message was delivered and went back. ``MessageCounts`` keeps the counts of the messages
whose count differs from their entry's, and only those (an entry whose unacknowledged
messages agree again keeps its count alone: ``settle``), so the cursor item grows only by
split entries in flight. It also keeps the messages of entries *parked* in the dead letter
outbox while the rest of the entry is still available (``DeadLettering``): nobody is
handed those again until the dead letter topic has them and they are acknowledged.

In the cursor item's JSON: ``mc`` (see ``to_dict``) and ``mp`` ``{entry: hex bitmap}``
(bit ``i``: batch index ``i`` parked), each only when not empty.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class MessageCounts:
    """Per-message redelivery counts that differ from their entry's, and parked messages."""

    counts: dict[int, dict[int, int]] = field(default_factory=dict)
    parked: dict[int, set[int]] = field(default_factory=dict)

    def count_of(self, entry_id: int, index: int, entry_count: int) -> int:
        """The count of message ``index`` of an entry whose own count is ``entry_count``."""
        return self.counts.get(entry_id, {}).get(index, entry_count)

    def split(self, entry_id: int) -> bool:
        """Whether some message of the entry has a count of its own."""
        return entry_id in self.counts

    def highest(self, entry_id: int, entry_count: int) -> int:
        """The highest count of any message of the entry."""
        return max([entry_count, *self.counts.get(entry_id, {}).values()])

    def bump_all(self, entry_id: int) -> None:
        """Every message of the entry went back: the counts of its own rise too (the
        entry's own count is the caller's)."""
        own = self.counts.get(entry_id)
        if own:
            self.counts[entry_id] = {i: n + 1 for i, n in own.items()}

    def bump(
        self, entry_id: int, indexes: Iterable[int], entry_count: int, unacked: Collection[int]
    ) -> int:
        """Messages ``indexes`` of an entry (count ``entry_count``, unacknowledged batch
        indexes ``unacked``) went back: each counts one more. Returns the entry's count
        from now on (``settle``)."""
        own = self.counts.setdefault(entry_id, {})
        for i in indexes:
            own[i] = own.get(i, entry_count) + 1
        return self.settle(entry_id, entry_count, unacked)

    def settle(self, entry_id: int, entry_count: int, unacked: Collection[int]) -> int:
        """Keep only what differs: counts of acknowledged messages go, and when every
        unacknowledged message has one count, that becomes the entry's and nothing of it
        is kept here. Returns the entry's count from now on."""
        own = self.counts.get(entry_id)
        if own is None:
            return entry_count
        values = {own.get(i, entry_count) for i in unacked}
        if len(values) <= 1:
            del self.counts[entry_id]
            return values.pop() if values else entry_count
        kept = {i: n for i, n in own.items() if i in unacked and n != entry_count}
        self.counts[entry_id] = kept
        return entry_count

    # -- parked messages (on their way to the dead letter topic) ---------------------------

    def parked_of(self, entry_id: int) -> set[int]:
        """Batch indexes of the entry parked in the dead letter outbox (empty: none)."""
        return self.parked.get(entry_id, set())

    def park(self, entry_id: int, indexes: Iterable[int]) -> None:
        """Messages of the entry went to the dead letter outbox, the rest did not."""
        self.parked.setdefault(entry_id, set()).update(indexes)

    def unpark(self, entry_id: int, indexes: Iterable[int]) -> None:
        """Parked messages were acknowledged (their dead letters are published)."""
        mine = self.parked.get(entry_id)
        if mine is not None:
            mine.difference_update(indexes)
            if not mine:
                del self.parked[entry_id]

    # -- forgetting ------------------------------------------------------------------------

    def forget(self, entry_id: int) -> None:
        """The entry is wholly acknowledged."""
        self.counts.pop(entry_id, None)
        self.parked.pop(entry_id, None)

    def forget_up_to(self, up_to: int) -> None:
        """Every entry at or below ``up_to`` is acknowledged."""
        for table in (self.counts, self.parked):
            for key in [k for k in table if k <= up_to]:
                del table[key]

    def reset(self) -> None:
        """Nothing is kept (a seek)."""
        self.counts, self.parked = {}, {}

    # -- the cursor item -------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """``mc`` and ``mp`` of the cursor item's JSON (nothing when empty). ``mc`` is a
        list by ascending entry, each ``[entry id less the previous one's, count, hex
        bitmap of the messages with it, count, bitmap...]`` (about 10 bytes for an entry
        with one message apart)."""
        out: dict[str, Any] = {}
        if self.counts:
            rows, previous = [], 0
            for entry_id in sorted(self.counts):
                row: list[Any] = [entry_id - previous]
                by_count: dict[int, list[int]] = {}
                for i, n in self.counts[entry_id].items():
                    by_count.setdefault(n, []).append(i)
                for n in sorted(by_count):
                    row += [n, _hex(by_count[n])]
                rows.append(row)
                previous = entry_id
            out["mc"] = rows
        if self.parked:
            out["mp"] = {str(e): _hex(p) for e, p in self.parked.items()}
        return out

    @classmethod
    def from_dict(cls, body: Mapping[str, Any]) -> MessageCounts:
        """Load what ``to_dict`` wrote (other keys of ``body`` are ignored)."""
        counts: dict[int, dict[int, int]] = {}
        entry_id = 0
        for row in body.get("mc", []):
            entry_id += int(row[0])
            counts[entry_id] = {
                i: int(n) for n, bits in zip(row[1::2], row[2::2], strict=True) for i in _bits(bits)
            }
        parked = {int(e): set(_bits(bits)) for e, bits in body.get("mp", {}).items()}
        return cls(counts, parked)


def _hex(indexes: Iterable[int]) -> str:
    return format(sum(1 << i for i in indexes), "x")


def _bits(text: str) -> list[int]:
    value = int(text, 16)
    return [i for i in range(value.bit_length()) if value >> i & 1]
