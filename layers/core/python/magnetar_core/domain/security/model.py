"""Apache Pulsar's security values: roles, actions, tenants and namespace permissions.

Pure values (no I/O). ``NamespacePermissions`` is Pulsar's ``AuthPolicies`` of one namespace:
grants to roles on the whole namespace (``namespace_auth``), grants on single topics
(``destination_auth``) and the roles allowed on named subscriptions
(``subscription_auth_roles``), with the version of the stored record. Every change returns a
new value; the admin bodies parse with Pulsar's JSON shapes and raise InvalidMessage (400)
naming what is wrong.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum

from magnetar_core.domain.errors import InvalidMessage
from magnetar_wire.names import TopicName

MAX_ROLE_LENGTH = 1024
"""Longest role name (an IAM principal ARN fits)."""


@dataclass(frozen=True, order=True)
class Role:
    """A role: a token's ``sub``, or an IAM principal ARN. Any non-empty text without
    surrounding blanks or control characters, up to ``MAX_ROLE_LENGTH`` characters."""

    name: str

    def __post_init__(self) -> None:
        name = self.name
        if (
            not isinstance(name, str)
            or not name
            or name != name.strip()
            or len(name) > MAX_ROLE_LENGTH
            or any(ord(c) < 32 or ord(c) == 127 for c in name)
        ):
            raise InvalidMessage(
                f"Invalid role {name!r}: a role is 1 to {MAX_ROLE_LENGTH} characters, without "
                "surrounding blanks or control characters"
            )

    def __str__(self) -> str:
        return self.name


class AuthAction(Enum):
    """Pulsar's AuthAction: what a grant allows (the names are Pulsar's)."""

    PRODUCE = "produce"
    CONSUME = "consume"
    FUNCTIONS = "functions"
    SOURCES = "sources"
    SINKS = "sinks"
    PACKAGES = "packages"

    @classmethod
    def parse_all(cls, body: object) -> frozenset[AuthAction]:
        """A grant body: a JSON list of action names (``["produce", "consume"]``). Raises
        InvalidMessage for anything else, naming the allowed actions."""
        allowed = [a.value for a in cls]
        if not isinstance(body, list) or not all(isinstance(a, str) for a in body):
            raise InvalidMessage(f"The body must be a JSON list of actions, each one of {allowed}")
        unknown = sorted(set(body) - set(allowed))
        if unknown:
            raise InvalidMessage(f"Unknown action(s) {unknown}; allowed: {allowed}")
        return frozenset(cls(a) for a in body)


RoleActions = Mapping[Role, frozenset[AuthAction]]
"""Role -> the actions granted to it."""


def _strings(body: Mapping[str, object], name: str) -> list[str]:
    value = body.get(name, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise InvalidMessage(f"'{name}' must be a JSON list of non-empty strings")
    return value


def actions_body(grants: RoleActions) -> dict[str, list[str]]:
    """Pulsar's JSON of a role -> actions map: ``{"role": ["consume", "produce"]}``."""
    return {r.name: sorted(a.value for a in grants[r]) for r in sorted(grants)}


@dataclass(frozen=True)
class TenantInfo:
    """Pulsar's TenantInfo: the roles that administer the tenant and the clusters it may
    use; ``version`` is the stored record's (0: not stored)."""

    admin_roles: frozenset[Role] = frozenset()
    allowed_clusters: frozenset[str] = frozenset()
    version: int = 0

    @classmethod
    def from_body(cls, body: object) -> TenantInfo:
        """Parse ``{"adminRoles": [...], "allowedClusters": [...]}`` (each optional, a list
        of strings). Raises InvalidMessage. Which clusters exist is the service's check."""
        if not isinstance(body, dict):
            raise InvalidMessage("The body must be a JSON object: adminRoles, allowedClusters")
        unknown = sorted(set(body) - {"adminRoles", "allowedClusters"})
        if unknown:
            raise InvalidMessage(
                f"Unknown field(s) {unknown} in TenantInfo; allowed: adminRoles, allowedClusters"
            )
        roles = frozenset(Role(r) for r in _strings(body, "adminRoles"))
        return cls(roles, frozenset(_strings(body, "allowedClusters")))

    def to_body(self) -> dict[str, list[str]]:
        """Pulsar's JSON shape, lists sorted."""
        return {
            "adminRoles": sorted(r.name for r in self.admin_roles),
            "allowedClusters": sorted(self.allowed_clusters),
        }

    def with_version(self, version: int) -> TenantInfo:
        return replace(self, version=version)


def _topic_key(topic: TopicName) -> str:
    """Grants on a partitioned topic hold for each partition: keyed by the base topic."""
    return str(topic.base)


@dataclass(frozen=True)
class NamespacePermissions:
    """Pulsar's AuthPolicies of one namespace. ``roles``: grants on every topic of the
    namespace; ``topics``: grants on one topic (full name of the base topic); ``subscriptions``:
    subscription -> the only roles that may consume it (none listed: any role with consume);
    ``version``: the stored record's (0: none stored)."""

    roles: Mapping[Role, frozenset[AuthAction]] = field(default_factory=dict)
    topics: Mapping[str, Mapping[Role, frozenset[AuthAction]]] = field(default_factory=dict)
    subscriptions: Mapping[str, frozenset[Role]] = field(default_factory=dict)
    version: int = 0

    def namespace_actions(self, role: Role) -> frozenset[AuthAction]:
        """What ``role`` may do on every topic of the namespace."""
        return self.roles.get(role, frozenset())

    def topic_actions(self, topic: TopicName, role: Role) -> frozenset[AuthAction]:
        """What ``role`` may do on ``topic`` (a partition: its topic's grants): namespace
        grants and the topic's own, together."""
        own = self.topics.get(_topic_key(topic), {}).get(role, frozenset())
        return self.namespace_actions(role) | own

    def subscription_roles(self, subscription: str) -> frozenset[Role]:
        """The roles a subscription is restricted to (empty: not restricted)."""
        return self.subscriptions.get(subscription, frozenset())

    def grant(self, role: Role, actions: Iterable[AuthAction]) -> NamespacePermissions:
        """``role``'s namespace grant replaced by ``actions`` (Pulsar's grant-permission)."""
        return replace(self, roles={**self.roles, role: frozenset(actions)})

    def revoke(self, role: Role) -> NamespacePermissions:
        """``role``'s namespace grant removed (Pulsar's revoke-permission)."""
        return replace(self, roles={r: a for r, a in self.roles.items() if r != role})

    def grant_topic(self, topic: TopicName, role: Role, actions: Iterable[AuthAction]) -> NamespacePermissions:  # fmt: skip
        """``role``'s grant on ``topic`` replaced by ``actions``."""
        key = _topic_key(topic)
        grants = {**self.topics.get(key, {}), role: frozenset(actions)}
        return replace(self, topics={**self.topics, key: grants})

    def revoke_topic(self, topic: TopicName, role: Role) -> NamespacePermissions:
        """``role``'s grant on ``topic`` removed (a topic left with no grant is dropped)."""
        key = _topic_key(topic)
        grants = {r: a for r, a in self.topics.get(key, {}).items() if r != role}
        topics = {k: v for k, v in self.topics.items() if k != key}
        if grants:
            topics[key] = grants
        return replace(self, topics=topics)

    def grant_subscription(self, subscription: str, roles: Iterable[Role]) -> NamespacePermissions:  # fmt: skip
        """``roles`` added to those allowed on ``subscription`` (Pulsar's
        grant-subscription-permission)."""
        allowed = self.subscription_roles(subscription) | frozenset(roles)
        return replace(self, subscriptions={**self.subscriptions, subscription: allowed})

    def revoke_subscription(self, subscription: str, role: Role) -> NamespacePermissions:
        """``role`` removed from those allowed on ``subscription``; when none is left the
        subscription is no longer restricted."""
        left = self.subscription_roles(subscription) - {role}
        subscriptions = {s: r for s, r in self.subscriptions.items() if s != subscription}
        if left:
            subscriptions[subscription] = left
        return replace(self, subscriptions=subscriptions)

    def topic_permissions_body(self, topic: TopicName) -> dict[str, list[str]]:
        """Pulsar's ``GET .../{topic}/permissions``: each role's actions on the topic,
        namespace grants included."""
        roles = set(self.roles) | set(self.topics.get(_topic_key(topic), {}))
        return actions_body({r: self.topic_actions(topic, r) for r in roles})

    def subscriptions_body(self) -> dict[str, list[str]]:
        """Pulsar's subscription permissions JSON: ``{"sub": ["role", ...]}``."""
        return {
            s: sorted(r.name for r in self.subscriptions[s]) for s in sorted(self.subscriptions)
        }

    def with_version(self, version: int) -> NamespacePermissions:
        return replace(self, version=version)
