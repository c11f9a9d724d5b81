"""Reading the index page of a Shared dispatch before the cursor's read, so that the
cursor's race window (its read to its conditional write) holds no index query.

Every receive of a Shared subscription reads the cursor item, reads the log's new entries
at its read position, and writes the cursor conditionally on the version it read. When
several consumers receive at once, a write loses whenever another one landed between
that read and that write; the log read in between (the sequencer's ``GetItem`` and the
index ``Query``) was most of that window. A container remembers the read position it last
saw per Shared subscription; the next dispatch there reads the page from that position
first (into the index cache), and the dispatch then takes the page from the cache when the
cache holds every id from the cursor's read position up to the last id read ahead. What
was committed after the read ahead waits for the next dispatch, as it would had it been
committed a moment later; the cursor decides what is leased, as before.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from magnetar_core.domain.cursor.state import SHARED, CursorState
from magnetar_core.services.subscriptions.base import SubscriptionContext
from magnetar_core.services.topics import PartitionRef

REMEMBERED = 4096
"""Subscriptions whose read position a container remembers (the oldest forgotten first)."""


class ReadAhead:
    """The read positions one container last saw, and the page read ahead of a cursor
    (``page_entries`` index items at most)."""

    def __init__(self, context: SubscriptionContext, page_entries: int) -> None:
        self._ctx = context
        self._page_entries = page_entries
        self._positions: OrderedDict[tuple[str, str], int] = OrderedDict()
        self._lock = threading.Lock()

    def saw(self, ref: PartitionRef, subscription: str, state: CursorState) -> None:
        """A dispatch of ``subscription`` found its cursor ``state``: remember its read
        position when it is Shared (consumers racing on the cursor), else forget it
        (Exclusive and Failover have one consumer, Key_Shared reads its own window)."""
        with self._lock:
            if state.sub_type != SHARED:
                self._positions.pop((ref.key, subscription), None)
                return
            self._positions[(ref.key, subscription)] = state.read_position
            self._positions.move_to_end((ref.key, subscription))
            while len(self._positions) > REMEMBERED:
                self._positions.popitem(last=False)

    def page(self, ref: PartitionRef, subscription: str, max_messages: int) -> int | None:
        """Read the index items a receive of ``max_messages`` would read (a page at most)
        from the remembered read position into the index cache; the last id read, or None
        (no position known here, nothing new: the dispatch reads the log itself). Raises
        what ``LogStore.read_from`` raises."""
        with self._lock:
            start = self._positions.get((ref.key, subscription))
        if start is None:
            return None
        limit = min(max_messages, self._page_entries)
        entries = [e for e in self._ctx.log.read_from(ref.key, start, limit) if not e.fence]
        if not entries:
            return None
        self._ctx.index.put_many(ref.key, entries)
        return entries[-1].entry_id
