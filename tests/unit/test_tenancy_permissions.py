"""Namespace, subscription and topic permissions (issue 12) on the in-memory stores:
Pulsar's paths' rules and errors, refusals that change nothing, versioned writes."""

from __future__ import annotations

import pytest

from magnetar_core.adapters.memory import memory_stores
from magnetar_core.domain.errors import InvalidMessage, NotFound, PreconditionFailed
from magnetar_core.domain.security import Role
from magnetar_core.engine import Engine
from magnetar_local.memory_service import memory_settings
from magnetar_local.tenancy import ensure_namespaces
from magnetar_wire.names import TopicName

TOPIC = TopicName.parse("persistent://acme/orders/t")


@pytest.fixture
def stores():
    return memory_stores()


@pytest.fixture
def engine(stores) -> Engine:
    engine = Engine.assemble(memory_settings(), stores)
    ensure_namespaces(engine, "acme/orders")
    return engine


def test_a_namespace_grant_replaces_the_roles_actions_and_a_revoke_removes_it(engine):
    engine.permissions.grant("acme", "orders", "app", ["produce", "consume"])
    engine.permissions.grant("acme", "orders", "ops", ["functions"])
    assert engine.permissions.namespace("acme", "orders") == {
        "app": ["consume", "produce"], "ops": ["functions"]}  # fmt: skip
    engine.permissions.grant("acme", "orders", "app", ["consume"])
    engine.permissions.revoke("acme", "orders", "ops")
    engine.permissions.revoke("acme", "orders", "never-granted")  # nothing to revoke: fine
    assert engine.permissions.namespace("acme", "orders") == {"app": ["consume"]}


def test_subscription_permissions_add_roles_and_the_last_revoke_lifts_the_restriction(engine):
    engine.permissions.grant_subscription("acme", "orders", "billing", ["app"])
    engine.permissions.grant_subscription("acme", "orders", "billing", ["audit", "app"])
    assert engine.permissions.subscriptions("acme", "orders") == {"billing": ["app", "audit"]}
    engine.permissions.revoke_subscription("acme", "orders", "billing", "app")
    engine.permissions.revoke_subscription("acme", "orders", "billing", "audit")
    assert engine.permissions.subscriptions("acme", "orders") == {}
    with pytest.raises(PreconditionFailed, match="has no permission set"):
        engine.permissions.revoke_subscription("acme", "orders", "billing", "app")


def test_a_topic_grant_adds_to_the_namespace_grants_and_needs_no_topic(engine):
    engine.permissions.grant("acme", "orders", "app", ["consume"])
    engine.permissions.grant_topic(TOPIC, "app", ["produce"])
    engine.permissions.grant_topic(TOPIC.partition(1), "writer", ["produce"])  # its topic's
    assert engine.permissions.topic(TOPIC) == {"app": ["consume", "produce"], "writer": ["produce"]}  # fmt: skip
    stored = engine.namespace_admin.policies("acme", "orders")["auth_policies"]
    assert stored["destination_auth"] == {str(TOPIC): {"app": ["produce"], "writer": ["produce"]}}
    engine.permissions.revoke_topic(TOPIC, "writer")
    with pytest.raises(PreconditionFailed, match="Permissions are not set at the topic level"):
        engine.permissions.revoke_topic(TOPIC, "writer")
    assert engine.permissions.topic(TOPIC) == {"app": ["consume", "produce"]}


@pytest.mark.parametrize(
    ("act", "error"),
    [
        (lambda e: e.permissions.grant("acme", "orders", "app", ["write"]), InvalidMessage),
        (lambda e: e.permissions.grant("acme", "orders", "app", "produce"), InvalidMessage),
        (lambda e: e.permissions.grant("acme", "orders", " app", ["produce"]), InvalidMessage),
        (lambda e: e.permissions.grant_subscription("acme", "orders", "s", []), InvalidMessage),
        (lambda e: e.permissions.grant_subscription("acme", "orders", "s", "app"), InvalidMessage),
        (lambda e: e.permissions.grant_topic(TOPIC, "app", None), InvalidMessage),
        (lambda e: e.permissions.grant("acme", "nope", "app", ["produce"]), NotFound),
        (lambda e: e.permissions.revoke("acme", "nope", "app"), NotFound),
        (lambda e: e.permissions.namespace("acme", "nope"), NotFound),
        (lambda e: e.permissions.subscriptions("acme", "nope"), NotFound),
        (lambda e: e.permissions.topic(TopicName.parse("persistent://acme/nope/t")), NotFound),
    ],
)
def test_bad_grants_and_missing_namespaces_are_refused_and_change_nothing(engine, stores, act, error):  # fmt: skip
    engine.permissions.grant("acme", "orders", "app", ["consume"])
    before = stores.permissions.get("acme/orders")
    with pytest.raises(error):
        act(engine)
    assert stores.permissions.get("acme/orders") == before
    assert stores.permissions.get("acme/nope").version == 0


def test_a_grant_that_loses_a_race_is_retried_and_keeps_the_winners_grant(engine, stores, monkeypatch):  # fmt: skip
    read = stores.permissions.get
    raced: list[str] = []

    def read_then_lose_the_race(namespace: str):
        permissions = read(namespace)
        if not raced:
            raced.append(namespace)
            stores.permissions.put(namespace, permissions.grant(Role("other"), []))
        return permissions

    monkeypatch.setattr(stores.permissions, "get", read_then_lose_the_race)
    engine.permissions.grant("acme", "orders", "app", ["produce"])
    assert raced == ["acme/orders"]
    assert read("acme/orders").roles.keys() == {Role("app"), Role("other")}
