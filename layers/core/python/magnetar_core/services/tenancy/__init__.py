"""Which tenants and namespaces exist: the registry every tenancy use case and the topic
lifecycle ask, and the cluster's initialization with ``public`` and ``public/default``.

As ``pulsar initialize-cluster-metadata`` does once per Pulsar cluster (and Pulsar
standalone at its first start), ``initialize`` creates the tenant ``public`` and the
namespace ``public/default`` once per deployment, and records that it did (a marker record,
``INITIALIZED``). The local stack initializes when it starts; a deployment on AWS on its
first use: reading tenant ``public``, listing tenants or ``public``'s namespaces, or asking
whether ``public/default`` exists (a topic created there) when it is missing. Once the
marker exists nothing is created again, so a deleted ``public/default`` stays deleted.
Nothing here runs on the produce or receive path of an existing topic: the topic lifecycle
asks only when it creates a topic.
"""

from __future__ import annotations

import contextlib

from magnetar_core.domain.errors import ConditionFailed, NotFound, TopicNotFound
from magnetar_core.domain.security.model import TenantInfo
from magnetar_core.ports import NamespaceStore, TenantStore
from magnetar_wire.names import TopicName, check_namespace, check_tenant

DEFAULT_TENANT = "public"
DEFAULT_NAMESPACE = "public/default"
INITIALIZED = "$cluster/initialized"
"""The initialization marker: a NamespaceStore record whose name no namespace can have
(``$`` is not allowed in tenant names)."""


def namespace_name(tenant: str, namespace: str) -> str:
    """``tenant/namespace`` of a valid namespace name; raises InvalidTopicName (400)."""
    check_namespace(tenant, namespace)
    return f"{tenant}/{namespace}"


def tenant_name(tenant: str) -> str:
    """A valid tenant name; raises InvalidTopicName (400)."""
    check_tenant(tenant)
    return tenant


class Registry:
    """Reads of what exists, with the defaults made on first use. ``cluster`` is the
    deployment's one cluster (``public`` is allowed on it)."""

    def __init__(self, tenants: TenantStore, namespaces: NamespaceStore, cluster: str) -> None:
        self._tenants = tenants
        self._namespaces = namespaces
        self.cluster = cluster
        self._initialized = False  # the marker was seen by this process

    def initialize(self) -> bool:
        """Create ``public`` (no admin roles, the cluster allowed) and ``public/default``
        unless the deployment was initialized before (the marker); True when it was done
        now. Concurrent initializers are fine (each create is conditional)."""
        if self._initialized or self._namespaces.exists(INITIALIZED):
            self._initialized = True
            return False
        if self._tenants.get(DEFAULT_TENANT) is None:
            with contextlib.suppress(ConditionFailed):
                self._tenants.put(DEFAULT_TENANT, TenantInfo(allowed_clusters=frozenset({self.cluster})))  # fmt: skip
        for namespace in (DEFAULT_NAMESPACE, INITIALIZED):
            with contextlib.suppress(ConditionFailed):
                self._namespaces.create(namespace)
        self._initialized = True
        return True

    # ------------------------------------------------------------ tenants
    def tenant(self, tenant: str) -> TenantInfo | None:
        """The tenant's info (fresh read), None when there is no such tenant."""
        info = self._tenants.get(tenant)
        if info is None and tenant == DEFAULT_TENANT and self.initialize():
            info = self._tenants.get(tenant)
        return info

    def require_tenant(self, tenant: str) -> TenantInfo:
        """The tenant's info; raises NotFound (404) "Tenant does not exist"."""
        info = self.tenant(tenant)
        if info is None:
            raise NotFound(
                f"Tenant does not exist: {tenant} (a superuser creates it with "
                f"`magnetar admin tenants create {tenant}`)"
            )
        return info

    def tenant_names(self) -> list[str]:
        """Every tenant, sorted."""
        names = self._tenants.list()
        if DEFAULT_TENANT not in names and self.initialize():
            names = self._tenants.list()
        return names

    # ------------------------------------------------------------ namespaces
    def namespace_exists(self, namespace: str) -> bool:
        """Whether ``tenant/namespace`` exists."""
        if self._namespaces.exists(namespace):
            return True
        return namespace == DEFAULT_NAMESPACE and self.initialize()

    def require_namespace(self, namespace: str) -> None:
        """Raises NotFound (404) "Namespace does not exist" unless it exists."""
        if not self.namespace_exists(namespace):
            raise NotFound(_missing_namespace(namespace))

    def require_topic_namespace(self, topic: TopicName) -> None:
        """Before a topic is created: raises TopicNotFound (404, the SDK's TopicNotFound)
        "Namespace does not exist" unless the topic's namespace exists."""
        namespace = f"{topic.tenant}/{topic.namespace}"
        if not self.namespace_exists(namespace):
            raise TopicNotFound(f"{_missing_namespace(namespace)}; topic {topic} cannot be created")

    def namespace_names(self, tenant: str) -> list[str]:
        """The tenant's namespaces as ``tenant/namespace``, sorted."""
        names = self._namespaces.list(tenant)
        if tenant == DEFAULT_TENANT and DEFAULT_NAMESPACE not in names and self.initialize():
            names = self._namespaces.list(tenant)
        return names


def _missing_namespace(namespace: str) -> str:
    return (
        f"Namespace does not exist: {namespace} (a tenant admin creates it with "
        f"`magnetar admin namespaces create {namespace}`)"
    )
