"""Reading the index page of a dispatch before the cursor's read, so that the cursor's
race window (its read to its conditional write) holds no index query.

Every receive of a Shared subscription reads the cursor item, reads the log's new entries
at its read position, and writes the cursor conditionally on the version it read. When
several consumers receive at once, a write loses whenever another one landed between
that read and that write; the log read in between (the sequencer's ``GetItem`` and the
index ``Query``) was most of that window. A container remembers the read position it last
saw per subscription; the next dispatch there reads the page from that position first
(into the index cache), and the dispatch then takes the page from the cache when the cache
holds every id from the cursor's read position up to the last id read ahead. What was
committed after the read ahead waits for the next dispatch, as it would had it been
committed a moment later; the cursor decides what is leased, as before.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from magnetar_core.services.subscriptions.base import SubscriptionContext
from magnetar_core.services.topics import PartitionRef

REMEMBERED = 4096
"""Subscriptions whose read position a container remembers (the oldest forgotten first)."""


class ReadAhead:
    """The read positions one container last saw, and the page read ahead of a cursor."""

    def __init__(self, context: SubscriptionContext) -> None:
        self._ctx = context
        self._positions: OrderedDict[tuple[str, str], int] = OrderedDict()
        self._lock = threading.Lock()

    def saw(self, ref: PartitionRef, subscription: str, read_position: int) -> None:
        """A dispatch of ``subscription`` found its cursor at ``read_position``."""
        with self._lock:
            self._positions[(ref.key, subscription)] = read_position
            self._positions.move_to_end((ref.key, subscription))
            while len(self._positions) > REMEMBERED:
                self._positions.popitem(last=False)

    def page(self, ref: PartitionRef, subscription: str, limit: int) -> int | None:
        """Read up to ``limit`` index items from the remembered read position into the
        index cache; the last id read, or None (no position known here, nothing new: the
        dispatch reads the log itself). Raises what ``LogStore.read_from`` raises."""
        with self._lock:
            start = self._positions.get((ref.key, subscription))
        if start is None:
            return None
        read = self._ctx.log.read_from(ref.key, start, limit)
        entries = [e for e in read if not e.fence]
        if not entries:
            return None
        self._ctx.index.put_many(ref.key, entries)
        return entries[-1].entry_id
