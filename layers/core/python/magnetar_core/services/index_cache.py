"""A per-process cache of index items. An index item changes only when segment compaction
switches it to a byte range of a segment object; the old object is kept for a grace period
(15 minutes by default), so a cached item is used for at most ``max_age_ms`` (5 minutes by
default, below any grace) and then read again."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable

from magnetar_core.domain.log import IndexEntry


class IndexCache:
    """LRU of ``(log key, entry id) -> IndexEntry`` bounded to ``capacity`` items, each
    trusted for ``max_age_ms`` after it was loaded (``clock_ms``: a monotonic clock in ms)."""

    def __init__(
        self,
        capacity: int = 20_000,
        max_age_ms: float = 300_000,
        clock_ms: Callable[[], float] = lambda: time.monotonic() * 1000,
    ) -> None:
        self._items: OrderedDict[tuple[str, int], tuple[IndexEntry, float]] = OrderedDict()
        self._capacity = capacity
        self._max_age_ms = max_age_ms
        self._clock_ms = clock_ms
        self._lock = threading.Lock()

    @property
    def max_age_ms(self) -> float:
        """How long a loaded item is trusted (below segment compaction's grace period)."""
        return self._max_age_ms

    def put_many(self, key: str, entries: Iterable[IndexEntry]) -> None:
        now = self._clock_ms()
        with self._lock:
            for entry in entries:
                self._items[(key, entry.entry_id)] = (entry, now)
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
        oldest = self._clock_ms() - self._max_age_ms
        with self._lock:
            for entry_id in entry_ids:
                cached = self._items.get((key, entry_id))
                if cached is None or cached[1] < oldest:
                    missing.append(entry_id)
                else:
                    found[entry_id] = cached[0]
                    self._items.move_to_end((key, entry_id))
        if missing:
            loaded = load(key, missing)
            self.put_many(key, loaded.values())
            found.update(loaded)
        return found
