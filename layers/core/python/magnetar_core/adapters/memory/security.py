"""In-memory tenants and namespace permissions, in the topics table under the keys of
``adapters.aws.security`` (``$tenants`` / ``$tenant/<name>``; the namespace's key /
``$permissions``), with the same conditional writes."""

from __future__ import annotations

from magnetar_core.adapters.memory.tables import MemoryTables
from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.security.model import NamespacePermissions, TenantInfo

TENANTS_PK = "$tenants"
TENANT_PREFIX = "$tenant/"
PERMISSIONS = "$permissions"


def _version(record: TenantInfo | NamespacePermissions | None) -> int:
    return record.version if record is not None else 0


class TenantStore:
    """Reads and conditionally writes tenants."""

    def __init__(self, tables: MemoryTables) -> None:
        self._tables = tables
        self._table = tables.topics

    def get(self, tenant: str) -> TenantInfo | None:
        """The tenant's info; None when there is none."""
        with self._tables.lock:
            return self._table.get(TENANTS_PK, TENANT_PREFIX + tenant)

    def list(self) -> list[str]:
        """Every tenant's name, sorted."""
        with self._tables.lock:
            keys = [k for k, _ in self._table.query(TENANTS_PK)]
        return sorted(k[len(TENANT_PREFIX) :] for k in keys if k.startswith(TENANT_PREFIX))

    def put(self, tenant: str, info: TenantInfo) -> TenantInfo:
        """Write ``info`` if still at ``info.version`` (0: only a new tenant); returns the
        stored info (version + 1). Raises ConditionFailed."""
        stored = info.with_version(info.version + 1)
        with self._tables.lock:
            if _version(self._table.get(TENANTS_PK, TENANT_PREFIX + tenant)) != info.version:
                raise ConditionFailed(f"writing tenant {tenant}")
            self._table.put(TENANTS_PK, TENANT_PREFIX + tenant, stored)
        return stored

    def delete(self, tenant: str, info: TenantInfo) -> None:
        """Delete the tenant if still at ``info.version``; raises ConditionFailed."""
        with self._tables.lock:
            if _version(self._table.get(TENANTS_PK, TENANT_PREFIX + tenant)) != info.version:
                raise ConditionFailed(f"deleting tenant {tenant}")
            self._table.delete(TENANTS_PK, TENANT_PREFIX + tenant)


class PermissionStore:
    """Reads and conditionally writes namespace permissions (``tenant/namespace``)."""

    def __init__(self, tables: MemoryTables) -> None:
        self._tables = tables
        self._table = tables.topics

    def get(self, namespace: str) -> NamespacePermissions:
        """The namespace's permissions (none, version 0, when never written)."""
        with self._tables.lock:
            stored = self._table.get(f"persistent://{namespace}", PERMISSIONS)
        return stored if stored is not None else NamespacePermissions()

    def put(self, namespace: str, permissions: NamespacePermissions) -> NamespacePermissions:
        """Replace the permissions if still at ``permissions.version``; returns what was
        stored (version + 1). Raises ConditionFailed."""
        stored = permissions.with_version(permissions.version + 1)
        pk = f"persistent://{namespace}"
        with self._tables.lock:
            if _version(self._table.get(pk, PERMISSIONS)) != permissions.version:
                raise ConditionFailed(f"writing permissions of {namespace}")
            self._table.put(pk, PERMISSIONS, stored)
        return stored

    def delete(self, namespace: str, permissions: NamespacePermissions) -> None:
        """Delete the permissions if still at ``permissions.version``; raises
        ConditionFailed."""
        pk = f"persistent://{namespace}"
        with self._tables.lock:
            if _version(self._table.get(pk, PERMISSIONS)) != permissions.version:
                raise ConditionFailed(f"deleting permissions of {namespace}")
            self._table.delete(pk, PERMISSIONS)
