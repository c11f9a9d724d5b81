"""Apache Pulsar's security model, pure: roles, tenants, permissions, route classes and the
authorization policy (see docs/security.md).

* ``model``: Role, AuthAction, TenantInfo, NamespacePermissions (Pulsar's AuthPolicies).
* ``requirements``: what a route needs (SuperuserOnly, TenantAdmin, Produce, Consume, ...).
* ``policy``: AuthorizationPolicy.allows(role, requirement, grants) -> Decision.
* ``routes``: every HTTP route's class, as data; ``requirement_for``.
* ``authentication``: a token's role (``magnetar_wire.tokens`` does the JWT work).
"""

from magnetar_core.domain.security.model import AuthAction, NamespacePermissions, Role, TenantInfo
from magnetar_core.domain.security.policy import (
    AuthorizationError,
    AuthorizationPolicy,
    Decision,
    Grants,
)
from magnetar_core.domain.security.requirements import (
    AnyRole,
    Consume,
    Functions,
    ListTopics,
    Lookup,
    NamespaceConsume,
    NamespaceFunctions,
    Produce,
    Requirement,
    SuperuserOnly,
    TenantAdmin,
    Unclassified,
)

__all__ = [
    "AnyRole",
    "AuthAction",
    "AuthorizationError",
    "AuthorizationPolicy",
    "Consume",
    "Functions",
    "NamespaceFunctions",
    "Decision",
    "Grants",
    "ListTopics",
    "NamespaceConsume",
    "Lookup",
    "NamespacePermissions",
    "Produce",
    "Requirement",
    "Role",
    "SuperuserOnly",
    "TenantAdmin",
    "TenantInfo",
    "Unclassified",
]
