"""Namespace administration with Pulsar's rules (NamespacesBase): list, create, read, delete
(``force`` for a namespace that still has topics), and the topics of a namespace.

A namespace is its record in the NamespaceStore; its policies (PolicyStore) and permissions
(PermissionStore) are records of their own, cleared when it is deleted, so a namespace
created again starts with none. Deleting removes the topics first (with ``force``), then
the permissions and policies, and the namespace's record last: a delete that stops half way
leaves a namespace that still exists and can be deleted again.
"""

from __future__ import annotations

from magnetar_core.domain.errors import (
    ConditionFailed,
    Conflict,
    InvalidMessage,
    NotFound,
    ServiceUnitNotReady,
)
from magnetar_core.domain.policies import NamespacePolicies
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.security.model import NamespacePermissions, actions_body
from magnetar_core.domain.topic import TopicMeta
from magnetar_core.ports import NamespaceStore, PermissionStore, PolicyStore
from magnetar_core.services import optimistic
from magnetar_core.services.tenancy import Registry, namespace_name, tenant_name
from magnetar_core.services.topics import Topics
from magnetar_wire.names import DOMAINS

UPDATE_ATTEMPTS = 8
MODES = {"PERSISTENT": ("persistent",), "NON_PERSISTENT": ("non-persistent",), "ALL": DOMAINS}
"""Pulsar's topic listing modes -> the domains listed."""


class NamespaceAdmin:
    """Creates, reads, lists and deletes namespaces; see the module docstring."""

    def __init__(
        self,
        registry: Registry,
        store: NamespaceStore,
        policies: PolicyStore,
        permissions: PermissionStore,
        topics: Topics,
        runtime: Runtime,
    ) -> None:
        self._registry = registry
        self._store = store
        self._policies = policies
        self._permissions = permissions
        self._topics = topics
        self._rt = runtime

    def names(self, tenant: str) -> list[str]:
        """Pulsar's ``GET /admin/v2/namespaces/{tenant}``: ``["tenant/ns", ...]``. Raises
        NotFound "Tenant does not exist", InvalidTopicName."""
        self._registry.require_tenant(tenant_name(tenant))
        return self._registry.namespace_names(tenant)

    def create(self, tenant: str, namespace: str, body: object) -> None:
        """Create ``tenant/namespace``. ``body`` (Pulsar's optional Policies) may be absent
        or a JSON object; its fields are not applied (set policies through their routes).
        Raises InvalidMessage, InvalidTopicName, NotFound "Tenant does not exist",
        Conflict "Namespace already exists"."""
        ns = namespace_name(tenant, namespace)
        if body is not None and not isinstance(body, dict):
            raise InvalidMessage("The body must be empty or a JSON object (Pulsar's Policies)")
        self._registry.require_tenant(tenant)
        if self._registry.namespace_exists(ns):
            raise Conflict(f"Namespace already exists: {ns}")
        try:
            self._store.create(ns)
        except ConditionFailed:
            raise Conflict(f"Namespace already exists: {ns}") from None

    def policies(self, tenant: str, namespace: str) -> dict:
        """Pulsar's ``GET /admin/v2/namespaces/{tenant}/{namespace}``: the namespace's
        Policies JSON (the fields Magnetar has). Raises NotFound, InvalidTopicName."""
        ns = namespace_name(tenant, namespace)
        self._registry.require_namespace(ns)
        return policies_body(
            self._policies.get(ns), self._permissions.get(ns), self._registry.cluster
        )

    def topics(self, tenant: str, namespace: str, mode: str = "PERSISTENT") -> list[str]:
        """Pulsar's ``GET .../{namespace}/topics?mode=``: the topics of ``mode``'s domains
        (``PERSISTENT``, as Pulsar's default, ``NON_PERSISTENT`` or ``ALL``), a partitioned
        topic as its partitions. Raises NotFound, InvalidTopicName, InvalidMessage."""
        ns = namespace_name(tenant, namespace)
        if mode not in MODES:
            raise InvalidMessage(f"mode must be one of {', '.join(MODES)}, not {mode[:64]!r}")
        self._registry.require_namespace(ns)
        return [
            str(ref.topic)
            for meta in self._metas(ns, MODES[mode])
            for ref in self._topics.partitions_of(meta)
        ]

    def _metas(self, ns: str, domains: tuple[str, ...] = DOMAINS) -> list[TopicMeta]:
        return [meta for domain in domains for meta in self._topics.list(f"{domain}://{ns}")]

    def delete(self, tenant: str, namespace: str, force: bool) -> None:
        """Delete ``tenant/namespace``; with topics only when ``force`` (they are deleted,
        their consumers disconnected). Raises NotFound "Namespace does not exist", Conflict
        "Cannot delete non empty namespace", InvalidTopicName, ServiceUnitNotReady (its
        records kept changing meanwhile; retry)."""
        ns = namespace_name(tenant, namespace)
        self._registry.require_namespace(ns)
        metas = self._metas(ns)
        if metas and not force:
            raise Conflict(
                f"Cannot delete non empty namespace {ns}: it has {len(metas)} topic(s); "
                "delete them first or use force=true"
            )
        for meta in metas:
            self._topics.delete(meta.name, partitioned=meta.partitions > 0, force=True)
        self._clear(ns)
        try:
            self._store.delete(ns)
        except ConditionFailed:
            raise NotFound(f"Namespace does not exist: {ns} (deleted meanwhile)") from None

    def _clear(self, ns: str) -> None:
        """Remove the namespace's permissions and reset its policies (each a versioned
        write, retried)."""

        def drop(permissions: NamespacePermissions) -> tuple[None, NamespacePermissions | None]:
            return None, (permissions if permissions.version else None)

        def reset(policies: NamespacePolicies) -> tuple[None, NamespacePolicies | None]:
            return None, (NamespacePolicies(version=policies.version) if policies.version else None)  # fmt: skip

        outcomes = [
            optimistic.update(
                lambda: self._permissions.get(ns),
                drop,
                lambda p: self._permissions.delete(ns, p),
                self._rt,
                UPDATE_ATTEMPTS,
            ),
            optimistic.update(
                lambda: self._policies.get(ns),
                reset,
                lambda p: self._policies.put(ns, p),
                self._rt,
                UPDATE_ATTEMPTS,
            ),
        ]
        if any(isinstance(o, optimistic.Conflict) for o in outcomes):
            raise ServiceUnitNotReady(f"The records of namespace {ns} kept changing; retry")


def policies_body(
    policies: NamespacePolicies, permissions: NamespacePermissions, cluster: str
) -> dict:
    """Pulsar's Policies JSON of a namespace, the fields Magnetar keeps (unset: null)."""
    return {
        "auth_policies": {
            "namespace_auth": actions_body(permissions.roles),
            "destination_auth": {t: actions_body(g) for t, g in sorted(permissions.topics.items())},
            "subscription_auth_roles": permissions.subscriptions_body(),
        },
        "replication_clusters": [cluster],
        "deduplicationEnabled": policies.deduplication,
        "message_ttl_in_seconds": policies.message_ttl_seconds,
        "retention_policies": policies.retention.to_body() if policies.retention else None,
        "delayed_delivery_policies": (
            policies.delayed_delivery.to_body() if policies.delayed_delivery else None
        ),
        "max_message_size": policies.max_message_size_bytes,
        "schema_compatibility_strategy": policies.schema_compatibility_strategy or "UNDEFINED",
        "is_allow_auto_update_schema": policies.allow_auto_update_schema,
        "schema_validation_enforced": bool(policies.schema_validation_enforced),
        "subscription_auth_mode": "None",
        "deleted": False,
    }
