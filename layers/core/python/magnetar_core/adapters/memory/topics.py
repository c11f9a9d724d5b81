"""In-memory topic metadata: one item per topic, keyed by namespace and name (the topics
table of ``adapters.aws.topics``; ``$``-names such as ``$policies`` share it)."""

from __future__ import annotations

from magnetar_core.adapters.memory.tables import MemoryTables
from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.topic import TopicMeta
from magnetar_wire.names import TopicName


class TopicStore:
    """Reads and conditionally writes topic metadata (``TopicMeta`` is immutable)."""

    def __init__(self, tables: MemoryTables) -> None:
        self._tables = tables
        self._table = tables.topics

    def get(self, name: TopicName) -> TopicMeta | None:
        """The topic's metadata (a tombstone too), or None."""
        with self._tables.lock:
            return self._table.get(name.namespace_name, name.local)

    def put(self, meta: TopicMeta, previous: TopicMeta | None) -> None:
        """Write ``meta`` if the stored item is still ``previous`` (None: no item).

        Raises ConditionFailed when someone else created or changed the topic first.
        """
        pk, sk = meta.name.namespace_name, meta.name.local
        with self._tables.lock:
            stored = self._table.get(pk, sk)
            if previous is None and stored is not None:
                raise ConditionFailed(f"writing topic {meta.name}")
            if previous is not None and (stored is None or stored.version != previous.version):
                raise ConditionFailed(f"writing topic {meta.name}")
            self._table.put(pk, sk, meta)

    def list(self, namespace_name: str) -> list[TopicMeta]:
        """Active topics of a namespace (``domain://tenant/namespace``), by name."""
        with self._tables.lock:
            items = list(self._table.query(namespace_name))
        return [
            meta
            for local, meta in items
            if not local.startswith("$") and isinstance(meta, TopicMeta) and meta.active
        ]
