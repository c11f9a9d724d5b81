"""In-memory compaction: the ``$compaction`` pointer (cursors table) and compacted ledgers
(log table, under ``<log key>|compacted|<run id>``), as ``adapters.aws.compaction``.

The compaction job writes compacted ledgers; here ``put_compacted`` stands in for it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable

from magnetar_core.adapters.memory.tables import MemoryTables
from magnetar_core.domain.compaction import CompactedEntry, CompactionState
from magnetar_core.domain.errors import ConditionFailed

POINTER = "$compaction"


class CompactionStore:
    """The pointer and compacted ledger items."""

    def __init__(self, tables: MemoryTables) -> None:
        self._tables = tables

    # -- pointer ---------------------------------------------------------------------------

    def get(self, pk: str) -> CompactionState:
        """The partition's compaction state (NOT_RUN, version 0, when never compacted)."""
        with self._tables.lock:
            stored = self._tables.cursors.get(pk, POINTER)
            return copy.deepcopy(stored) if stored is not None else CompactionState()

    def put(self, pk: str, state: CompactionState) -> None:
        """Write ``state`` if unchanged since read (version; 0: only if absent). On success
        ``state.version`` is the new version. Raises ConditionFailed."""
        with self._tables.lock:
            stored = self._tables.cursors.get(pk, POINTER)
            if (stored.version if stored is not None else 0) != state.version:
                raise ConditionFailed(f"writing the compaction state of {pk}")
            item = copy.deepcopy(state)
            item.version = state.version + 1
            self._tables.cursors.put(pk, POINTER, item)
            state.version += 1

    # -- compacted ledgers -----------------------------------------------------------------

    def put_compacted(self, ledger: str, entries: Iterable[CompactedEntry]) -> None:
        """Store kept entries of compacted ledger ``ledger`` (what the compaction job writes;
        not part of the store port). A ``kept`` that names every message becomes None."""
        with self._tables.lock:
            for entry in entries:
                kept = entry.kept
                if kept is not None:
                    kept = tuple(sorted(set(kept)))
                    if len(kept) >= entry.entry.count:
                        kept = None
                self._tables.log.put(ledger, entry.entry_id, CompactedEntry(entry.entry, kept))

    def read_from(self, ledger: str, start: int, limit: int) -> list[CompactedEntry]:
        """Up to ``limit`` kept entries with ids at or after ``start``, ascending."""
        with self._tables.lock:
            items = [entry for eid, entry in self._tables.log.query(ledger) if eid >= start]
        return items[:limit]

    def get_many(self, ledger: str, entry_ids: Iterable[int]) -> dict[int, CompactedEntry]:
        """Kept entries by id; ids not kept are absent."""
        with self._tables.lock:
            found = {e: self._tables.log.get(ledger, e) for e in set(entry_ids)}
        return {e: entry for e, entry in found.items() if entry is not None}
