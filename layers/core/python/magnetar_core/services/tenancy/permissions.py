"""Permission administration with Pulsar's paths and rules: namespace grants
(``.../permissions/{role}``), subscription permissions (``.../permissions/subscription/
{subscription}``) and topic grants (``/admin/v2/{domain}/.../{topic}/permissions/{role}``).

Every change is a versioned read-modify-write of the namespace's one permissions record
(``services.optimistic``); the namespace must exist (NotFound, 404, "Namespace does not
exist"). A grant replaces the role's actions, as Pulsar's grant-permission does. A topic
grant does not need the topic to exist (grant first, create later), as in Pulsar.
"""

from __future__ import annotations

from collections.abc import Callable

from magnetar_core.domain.errors import (
    InvalidMessage,
    PreconditionFailed,
    ServiceUnitNotReady,
)
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.security.model import (
    AuthAction,
    NamespacePermissions,
    Role,
    actions_body,
)
from magnetar_core.ports import PermissionStore
from magnetar_core.services import optimistic
from magnetar_core.services.tenancy import Registry, namespace_name
from magnetar_wire.names import TopicName

UPDATE_ATTEMPTS = 8
MAX_SUBSCRIPTION_ROLES = 1000
"""Most roles one subscription-permission request may name."""

Change = Callable[[NamespacePermissions], NamespacePermissions]


def _roles(body: object) -> frozenset[Role]:
    """Pulsar's subscription-permission body: a JSON list of roles; raises InvalidMessage."""
    if not isinstance(body, list) or not body or not all(isinstance(r, str) for r in body):
        raise InvalidMessage('The body must be a non-empty JSON list of roles: ["role", ...]')
    if len(body) > MAX_SUBSCRIPTION_ROLES:
        raise InvalidMessage(f"At most {MAX_SUBSCRIPTION_ROLES} roles per request")
    return frozenset(Role(r) for r in body)


class Permissions:
    """Reads and changes a namespace's permissions; see the module docstring."""

    def __init__(self, registry: Registry, store: PermissionStore, runtime: Runtime) -> None:
        self._registry = registry
        self._store = store
        self._rt = runtime

    def _read(self, namespace: str) -> NamespacePermissions:
        self._registry.require_namespace(namespace)
        return self._store.get(namespace)

    def _update(self, namespace: str, change: Change) -> None:
        """One versioned change of the namespace's permissions; raises NotFound,
        ServiceUnitNotReady when other writers keep winning."""
        self._registry.require_namespace(namespace)
        outcome = optimistic.update(
            lambda: self._store.get(namespace),
            lambda permissions: (None, change(permissions)),
            lambda permissions: self._store.put(namespace, permissions),
            self._rt,
            UPDATE_ATTEMPTS,
        )
        if isinstance(outcome, optimistic.Conflict):
            raise ServiceUnitNotReady(f"The permissions of {namespace} kept changing; retry")

    # ------------------------------------------------------------ namespace grants
    def namespace(self, tenant: str, namespace: str) -> dict[str, list[str]]:
        """Pulsar's ``GET .../permissions``: role -> actions granted on the namespace."""
        return actions_body(self._read(namespace_name(tenant, namespace)).roles)

    def grant(self, tenant: str, namespace: str, role: str, body: object) -> None:
        """Grant ``role`` the actions of ``body`` (a JSON list) on the whole namespace,
        replacing what it had. Raises InvalidMessage, InvalidTopicName, NotFound."""
        ns, who, actions = namespace_name(tenant, namespace), Role(role), AuthAction.parse_all(body)  # fmt: skip
        self._update(ns, lambda p: p.grant(who, actions))

    def revoke(self, tenant: str, namespace: str, role: str) -> None:
        """Remove ``role``'s namespace grant (none: nothing changes). Raises
        InvalidMessage, InvalidTopicName, NotFound."""
        ns, who = namespace_name(tenant, namespace), Role(role)
        self._update(ns, lambda p: p.revoke(who))

    # ------------------------------------------------------------ subscription permissions
    def subscriptions(self, tenant: str, namespace: str) -> dict[str, list[str]]:
        """Pulsar's ``GET .../permissions/subscription``: subscription -> its roles."""
        return self._read(namespace_name(tenant, namespace)).subscriptions_body()

    def grant_subscription(self, tenant: str, namespace: str, subscription: str, body: object) -> None:  # fmt: skip
        """Add the roles of ``body`` (a JSON list) to those allowed on ``subscription``: from
        then on only they (and admins) consume it. Raises InvalidMessage, InvalidTopicName,
        NotFound."""
        ns, roles = namespace_name(tenant, namespace), _roles(body)
        self._update(ns, lambda p: p.grant_subscription(subscription, roles))

    def revoke_subscription(self, tenant: str, namespace: str, subscription: str, role: str) -> None:  # fmt: skip
        """Remove ``role`` from those allowed on ``subscription`` (the last one removed:
        the subscription is no longer restricted). Raises InvalidMessage, InvalidTopicName,
        NotFound, PreconditionFailed (412) when the subscription has no permission set."""
        ns, who = namespace_name(tenant, namespace), Role(role)

        def change(p: NamespacePermissions) -> NamespacePermissions:
            if not p.subscription_roles(subscription):
                raise PreconditionFailed(
                    f"Subscription {subscription} of namespace {ns} has no permission set"
                )
            return p.revoke_subscription(subscription, who)

        self._update(ns, change)

    # ------------------------------------------------------------ topic grants
    def topic(self, topic: TopicName) -> dict[str, list[str]]:
        """Pulsar's ``GET .../{topic}/permissions``: each role's actions on the topic, its
        namespace's grants included. Raises NotFound."""
        return self._read(_ns(topic)).topic_permissions_body(topic)

    def grant_topic(self, topic: TopicName, role: str, body: object) -> None:
        """Grant ``role`` the actions of ``body`` on ``topic`` (a partitioned topic: all its
        partitions), replacing its topic grant. Raises InvalidMessage, NotFound."""
        who, actions = Role(role), AuthAction.parse_all(body)
        self._update(_ns(topic), lambda p: p.grant_topic(topic, who, actions))

    def revoke_topic(self, topic: TopicName, role: str) -> None:
        """Remove ``role``'s grant on ``topic``. Raises InvalidMessage, NotFound,
        PreconditionFailed (412) "Permissions are not set at the topic level"."""
        who = Role(role)

        def change(p: NamespacePermissions) -> NamespacePermissions:
            if who not in p.topics.get(str(topic.base), {}):
                raise PreconditionFailed(
                    f"Permissions are not set at the topic level: role '{who}' has no grant "
                    f"on {topic.base} (namespace grants are revoked on the namespace)"
                )
            return p.revoke_topic(topic, who)

        self._update(_ns(topic), change)


def _ns(topic: TopicName) -> str:
    return f"{topic.tenant}/{topic.namespace}"
