"""In-memory schema versions, in the topics table under the keys of ``adapters.aws.schemas``
(``<namespace name>`` / ``$schema/<topic>/<version>``), each written once."""

from __future__ import annotations

from magnetar_core.adapters.memory.tables import MemoryTables
from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.schemas.data import SchemaVersion
from magnetar_wire.names import TopicName

PREFIX = "$schema/"


def _sort_key(topic: TopicName, version: int | None) -> str:
    return f"{PREFIX}{topic.local}/" + ("" if version is None else f"{version:010d}")


class SchemaStore:
    """Reads a topic's schema versions and adds new ones."""

    def __init__(self, tables: MemoryTables) -> None:
        self._tables = tables
        self._table = tables.topics

    def versions(self, topic: TopicName) -> list[SchemaVersion]:
        """Every stored version by version."""
        prefix = _sort_key(topic, None)
        with self._tables.lock:
            items = list(self._table.query(topic.namespace_name))
        found = [v for key, v in items if isinstance(key, str) and key.startswith(prefix)]
        return sorted(found, key=lambda v: v.version)

    def add(self, topic: TopicName, version: SchemaVersion) -> None:
        """Write ``version`` if its number is new; raises ConditionFailed."""
        key = _sort_key(topic, version.version)
        with self._tables.lock:
            if self._table.get(topic.namespace_name, key) is not None:
                raise ConditionFailed(f"writing schema version {version.version} of {topic}")
            self._table.put(topic.namespace_name, key, version)
