"""In-memory buffers of non-persistent topics: per-subscription entries in the cursors table
(``pk`` = ``<partition>|np|<subscription>``, sort key a time-ordered unique key), as
``adapters.aws.buffers``. Expired entries are never removed (no TTL sweep); reads skip them."""

from __future__ import annotations

from dataclasses import dataclass

from magnetar_core.adapters.memory.tables import MemoryTables
from magnetar_core.domain.buffers import BufferedEntry


@dataclass(frozen=True)
class _Buffered:
    entry_id: int
    data: bytes
    expires_s: int


class BufferStore:
    """Appends to and takes from subscription buffers."""

    def __init__(self, tables: MemoryTables) -> None:
        self._tables = tables
        self._table = tables.cursors

    def append(self, pk: str, key: str, entry_id: int, data: bytes, expires_s: int) -> None:
        """Buffer one entry for one subscription (replaces an item under the same key)."""
        with self._tables.lock:
            self._table.put(pk, key, _Buffered(entry_id, bytes(data), expires_s))

    def peek(self, pk: str, limit: int, now_s: int) -> list[str]:
        """Sort keys of the unexpired entries among the ``limit`` oldest buffered entries
        (DynamoDB applies the limit before the expiry filter), oldest first."""
        with self._tables.lock:
            items = list(self._table.query(pk))[:limit]
        return [key for key, item in items if item.expires_s > now_s]

    def take(self, pk: str, key: str) -> BufferedEntry | None:
        """Remove one buffered entry and return it, or None when another consumer won it."""
        with self._tables.lock:
            item = self._table.delete(pk, key)
        return None if item is None else BufferedEntry(key, item.entry_id, item.data)
