"""A per-process cache of index items. Index items never change once committed (compaction
switches to new objects and keeps old ones for a grace period), so caching them is safe."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable

from .storage.log import IndexEntry


class IndexCache:
    """LRU of ``(log key, entry id) -> IndexEntry`` bounded to ``capacity`` items."""

    def __init__(self, capacity: int = 20_000) -> None:
        self._items: OrderedDict[tuple[str, int], IndexEntry] = OrderedDict()
        self._capacity = capacity
        self._lock = threading.Lock()

    def put_many(self, key: str, entries: Iterable[IndexEntry]) -> None:
        with self._lock:
            for entry in entries:
                self._items[(key, entry.entry_id)] = entry
                self._items.move_to_end((key, entry.entry_id))
            while len(self._items) > self._capacity:
                self._items.popitem(last=False)

    def resolve(
        self,
        key: str,
        entry_ids: Iterable[int],
        load: Callable[[str, list[int]], dict[int, IndexEntry]],
    ) -> dict[int, IndexEntry]:
        """Index items for ``entry_ids``: cached ones, the rest through ``load`` (one call)."""
        found: dict[int, IndexEntry] = {}
        missing: list[int] = []
        with self._lock:
            for entry_id in entry_ids:
                item = self._items.get((key, entry_id))
                if item is None:
                    missing.append(entry_id)
                else:
                    found[entry_id] = item
                    self._items.move_to_end((key, entry_id))
        if missing:
            loaded = load(key, missing)
            self.put_many(key, loaded.values())
            found.update(loaded)
        return found
