"""In-memory notification channel: the watch store on ``MemoryTables.notify`` (the AWS
adapter's key layout, ``domain.notify``; no TTL sweep) and a connections poster that records
what it posts."""

from __future__ import annotations

from magnetar_core.adapters.memory.tables import MemoryTables
from magnetar_core.domain.notify import (
    CONNECTION_PREFIX,
    CONNECTION_SK,
    Watch,
    listing_key,
    watch_key,
)


class WatchStore:
    """Connections and their watches, on one set of memory tables."""

    def __init__(self, tables: MemoryTables) -> None:
        self._tables = tables

    def connect(self, connection_id: str, role: str | None, expires_ms: int) -> None:
        with self._tables.lock:
            self._tables.notify.put(CONNECTION_PREFIX + connection_id, CONNECTION_SK, (role,))

    def connection(self, connection_id: str) -> tuple[bool, str | None]:
        with self._tables.lock:
            record = self._tables.notify.get(CONNECTION_PREFIX + connection_id, CONNECTION_SK)
        return (False, None) if record is None else (True, record[0])

    def put(self, watches: list[Watch], expires_ms: int) -> None:
        with self._tables.lock:
            for w in watches:
                self._tables.notify.put(*watch_key(w), w)
                self._tables.notify.put(*listing_key(w), w)

    def of_topic(self, topic: str) -> list[Watch]:
        with self._tables.lock:
            return [w for _, w in self._tables.notify.query(topic)]

    def consume(self, watch: Watch) -> bool:
        with self._tables.lock:
            return self._tables.notify.delete(*watch_key(watch)) is not None

    def disconnect(self, connection_id: str) -> list[Watch]:
        pk = CONNECTION_PREFIX + connection_id
        with self._tables.lock:
            items = list(self._tables.notify.query(pk))
            had = [w for sk, w in items if sk != CONNECTION_SK]
            for sk, _ in items:
                self._tables.notify.delete(pk, sk)
            for w in had:
                self._tables.notify.delete(*watch_key(w))
        return had


class RecordingConnections:
    """Posts into ``sent`` (``(connection id, data)``); connections in ``gone`` answer 410."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, bytes]] = []
        self.gone: set[str] = set()

    def post(self, connection_id: str, data: bytes) -> bool:
        if connection_id in self.gone:
            return False
        self.sent.append((connection_id, data))
        return True
