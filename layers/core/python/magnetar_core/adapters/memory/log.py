"""In-memory log index: ``(partition|ledger, entry_id) -> IndexEntry`` (as ``adapters.aws.log``).

The conditional append of the next dense entry id is the commit point of a produce; a fence
item closes a ledger. ``IndexEntry`` is immutable, so items are stored and returned as they are.
"""

from __future__ import annotations

from collections.abc import Iterable

from magnetar_core.adapters.memory.tables import MemoryTables
from magnetar_core.domain.counters import EntryCounts
from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.log import ONCE_SORT_KEY, IndexEntry, once_marker_pk


def _completes(entry: IndexEntry) -> bool:
    """Holds messages and is not a chunk before a message's last."""
    return entry.count > 0 and not entry.partial_chunk


class LogStore:
    """Reads and appends index items of the log table."""

    def __init__(self, tables: MemoryTables) -> None:
        self._tables = tables
        self._table = tables.log

    def _entries(self, pk: str, reverse: bool = False) -> list[IndexEntry]:
        with self._tables.lock:
            return [entry for _, entry in self._table.query(pk, reverse)]

    def append(self, pk: str, entry: IndexEntry) -> None:
        """Commit ``entry`` at its entry id; raises ConditionFailed when the id is taken."""
        with self._tables.lock:
            if self._table.get(pk, entry.entry_id) is not None:
                raise ConditionFailed(f"committing entry {entry.entry_id} of {pk}")
            self._table.put(pk, entry.entry_id, entry)

    def append_once(self, pk: str, entry: IndexEntry, once_key: str, expires_s: int) -> bool:
        """Commit ``entry`` and the marker of ``once_key`` together (in the cursors table,
        as ``adapters.aws.log``); False, writing nothing, when the marker exists; raises
        ConditionFailed when the id is taken. Markers are kept (DynamoDB's TTL deletes
        late too: a condition sees an expired marker until then)."""
        marker = once_marker_pk(pk, once_key)
        with self._tables.lock:
            if self._tables.cursors.get(marker, ONCE_SORT_KEY) is not None:
                return False
            self.append(pk, entry)
            self._tables.cursors.put(marker, ONCE_SORT_KEY, expires_s)
        return True

    def last(self, pk: str) -> IndexEntry | None:
        """The highest committed entry (or fence) of a ledger."""
        entries = self._entries(pk, reverse=True)
        return entries[0] if entries else None

    def head(self, pk: str) -> int:
        """The highest committed entry id of a ledger, a fence not counted (-1: empty)."""
        last = self.last(pk)
        return -1 if last is None else (last.entry_id - 1 if last.fence else last.entry_id)

    def last_with_messages(self, pk: str, at_most: int) -> IndexEntry | None:
        """The highest entry at or below ``at_most`` that holds messages (markers, fences
        and deleted ids are passed over)."""
        return next(
            (e for e in self._entries(pk, reverse=True) if e.entry_id <= at_most and e.count > 0),
            None,
        )

    def read_from(self, pk: str, start: int, limit: int) -> list[IndexEntry]:
        """Up to ``limit`` entries with ids at or after ``start``, ascending."""
        return [e for e in self._entries(pk) if e.entry_id >= start][:limit]

    def range_counts(self, pk: str, start: int, end: int) -> list[EntryCounts]:
        """``(entry_id, messages, size_bytes, publish_ms)`` of entries in ``[start, end]``:
        the message count, 0 for markers and partial chunks."""
        if start > end:
            return []
        return [
            EntryCounts(e.entry_id, 0 if e.partial_chunk else e.count, e.length, e.publish_min_ms)
            for e in self._entries(pk)
            if start <= e.entry_id <= end
        ]

    def producer_tail(self, pk: str, start: int) -> list[tuple[int, str, int, bool]]:
        """``(entry_id, producer, highest sequence id, completes)`` of every entry from
        ``start`` to the head, ascending. ``completes`` is False for markers and for chunks
        other than a message's last."""
        return [
            (e.entry_id, e.producer, e.sequence_max, _completes(e))
            for e in self._entries(pk)
            if e.entry_id >= start
        ]

    def exists(self, pk: str, entry_id: int) -> bool:
        """Whether an entry id is committed."""
        with self._tables.lock:
            return self._table.get(pk, entry_id) is not None

    def get_many(self, pk: str, entry_ids: Iterable[int]) -> dict[int, IndexEntry]:
        """Index items by entry id; ids not committed are absent."""
        with self._tables.lock:
            found = {e: self._table.get(pk, e) for e in set(entry_ids)}
        return {e: entry for e, entry in found.items() if entry is not None}
