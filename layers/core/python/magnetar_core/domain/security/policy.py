"""Apache Pulsar's authorization rules (``PulsarAuthorizationProvider``), as small rules.

A *rule* looks at one ``Check`` (role, requirement, grants, superusers) and gives a
``Decision``; rules compose with ``first_of`` (the first that allows, else the last one's
denial) and ``all_of``. Each requirement class has one composed rule in ``RULES``:

* superusers may do anything (but call an unclassified route);
* a tenant's admin roles administer it and may produce and consume on all its topics;
* ``produce`` / ``consume`` come from a grant on the namespace or on the topic (a partition
  is covered by its topic's grants); consuming a subscription that has a permission entry
  needs the role to be listed in it too;
* lookups (metadata, stats) need produce or consume; listing a namespace's topics needs
  produce or consume on the whole namespace;
* a route nobody classified is denied to every role.

A denial's ``reason`` is the 403 message: who was refused what, and the command that fixes it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from magnetar_core.domain.errors import MagnetarError
from magnetar_core.domain.security.model import AuthAction, NamespacePermissions, Role, TenantInfo
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


class AuthorizationError(MagnetarError):
    """Pulsar's AuthorizationError (HTTP 403): the role may not do this; nothing changed."""

    code = "AuthorizationError"
    status = 403


@dataclass(frozen=True)
class Decision:
    """Whether a role may do what a requirement says; ``reason`` says why (the 403 message
    when denied, an audit note when allowed)."""

    allowed: bool
    reason: str

    def enforce(self) -> None:
        """Raise AuthorizationError with the reason when denied."""
        if not self.allowed:
            raise AuthorizationError(self.reason)


@dataclass(frozen=True)
class Grants:
    """What the policy needs about the requirement's tenant and namespace, as the stores
    hold it: the tenant's info (None: no such tenant) and the namespace's permissions. Their
    names say which tenant and namespace they were loaded for; grants loaded for another
    one than the requirement's are never used."""

    tenant: str | None = None
    tenant_info: TenantInfo | None = None
    namespace: str | None = None
    """``tenant/namespace``."""
    permissions: NamespacePermissions = field(default_factory=NamespacePermissions)


@dataclass(frozen=True)
class Check:
    """One question to the rules."""

    role: Role
    requirement: Requirement
    grants: Grants
    superusers: frozenset[Role]

    def deny(self, why: str) -> Decision:
        return Decision(False, f"Role '{self.role}' is not authorized to {self.requirement.action}: {why}")  # fmt: skip


Rule = Callable[[Check], Decision]


def first_of(*rules: Rule) -> Rule:
    """The first rule's decision that allows; else the last rule's denial."""

    def rule(check: Check) -> Decision:
        decision = Decision(False, "no rule")
        for each in rules:
            decision = each(check)
            if decision.allowed:
                return decision
        return decision

    return rule


def all_of(*rules: Rule) -> Rule:
    """The first denial; else the last rule's decision (it allows)."""

    def rule(check: Check) -> Decision:
        decision = Decision(True, "no rule")
        for each in rules:
            decision = each(check)
            if not decision.allowed:
                return decision
        return decision

    return rule


def superuser(check: Check) -> Decision:
    if check.role in check.superusers:
        return Decision(True, f"role '{check.role}' is a superuser")
    return check.deny("only a superuser role may (the deployment's superuser roles)")


def tenant_admin(check: Check) -> Decision:
    tenant = check.requirement.tenant
    info = check.grants.tenant_info if check.grants.tenant == tenant else None
    if info is not None and check.role in info.admin_roles:
        return Decision(True, f"role '{check.role}' is an admin of tenant '{tenant}'")
    return check.deny(
        f"it is not an admin role of tenant '{tenant}'; a superuser adds it with "
        f"`magnetar admin tenants update {tenant} --admin-roles {check.role},...`"
    )


def _permissions(check: Check) -> NamespacePermissions:
    if check.grants.namespace != check.requirement.namespace:
        return NamespacePermissions()
    return check.grants.permissions


def granted(action: AuthAction) -> Rule:
    """The role holds ``action`` on the requirement's topic (its namespace's grant or the
    topic's own)."""

    def rule(check: Check) -> Decision:
        requirement = check.requirement
        if not isinstance(requirement, Lookup | Produce | Consume):
            return nobody(check)
        if action in _permissions(check).topic_actions(requirement.topic, check.role):
            return Decision(True, f"role '{check.role}' holds {action.value} on {requirement.topic}")  # fmt: skip
        return _needs(check, action.value)

    return rule


def namespace_granted(action: AuthAction) -> Rule:
    """The role holds ``action`` on the requirement's whole namespace."""

    def rule(check: Check) -> Decision:
        if action in _permissions(check).namespace_actions(check.role):
            return Decision(True, f"role '{check.role}' holds {action.value} on {check.requirement.namespace}")  # fmt: skip
        return _needs(check, action.value)

    return rule


def _needs(check: Check, actions: str) -> Decision:
    namespace = check.requirement.namespace
    where = (
        "namespace"
        if isinstance(
            check.requirement, ListTopics | NamespaceConsume | Functions | NamespaceFunctions
        )
        else "topic or its namespace"
    )
    return check.deny(
        f"it needs {actions.replace(',', ' or ')} permission on the {where}; a tenant admin "
        f"grants it with `magnetar admin namespaces grant-permission {namespace} --role "
        f"{check.role} --actions {actions.split(',')[0]}`"
    )


def needs(actions: str) -> Rule:
    """A denial saying the role needs one of ``actions`` (comma-separated)."""
    return lambda check: _needs(check, actions)


def subscription_open(check: Check) -> Decision:
    """The requirement names no subscription, or the subscription has no permission entry,
    or the role is listed in it."""
    requirement = check.requirement
    if not isinstance(requirement, Consume):
        return nobody(check)
    subscription = requirement.subscription
    allowed = _permissions(check).subscription_roles(subscription) if subscription else None
    if not allowed or check.role in allowed:
        return Decision(True, f"subscription '{subscription}' is open to role '{check.role}'")
    return check.deny(
        f"the subscription is restricted to other roles; a tenant admin adds this one with "
        f"`magnetar admin namespaces grant-subscription-permission {requirement.namespace} "
        f"--subscription {subscription} --roles {check.role}`"
    )


def anyone(check: Check) -> Decision:
    return Decision(True, f"role '{check.role}' is authenticated")


def nobody(check: Check) -> Decision:
    return check.deny(
        "the route has no authorization rule, so every role is refused; this is a Magnetar "
        "bug, please report it"
    )


RULES: dict[type, Rule] = {
    SuperuserOnly: superuser,
    AnyRole: anyone,
    TenantAdmin: first_of(superuser, tenant_admin),
    ListTopics: first_of(
        superuser,
        tenant_admin,
        namespace_granted(AuthAction.PRODUCE),
        namespace_granted(AuthAction.CONSUME),
        needs("produce,consume"),
    ),
    NamespaceConsume: first_of(
        superuser, tenant_admin, namespace_granted(AuthAction.CONSUME), needs("consume")
    ),
    Lookup: first_of(
        superuser,
        tenant_admin,
        granted(AuthAction.PRODUCE),
        granted(AuthAction.CONSUME),
        needs("produce,consume"),
    ),
    Produce: first_of(superuser, tenant_admin, granted(AuthAction.PRODUCE)),
    Consume: first_of(
        superuser, tenant_admin, all_of(granted(AuthAction.CONSUME), subscription_open)
    ),
    Functions: first_of(
        superuser, tenant_admin, namespace_granted(AuthAction.FUNCTIONS), needs("functions")
    ),
    NamespaceFunctions: first_of(
        superuser, tenant_admin, namespace_granted(AuthAction.FUNCTIONS), needs("functions")
    ),
    Unclassified: nobody,
}
"""The rule of each requirement class."""


@dataclass(frozen=True)
class AuthorizationPolicy:
    """Pulsar's authorization with the deployment's ``superusers``."""

    superusers: frozenset[Role] = frozenset()

    def allows(self, role: Role, requirement: Requirement, grants: Grants) -> Decision:
        """Whether ``role`` meets ``requirement`` given ``grants`` (loaded for the
        requirement's tenant and namespace)."""
        rule = RULES.get(type(requirement), nobody)
        return rule(Check(role, requirement, grants, self.superusers))

    def enforce(self, role: Role, requirement: Requirement, grants: Grants) -> Decision:
        """``allows``, raising AuthorizationError (403) with the reason when denied."""
        decision = self.allows(role, requirement, grants)
        decision.enforce()
        return decision
