"""Pulsar's authorization rules: every role of a small world against every route class."""

from __future__ import annotations

import pytest

from magnetar_core.domain.security import (
    AnyRole,
    AuthAction,
    AuthorizationError,
    AuthorizationPolicy,
    Consume,
    Grants,
    ListTopics,
    Lookup,
    NamespaceConsume,
    NamespacePermissions,
    Produce,
    Role,
    SuperuserOnly,
    TenantAdmin,
    TenantInfo,
    Unclassified,
)
from magnetar_wire.names import TopicName

P, C = AuthAction.PRODUCE, AuthAction.CONSUME
T = TopicName.parse("persistent://acme/orders/t")
T2 = TopicName.parse("persistent://acme/orders/t2")
NP = TopicName.parse("non-persistent://acme/orders/live")
POLICY = AuthorizationPolicy(superusers=frozenset({Role("root")}))
TENANTS = {
    "acme": TenantInfo(admin_roles=frozenset({Role("acme-admin")})),
    "other": TenantInfo(admin_roles=frozenset({Role("other-admin")})),
}
PERMISSIONS = (
    NamespacePermissions()
    .grant(Role("producer"), [P])
    .grant(Role("consumer"), [C])
    .grant(Role("billing"), [C])
    .grant(Role("functions-only"), [AuthAction.FUNCTIONS])
    .grant_topic(T, Role("topic-producer"), [P])
    .grant_subscription("billing", [Role("billing")])
)
GRANTS = Grants("acme", TENANTS["acme"], "acme/orders", PERMISSIONS)

REQUIREMENTS = {
    "superuser": SuperuserOnly("create tenant beta"),
    "any": AnyRole("list the clusters"),
    "admin": TenantAdmin("acme", "create namespace acme/orders", "acme/orders"),
    "list": ListTopics("acme", "acme/orders"),
    "ns-consume": NamespaceConsume(
        "acme", "acme/orders", "clear the backlog of namespace acme/orders"
    ),
    "lookup": Lookup(T),
    "produce": Produce(T),
    "produce-partition": Produce(T.partition(2)),
    "produce-t2": Produce(T2),
    "produce-non-persistent": Produce(NP),
    "consume": Consume(T),
    "consume-open-sub": Consume(T, "audit"),
    "consume-billing-sub": Consume(T, "billing"),
    "unclassified": Unclassified("PATCH", "/v1/anything"),
}
DATA = {"lookup", "produce", "produce-partition", "produce-t2", "produce-non-persistent",
        "consume", "consume-open-sub", "consume-billing-sub", "list", "ns-consume"}  # fmt: skip
ALLOWED = {
    "root": set(REQUIREMENTS) - {"unclassified"},
    "acme-admin": {"any", "admin"} | DATA,
    "other-admin": {"any"},
    "producer": {
        "any",
        "list",
        "lookup",
        "produce",
        "produce-partition",
        "produce-t2",
        "produce-non-persistent",
    },  # fmt: skip
    "consumer": {"any", "list", "lookup", "consume", "consume-open-sub", "ns-consume"},
    "billing": {
        "any",
        "list",
        "lookup",
        "consume",
        "consume-open-sub",
        "consume-billing-sub",
        "ns-consume",
    },  # fmt: skip
    "topic-producer": {"any", "lookup", "produce", "produce-partition"},
    "functions-only": {"any"},
    "stranger": {"any"},
}
"""Role -> the requirements it meets, as Pulsar's PulsarAuthorizationProvider decides."""

CASES = [
    pytest.param(
        role,
        key,
        key in allowed,
        id=f"{role} {'may' if key in allowed else 'may not'} {REQUIREMENTS[key].action}",
    )  # fmt: skip
    for role, allowed in ALLOWED.items()
    for key in REQUIREMENTS
]


@pytest.mark.parametrize(("role", "key", "allowed"), CASES)
def test_the_role_and_requirement_table(role, key, allowed):
    decision = POLICY.allows(Role(role), REQUIREMENTS[key], GRANTS)
    assert decision.allowed is allowed, decision.reason
    assert decision.reason


def test_a_produce_denial_names_the_role_the_topic_and_the_grant_command():
    reason = POLICY.allows(Role("consumer"), Produce(T), GRANTS).reason
    assert reason.startswith(
        "Role 'consumer' is not authorized to produce to persistent://acme/orders/t"
    )
    assert "magnetar admin namespaces grant-permission acme/orders --role consumer --actions produce" in reason  # fmt: skip


def test_a_restricted_subscription_denial_says_how_to_add_the_role():
    reason = POLICY.allows(Role("consumer"), Consume(T, "billing"), GRANTS).reason
    assert "subscription 'billing'" in reason and "restricted" in reason
    assert "grant-subscription-permission acme/orders --subscription billing --roles consumer" in reason  # fmt: skip


def test_a_role_without_consume_is_told_it_needs_consume_even_on_a_restricted_subscription():
    reason = POLICY.allows(Role("producer"), Consume(T, "billing"), GRANTS).reason
    assert "needs consume permission" in reason


def test_a_namespace_consume_denial_says_consume_on_the_namespace_is_needed():
    reason = POLICY.allows(Role("producer"), REQUIREMENTS["ns-consume"], GRANTS).reason
    assert "needs consume permission on the namespace" in reason
    assert "clear the backlog of namespace acme/orders" in reason


def test_a_lookup_denial_says_either_produce_or_consume_would_do():
    reason = POLICY.allows(Role("stranger"), Lookup(T), GRANTS).reason
    assert "needs produce or consume permission on the topic or its namespace" in reason


def test_tenant_and_superuser_denials_say_who_can_fix_them():
    admin = POLICY.allows(Role("other-admin"), REQUIREMENTS["admin"], GRANTS).reason
    assert "not an admin role of tenant 'acme'" in admin
    assert "magnetar admin tenants update acme --admin-roles other-admin" in admin
    superuser = POLICY.allows(Role("acme-admin"), REQUIREMENTS["superuser"], GRANTS).reason
    assert "create tenant beta" in superuser and "only a superuser" in superuser


def test_an_unclassified_route_is_refused_even_to_a_superuser_as_a_bug():
    decision = POLICY.allows(Role("root"), Unclassified("PATCH", "/v1/x"), GRANTS)
    assert not decision.allowed and "PATCH /v1/x" in decision.reason and "bug" in decision.reason


def test_grants_loaded_for_another_namespace_are_never_used():
    elsewhere = Grants("acme", TENANTS["acme"], "acme/other", PERMISSIONS)
    assert not POLICY.allows(Role("producer"), Produce(T), elsewhere).allowed
    other_tenant = Grants("other", TENANTS["acme"], "acme/orders", PERMISSIONS)
    assert not POLICY.allows(Role("acme-admin"), Produce(T), other_tenant).allowed


def test_a_tenant_that_does_not_exist_has_no_admin():
    missing = Grants("acme", None, "acme/orders", NamespacePermissions())
    assert not POLICY.allows(Role("acme-admin"), REQUIREMENTS["admin"], missing).allowed


def test_enforce_raises_a_403_authorization_error_with_the_reason():
    with pytest.raises(AuthorizationError) as refused:
        POLICY.enforce(Role("consumer"), Produce(T), GRANTS)
    assert refused.value.status == 403 and refused.value.code == "AuthorizationError"
    assert "produce to" in refused.value.message
    assert POLICY.enforce(Role("producer"), Produce(T), GRANTS).allowed


def test_a_policy_without_superusers_refuses_superuser_routes_to_everyone():
    assert not AuthorizationPolicy().allows(Role("root"), REQUIREMENTS["superuser"], GRANTS).allowed


def test_revoking_a_grant_takes_the_permission_away():
    revoked = Grants("acme", TENANTS["acme"], "acme/orders", PERMISSIONS.revoke(Role("producer")))
    assert not POLICY.allows(Role("producer"), Produce(T), revoked).allowed
