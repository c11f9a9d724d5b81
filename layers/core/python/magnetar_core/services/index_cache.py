"""A per-process cache of index items. An index item changes only when segment compaction
switches it to a byte range of a segment object; the old object is kept for a grace period
(15 minutes by default), so a cached item is used for at most ``max_age_ms`` (5 minutes by
default, below any grace) and then read again. An inline entry's item carries its bytes
(never stale: they move to a segment unchanged), so the cache is also bounded in bytes."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable

from magnetar_core.domain.log import IndexEntry


class IndexCache:
    """LRU of ``(log key, entry id) -> IndexEntry`` bounded to ``capacity`` items and to
    ``max_data_bytes`` of inline entry bytes (a 256 MB Lambda must not fill up with 20,000
    items of 4 KB), each trusted for ``max_age_ms`` after it was loaded (``clock_ms``: a
    monotonic clock in ms)."""

    def __init__(
        self,
        capacity: int = 20_000,
        max_age_ms: float = 300_000,
        clock_ms: Callable[[], float] = lambda: time.monotonic() * 1000,
        max_data_bytes: int = 16 * 1024 * 1024,
    ) -> None:
        self._items: OrderedDict[tuple[str, int], tuple[IndexEntry, float]] = OrderedDict()
        self._capacity = capacity
        self._max_data_bytes = max_data_bytes
        self._data_bytes = 0
        self._max_age_ms = max_age_ms
        self._clock_ms = clock_ms
        self._lock = threading.Lock()

    @property
    def max_age_ms(self) -> float:
        """How long a loaded item is trusted (below segment compaction's grace period)."""
        return self._max_age_ms

    def run(self, key: str, start: int, end: int) -> list[IndexEntry] | None:
        """The items of every id from ``start`` to ``end`` when all are cached (and fresh),
        else None."""
        oldest = self._clock_ms() - self._max_age_ms
        out: list[IndexEntry] = []
        with self._lock:
            for entry_id in range(start, end + 1):
                cached = self._items.get((key, entry_id))
                if cached is None or cached[1] < oldest:
                    return None
                out.append(cached[0])
        return out

    def put_many(self, key: str, entries: Iterable[IndexEntry]) -> None:
        now = self._clock_ms()
        with self._lock:
            for entry in entries:
                replaced = self._items.get((key, entry.entry_id))
                if replaced is not None:
                    self._data_bytes -= _data_size(replaced[0])
                self._items[(key, entry.entry_id)] = (entry, now)
                self._items.move_to_end((key, entry.entry_id))
                self._data_bytes += _data_size(entry)
            while self._items and (
                len(self._items) > self._capacity or self._data_bytes > self._max_data_bytes
            ):
                _, (evicted, _) = self._items.popitem(last=False)
                self._data_bytes -= _data_size(evicted)

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


def _data_size(entry: IndexEntry) -> int:
    """The inline bytes an item holds (0 for an entry in S3)."""
    return len(entry.data) if entry.data is not None else 0
