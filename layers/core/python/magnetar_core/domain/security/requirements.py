"""What a route needs from the caller's role, one small value per route class.

Each requirement says which tenant and namespace it concerns (what the edge loads the
tenant's info and the namespace's permissions for) and what the caller was trying to do,
in words, for the 403 message. ``policy.AuthorizationPolicy`` holds the rule of each.
"""

from __future__ import annotations

from dataclasses import dataclass

from magnetar_wire.names import TopicName


@dataclass(frozen=True)
class SuperuserOnly:
    """Only a superuser (clusters, tenants, the broker's health)."""

    action: str
    """What the route does, as words after "to": ``create tenant acme``."""

    tenant: str | None = None
    namespace: str | None = None


@dataclass(frozen=True)
class AnyRole:
    """Any authenticated role (``GET /admin/v2/clusters``, as Pulsar)."""

    action: str
    tenant: str | None = None
    namespace: str | None = None


@dataclass(frozen=True)
class TenantAdmin:
    """A superuser or an admin role of ``tenant``: namespaces, their policies and
    permissions, topic creation, deletion and policies, compaction."""

    tenant: str
    action: str
    namespace: str | None = None
    """``tenant/namespace`` when the route concerns one."""


@dataclass(frozen=True)
class ListTopics:
    """List a namespace's topics: a tenant admin, or a role with produce or consume on the
    whole namespace (Pulsar's GET_TOPICS)."""

    tenant: str
    namespace: str
    """``tenant/namespace``."""

    @property
    def action(self) -> str:
        return f"list the topics of namespace {self.namespace}"


@dataclass(frozen=True)
class NamespaceConsume:
    """Clear the backlog of, or unsubscribe, a subscription across a namespace's topics: a
    tenant admin, or a role with consume on the whole namespace (Pulsar's CLEAR_BACKLOG and
    UNSUBSCRIBE namespace operations)."""

    tenant: str
    namespace: str
    """``tenant/namespace``."""
    what: str = ""
    """What the route does, as words after "to"."""

    @property
    def action(self) -> str:
        return self.what or f"consume the subscriptions of namespace {self.namespace}"


@dataclass(frozen=True)
class _OnTopic:
    topic: TopicName

    @property
    def tenant(self) -> str:
        return self.topic.tenant

    @property
    def namespace(self) -> str:
        """``tenant/namespace``."""
        return f"{self.topic.tenant}/{self.topic.namespace}"


@dataclass(frozen=True)
class Lookup(_OnTopic):
    """Read a topic's metadata and stats: produce or consume on it (Pulsar's LOOKUP,
    GET_STATS, GET_METADATA)."""

    @property
    def action(self) -> str:
        return f"look up {self.topic}"


@dataclass(frozen=True)
class Produce(_OnTopic):
    """Register a producer, produce, upload a large entry: produce on the topic."""

    @property
    def action(self) -> str:
        return f"produce to {self.topic}"


@dataclass(frozen=True)
class Consume(_OnTopic):
    """Subscribe, receive, ack, nack, seek, unsubscribe (on ``subscription``), or read the
    topic's subscriptions and last message id (``subscription`` None): consume on the topic,
    and, when the subscription is restricted to named roles, being one of them."""

    subscription: str | None = None

    @property
    def action(self) -> str:
        if self.subscription is None:
            return f"consume from {self.topic}"
        return f"consume subscription '{self.subscription}' of {self.topic}"


@dataclass(frozen=True)
class Functions(_OnTopic):
    """Create, read, list or delete a topic's triggers: a superuser, a tenant admin, or a
    role holding ``functions`` on the topic's namespace (Pulsar's functions operations)."""

    what: str = ""
    """What the route does, as words after "to"."""

    @property
    def action(self) -> str:
        return self.what or f"manage the triggers of {self.topic}"


@dataclass(frozen=True)
class NamespaceFunctions:
    """Create, read, list or delete a namespace's Pulsar Functions: a superuser, a tenant
    admin, or a role holding ``functions`` on the namespace (Pulsar's functions operations)."""

    tenant: str
    namespace: str
    """``tenant/namespace``."""
    what: str = ""
    """What the route does, as words after "to"."""

    @property
    def action(self) -> str:
        return self.what or f"manage the functions of namespace {self.namespace}"


@dataclass(frozen=True)
class Unclassified:
    """A route nobody classified: denied to every role (a Magnetar bug to report)."""

    method: str
    path: str
    tenant: str | None = None
    namespace: str | None = None

    @property
    def action(self) -> str:
        return f"call {self.method} {self.path}"


Requirement = (
    SuperuserOnly
    | AnyRole
    | TenantAdmin
    | ListTopics
    | NamespaceConsume
    | Lookup
    | Produce
    | Consume
    | Functions
    | NamespaceFunctions
    | Unclassified
)
"""Every route class."""
