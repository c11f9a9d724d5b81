"""Trigger and function routes need the namespace's ``functions`` permission (or a superuser or tenant
admin), as Pulsar's functions operations; produce or consume is not enough."""

from __future__ import annotations

from magnetar_core.domain.security import (
    AuthAction,
    AuthorizationPolicy,
    Functions,
    NamespacePermissions,
    Role,
    TenantInfo,
)
from magnetar_core.domain.security.policy import Grants
from magnetar_wire.names import TopicName

TOPIC = TopicName.parse("persistent://acme/orders/t")
PERMISSIONS = (
    NamespacePermissions()
    .grant(Role("fn"), [AuthAction.FUNCTIONS])
    .grant(Role("app"), [AuthAction.PRODUCE, AuthAction.CONSUME])
    .grant_topic(TOPIC, Role("topic-fn"), [AuthAction.FUNCTIONS])
)
GRANTS = Grants("acme", TenantInfo(frozenset({Role("boss")}), frozenset()), "acme/orders", PERMISSIONS)  # fmt: skip
POLICY = AuthorizationPolicy(frozenset({Role("root")}))
REQUIREMENT = Functions(TOPIC, "create or replace trigger t1 of persistent://acme/orders/t")


def test_superusers_tenant_admins_and_namespace_functions_holders_may_manage_triggers():
    for role in ("root", "boss", "fn"):
        assert POLICY.allows(Role(role), REQUIREMENT, GRANTS).allowed, role


def test_produce_consume_or_a_topic_grant_of_functions_is_not_enough_and_the_403_says_what_is():
    for role in ("app", "topic-fn", "stranger"):
        decision = POLICY.allows(Role(role), REQUIREMENT, GRANTS)
        assert not decision.allowed, role
    reason = POLICY.allows(Role("app"), REQUIREMENT, GRANTS).reason
    assert "functions permission on the namespace" in reason
    assert "--actions functions" in reason


def test_function_routes_need_the_namespaces_functions_permission_as_trigger_routes():
    from magnetar_core.domain.security import NamespaceFunctions
    from magnetar_core.domain.security.routes import requirement_for

    params = {"tenant": "acme", "namespace": "orders", "name": "f"}
    requirement = requirement_for("PUT", "/admin/v3/functions/{tenant}/{namespace}/{name}", params)  # fmt: skip
    assert requirement == NamespaceFunctions("acme", "acme/orders", "create or replace function acme/orders/f")  # fmt: skip
    for role in ("root", "boss", "fn"):
        assert POLICY.allows(Role(role), requirement, GRANTS).allowed, role
    for role in ("app", "topic-fn", "stranger"):
        assert not POLICY.allows(Role(role), requirement, GRANTS).allowed, role
    assert "--actions functions" in POLICY.allows(Role("app"), requirement, GRANTS).reason
