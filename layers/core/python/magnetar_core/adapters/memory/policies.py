"""In-memory namespace policies: one item per namespace in the topics table, under the
reserved name ``$policies`` (as ``adapters.aws.policies``)."""

from __future__ import annotations

from magnetar_core.adapters.memory.tables import MemoryTables
from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.policies import NamespacePolicies

POLICIES = "$policies"


class PolicyStore:
    """Reads and conditionally writes namespace policies (``tenant/namespace``)."""

    def __init__(self, tables: MemoryTables) -> None:
        self._tables = tables
        self._table = tables.topics

    def get(self, namespace: str) -> NamespacePolicies:
        """The namespace's policies (all unset, version 0, when none were written)."""
        with self._tables.lock:
            stored = self._table.get(f"persistent://{namespace}", POLICIES)
        return stored if stored is not None else NamespacePolicies()

    def put(self, namespace: str, policies: NamespacePolicies) -> NamespacePolicies:
        """Replace the namespace's policies if they are still at ``policies.version``; returns
        what was stored (version + 1). Raises ConditionFailed when someone wrote first."""
        stored = policies.with_changes(version=policies.version + 1)
        pk = f"persistent://{namespace}"
        with self._tables.lock:
            current = self._table.get(pk, POLICIES)
            if (current.version if current is not None else 0) != policies.version:
                raise ConditionFailed(f"writing policies of {namespace}")
            self._table.put(pk, POLICIES, stored)
        return stored
