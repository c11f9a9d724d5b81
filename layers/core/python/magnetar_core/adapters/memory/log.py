"""In-memory log index: ``(partition|ledger, entry_id) -> IndexEntry`` (as ``adapters.aws.log``).

Entry ids come from the ledger's sequencer (a ``SequenceState`` under ``(ledger, "$seq")``
in the cursors table, as on AWS); the conditional append at the allocated id is the commit
point of a produce; a fence item closes a ledger. Reads see the resolved ledger
(``domain.sequencing``), holes skipped (``read_from`` returns them as markers). ``IndexEntry`` is immutable, so items are stored and
returned as they are.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import replace

from magnetar_core.adapters.memory.tables import MemoryTables
from magnetar_core.domain.counters import EntryCounts
from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.log import ONCE_SORT_KEY, IndexEntry, once_marker_pk
from magnetar_core.domain.sequencing import (
    HOLE_AFTER_MS,
    SEQUENCE_SORT_KEY,
    Allocation,
    EpochSuperseded,
    LedgerClosed,
    SequenceState,
    Writer,
    settle,
    stale_tail,
    walk,
)


def _completes(entry: IndexEntry) -> bool:
    """Holds messages and is not a chunk before a message's last."""
    return entry.count > 0 and not entry.partial_chunk


class LogStore:
    """Reads and appends index items of the log table."""

    def __init__(
        self,
        tables: MemoryTables,
        now_ms: Callable[[], int] | None = None,
        hole_after_ms: int = HOLE_AFTER_MS,
    ) -> None:
        """``now_ms``: the clock holes are judged by (wall clock by default)."""
        self._tables = tables
        self._table = tables.log
        self._now_ms = now_ms or (lambda: int(time.time() * 1000))
        self._hole_after_ms = hole_after_ms

    def _all(self, pk: str, reverse: bool = False) -> list[IndexEntry]:
        with self._tables.lock:
            return [entry for _, entry in self._table.query(pk, reverse)]

    def _entries(self, pk: str, reverse: bool = False, holes: bool = False) -> list[IndexEntry]:
        """The stored entries at or below the resolved head (holes skipped unless
        ``holes``)."""
        with self._tables.lock:
            head = self._resolved(pk)
            return [
                e
                for e in self._all(pk, reverse)
                if (holes or not e.hole) and (head is None or e.entry_id <= head)
            ]

    def allocate(
        self,
        pk: str,
        count: int,
        writer: Writer | None = None,
        opens: tuple[int, bool] | None = None,
        closes: bool = False,
    ) -> Allocation:
        """Take ``count`` consecutive entry ids (``LogStore.allocate``)."""
        now_ms = self._now_ms()
        with self._tables.lock:
            state = self._tables.cursors.get(pk, SEQUENCE_SORT_KEY)
            if state is None:
                last = next((e for e in self._all(pk, reverse=True) if not e.hole), None)
                next_id = 0 if last is None else last.entry_id + 1
                state = SequenceState(
                    next_id,
                    next_id - 1,
                    last.epoch if last else 0,
                    bool(last and last.exclusive),
                    bool(last and last.fence),
                )
            if state.fenced:
                raise LedgerClosed(pk)
            refused = writer is not None and not writer.admitted(state.epoch, state.exclusive)
            if refused or (opens is not None and opens[0] < state.epoch):
                raise EpochSuperseded(state.epoch, state.exclusive)
            epoch, exclusive = opens if opens is not None else (state.epoch, state.exclusive)
            first = state.next_id
            state = replace(
                state,
                next_id=first + count,
                epoch=epoch,
                exclusive=exclusive,
                fenced=closes,
                allocated_ms=now_ms,
            )
            self._tables.cursors.put(pk, SEQUENCE_SORT_KEY, state)
        return Allocation(first, count, epoch, exclusive, now_ms)

    def _resolved(self, pk: str) -> int | None:
        """The resolved head (holes written on the way); None without a sequencer. The
        caller holds the lock."""
        state = self._tables.cursors.get(pk, SEQUENCE_SORT_KEY)
        if state is None:
            return None
        top, now_ms = state.next_id - 1, self._now_ms()
        after = [e for e in self._all(pk) if state.resolved < e.entry_id <= top]
        step = walk(state.resolved, after, now_ms, self._hole_after_ms, top)
        holes = list(step.holes)
        if step.resolved == (after[-1].entry_id if after else state.resolved):
            holes += stale_tail(step.resolved, state, now_ms, self._hole_after_ms)
        for entry_id in holes:
            self._table.put(pk, entry_id, settle(entry_id, state, now_ms))
        resolved = max([step.resolved, *holes])
        self._tables.cursors.put(pk, SEQUENCE_SORT_KEY, replace(state, resolved=resolved))
        return resolved

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
        """The highest committed entry (or fence) at or below the resolved head."""
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
        """Up to ``limit`` items with ids at or after ``start`` (up to the resolved head,
        holes as markers), ascending."""
        return [e for e in self._entries(pk, holes=True) if e.entry_id >= start][:limit]

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
        """Whether an entry id is settled: at or below the resolved head; without a
        sequencer, whether it is stored."""
        with self._tables.lock:
            head = self._resolved(pk)
            if head is not None:
                return entry_id <= head
            return self._table.get(pk, entry_id) is not None

    def get_many(self, pk: str, entry_ids: Iterable[int]) -> dict[int, IndexEntry]:
        """Index items by entry id; ids not committed are absent."""
        with self._tables.lock:
            found = {e: self._table.get(pk, e) for e in set(entry_ids)}
        return {e: entry for e, entry in found.items() if entry is not None and not entry.hole}
