"""Tenant and cluster administration with Pulsar's rules (TenantsBase, ClustersBase).

A deployment is one Pulsar cluster (``Settings.cluster_name``): ``allowedClusters`` must
name it and nothing else, as Pulsar refuses an empty list and unknown clusters (412).
Updates are versioned writes through ``services.optimistic``.
"""

from __future__ import annotations

from collections.abc import Callable

from magnetar_core.domain.errors import (
    ConditionFailed,
    Conflict,
    NotFound,
    PreconditionFailed,
    ServiceUnitNotReady,
)
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.security.model import TenantInfo
from magnetar_core.ports import TenantStore
from magnetar_core.services import optimistic
from magnetar_core.services.admin.namespaces import NamespaceAdmin
from magnetar_core.services.tenancy import Registry, tenant_name

UPDATE_ATTEMPTS = 8


class Tenants:
    """Lists, creates, updates, reads and deletes tenants; lists the cluster."""

    def __init__(
        self,
        registry: Registry,
        store: TenantStore,
        namespaces: NamespaceAdmin,
        runtime: Runtime,
    ) -> None:
        self._registry = registry
        self._store = store
        self._namespaces = namespaces
        self._rt = runtime

    def initialize_cluster(self) -> bool:
        """Create ``public`` and ``public/default`` unless the deployment was initialized
        (``Registry.initialize``); True when done now."""
        return self._registry.initialize()

    def clusters(self) -> list[str]:
        """Pulsar's ``GET /admin/v2/clusters``: the deployment's one cluster."""
        return [self._registry.cluster]

    def names(self) -> list[str]:
        """Pulsar's ``GET /admin/v2/tenants``: every tenant's name, sorted."""
        return self._registry.tenant_names()

    def get(self, tenant: str) -> dict:
        """Pulsar's TenantInfo JSON of ``tenant``; raises NotFound "Tenant does not exist",
        InvalidTopicName."""
        return self._registry.require_tenant(tenant_name(tenant)).to_body()

    def _parse(self, body: object) -> TenantInfo:
        """A TenantInfo body (empty: ``{}``) whose clusters are this deployment's; raises
        InvalidMessage, PreconditionFailed (412) "Clusters can not be empty" / "Clusters do
        not exist"."""
        info = TenantInfo.from_body({} if body is None else body)
        cluster = self._registry.cluster
        if not info.allowed_clusters:
            raise PreconditionFailed(
                f'Clusters can not be empty: give "allowedClusters": ["{cluster}"]'
            )
        unknown = sorted(info.allowed_clusters - {cluster})
        if unknown:
            raise PreconditionFailed(
                f"Clusters do not exist: {unknown}; this deployment's one cluster is '{cluster}'"
            )
        return info

    def create(self, tenant: str, body: object) -> None:
        """Pulsar's ``PUT /admin/v2/tenants/{tenant}``. Raises InvalidTopicName,
        InvalidMessage, PreconditionFailed, Conflict "Tenant already exists"."""
        info = self._parse(body)
        if self._registry.tenant(tenant_name(tenant)) is not None:
            raise Conflict(f"Tenant already exists: {tenant}")
        try:
            self._store.put(tenant, info)
        except ConditionFailed:
            raise Conflict(f"Tenant already exists: {tenant}") from None

    def update(self, tenant: str, body: object) -> None:
        """Pulsar's ``POST /admin/v2/tenants/{tenant}``: replace its admin roles and
        clusters. Raises InvalidTopicName, InvalidMessage, PreconditionFailed, NotFound,
        ServiceUnitNotReady (kept changing meanwhile)."""
        info = self._parse(body)
        tenant_name(tenant)

        def change(stored: TenantInfo | None) -> tuple[None, TenantInfo]:
            if stored is None:
                raise NotFound(f"Tenant does not exist: {tenant}")
            return None, info.with_version(stored.version)

        self._update(
            tenant, lambda: self._registry.tenant(tenant), change,
            lambda new: self._store.put(tenant, new),
        )  # fmt: skip

    def delete(self, tenant: str, force: bool) -> None:
        """Pulsar's ``DELETE /admin/v2/tenants/{tenant}``; a tenant with namespaces only
        with ``force`` (they are deleted with their topics). Raises InvalidTopicName,
        NotFound, Conflict "The tenant still has active namespaces", ServiceUnitNotReady."""
        self._registry.require_tenant(tenant_name(tenant))
        namespaces = self._registry.namespace_names(tenant)
        if namespaces and not force:
            raise Conflict(
                f"The tenant still has active namespaces: {tenant} has {namespaces}; "
                "delete them first or use force=true"
            )
        for ns in namespaces:
            self._namespaces.delete(tenant, ns.partition("/")[2], force=True)

        def drop(stored: TenantInfo | None) -> tuple[None, TenantInfo | None]:
            if stored is None:
                raise NotFound(f"Tenant does not exist: {tenant} (deleted meanwhile)")
            return None, stored

        self._update(
            tenant, lambda: self._store.get(tenant), drop,
            lambda stored: self._store.delete(tenant, stored),
        )  # fmt: skip

    def _update(
        self,
        tenant: str,
        read: Callable[[], TenantInfo | None],
        change: Callable[[TenantInfo | None], tuple[None, TenantInfo | None]],
        write: Callable[[TenantInfo], object],
    ) -> None:
        """``optimistic.update`` of the tenant's record; raises ServiceUnitNotReady when it
        kept changing for UPDATE_ATTEMPTS tries, or what ``change`` raises."""
        outcome = optimistic.update(read, change, write, self._rt, UPDATE_ATTEMPTS)
        if isinstance(outcome, optimistic.Conflict):
            raise ServiceUnitNotReady(f"Tenant {tenant} kept changing meanwhile; retry")
