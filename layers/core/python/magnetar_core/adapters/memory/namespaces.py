"""In-memory namespaces, in the topics table under the keys of ``adapters.aws.namespaces``
(``$namespaces/<tenant>`` / ``$namespace/<namespace>``), with the same conditions."""

from __future__ import annotations

from magnetar_core.adapters.memory.tables import MemoryTables
from magnetar_core.domain.errors import ConditionFailed

NAMESPACES_PK = "$namespaces/"
NAMESPACE_PREFIX = "$namespace/"


def _key(namespace: str) -> tuple[str, str]:
    tenant, _, local = namespace.partition("/")
    return NAMESPACES_PK + tenant, NAMESPACE_PREFIX + local


class NamespaceStore:
    """Records, lists and removes namespaces."""

    def __init__(self, tables: MemoryTables) -> None:
        self._tables = tables
        self._table = tables.topics

    def exists(self, namespace: str) -> bool:
        with self._tables.lock:
            return self._table.get(*_key(namespace)) is not None

    def list(self, tenant: str) -> list[str]:
        """The tenant's namespaces as ``tenant/namespace``, sorted."""
        with self._tables.lock:
            keys = [k for k, _ in self._table.query(NAMESPACES_PK + tenant)]
        return sorted(
            f"{tenant}/{k[len(NAMESPACE_PREFIX) :]}" for k in keys if k.startswith(NAMESPACE_PREFIX)
        )

    def create(self, namespace: str) -> None:
        """Record the namespace; raises ConditionFailed when it exists."""
        with self._tables.lock:
            if self._table.get(*_key(namespace)) is not None:
                raise ConditionFailed(f"creating namespace {namespace}")
            self._table.put(*_key(namespace), True)

    def delete(self, namespace: str) -> None:
        """Remove the namespace; raises ConditionFailed when there is none."""
        with self._tables.lock:
            if self._table.delete(*_key(namespace)) is None:
                raise ConditionFailed(f"deleting namespace {namespace}")
