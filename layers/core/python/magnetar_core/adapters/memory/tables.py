"""In-memory tables: what the DynamoDB tables are to the AWS adapters, as plain dicts.

A table maps a partition key to its items by sort key. Queries return items in sort-key order
(numbers numerically, strings by code point, which is DynamoDB's UTF-8 byte order). Items
are Python values owned by the table: stores put copies in and hand copies out, so a caller
never mutates stored state. One lock guards every table of a ``MemoryTables`` (handlers run
concurrently, and some stores share a table). Nothing ever expires (there is no TTL sweep).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any


class Table:
    """Items by ``(partition key, sort key)``; callers hold the owning lock."""

    def __init__(self) -> None:
        self._partitions: dict[str, dict[Any, Any]] = {}

    def get(self, pk: str, sk: Any) -> Any | None:
        return self._partitions.get(pk, {}).get(sk)

    def put(self, pk: str, sk: Any, value: Any) -> None:
        self._partitions.setdefault(pk, {})[sk] = value

    def delete(self, pk: str, sk: Any) -> Any | None:
        """Remove one item; returns it (None: there was none)."""
        items = self._partitions.get(pk)
        if items is None or sk not in items:
            return None
        value = items.pop(sk)
        if not items:
            del self._partitions[pk]
        return value

    def query(self, pk: str, reverse: bool = False) -> Iterator[tuple[Any, Any]]:
        """``(sort key, value)`` of one partition key in sort-key order (a snapshot)."""
        items = self._partitions.get(pk, {})
        return iter(sorted(items.items(), key=lambda kv: kv[0], reverse=reverse))


class MemoryTables:
    """The tables (topics, log, cursors, notify) and the lock every memory store shares."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.topics = Table()
        self.log = Table()
        self.cursors = Table()
        self.notify = Table()  # the notification channel's (adapters.memory.watches)
