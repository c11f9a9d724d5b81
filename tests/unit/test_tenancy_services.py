"""Tenants, clusters and namespaces (issue 12) on the in-memory stores: Pulsar's rules and
errors, and refusals that change nothing."""

from __future__ import annotations

import pytest

from magnetar_core.adapters.memory import memory_stores
from magnetar_core.domain.errors import (
    Conflict,
    InvalidMessage,
    InvalidTopicName,
    NotFound,
    PreconditionFailed,
    TopicNotFound,
)
from magnetar_core.engine import Engine
from magnetar_local.memory_service import memory_settings
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.names import TopicName

CLUSTERS = {"allowedClusters": ["magnetar"]}


@pytest.fixture
def stores():
    return memory_stores()


@pytest.fixture
def engine(stores) -> Engine:
    """An engine on fresh stores, the cluster initialized (``public``, ``public/default``)."""
    engine = Engine.assemble(memory_settings(), stores)
    assert engine.tenants.initialize_cluster() is True
    return engine


def entry() -> bytes:
    return encode_entry(
        [EntryMessage(payload=b"x", sequence_id=0, publish_time_ms=1)], producer_name="p"
    )


def snapshot(engine: Engine) -> tuple:
    """What the tenancy routes can change, read back."""
    tenants = {t: engine.tenants.get(t) for t in engine.tenants.names()}
    namespaces = {t: engine.namespace_admin.names(t) for t in tenants}
    return tenants, namespaces


# ------------------------------------------------------------------ clusters and tenants
def test_the_cluster_is_the_settings_one_and_public_exists_from_the_start(stores):
    engine = Engine.assemble(memory_settings(cluster_name="eu-1"), stores)
    assert engine.tenants.clusters() == ["eu-1"]
    assert engine.tenants.names() == ["public"]  # initialized on first use
    assert engine.tenants.get("public") == {"adminRoles": [], "allowedClusters": ["eu-1"]}
    assert engine.namespace_admin.names("public") == ["public/default"]


def test_a_tenant_is_created_read_updated_and_listed(engine):
    engine.tenants.create("acme", {"adminRoles": ["ops"], "allowedClusters": ["magnetar"]})
    assert engine.tenants.get("acme") == {"adminRoles": ["ops"], "allowedClusters": ["magnetar"]}
    engine.tenants.update("acme", {"adminRoles": ["ops", "dev"], **CLUSTERS})
    assert engine.tenants.get("acme")["adminRoles"] == ["dev", "ops"]
    assert engine.tenants.names() == ["acme", "public"]


@pytest.mark.parametrize(
    ("body", "error", "words"),
    [
        (None, PreconditionFailed, "Clusters can not be empty"),
        ({"adminRoles": ["ops"]}, PreconditionFailed, "Clusters can not be empty"),
        ({"allowedClusters": []}, PreconditionFailed, "Clusters can not be empty"),
        ({"allowedClusters": ["us-west"]}, PreconditionFailed, "Clusters do not exist"),
        ({"allowedClusters": ["magnetar", "x"]}, PreconditionFailed, "Clusters do not exist"),
        ({"allowedClusters": "magnetar"}, InvalidMessage, "allowedClusters"),
        ({"admins": [], **CLUSTERS}, InvalidMessage, "Unknown field"),
        ([], InvalidMessage, "JSON object"),
    ],
)
def test_a_bad_tenant_body_is_refused_as_pulsar_does_and_creates_nothing(engine, body, error, words):  # fmt: skip
    before = snapshot(engine)
    with pytest.raises(error, match=words):
        engine.tenants.create("acme", body)
    with pytest.raises(error, match=words):
        engine.tenants.update("public", body)
    assert snapshot(engine) == before


def test_an_existing_tenant_is_409_and_a_missing_one_404(engine):
    engine.tenants.create("acme", CLUSTERS)
    with pytest.raises(Conflict, match="Tenant already exists"):
        engine.tenants.create("acme", {"adminRoles": ["x"], **CLUSTERS})
    assert engine.tenants.get("acme")["adminRoles"] == []
    for act in (
        lambda: engine.tenants.get("nobody"),
        lambda: engine.tenants.update("nobody", CLUSTERS),
        lambda: engine.tenants.delete("nobody", force=True),
        lambda: engine.namespace_admin.names("nobody"),
        lambda: engine.namespace_admin.create("nobody", "ns", None),
    ):
        with pytest.raises(NotFound, match="Tenant does not exist"):
            act()
    assert engine.tenants.names() == ["acme", "public"]


def test_an_invalid_tenant_name_is_invalid_topic_name(engine):
    with pytest.raises(InvalidTopicName):
        engine.tenants.create("a b", CLUSTERS)


def test_a_tenant_with_namespaces_is_deleted_only_with_force_and_takes_them_along(engine):
    engine.tenants.create("acme", CLUSTERS)
    engine.namespace_admin.create("acme", "orders", None)
    topic = TopicName.parse("persistent://acme/orders/t")
    engine.producer.publish(topic, entry())
    with pytest.raises(Conflict, match="The tenant still has active namespaces"):
        engine.tenants.delete("acme", force=False)
    assert engine.namespace_admin.topics("acme", "orders") == [str(topic)]
    engine.tenants.delete("acme", force=True)
    assert engine.tenants.names() == ["public"]
    with pytest.raises(TopicNotFound):
        engine.topics.get(topic)


# ------------------------------------------------------------------ namespaces
def test_a_namespace_is_created_in_an_existing_tenant_listed_read_and_deleted(engine):
    engine.tenants.create("acme", CLUSTERS)
    engine.namespace_admin.create("acme", "orders", {})
    with pytest.raises(Conflict, match="Namespace already exists"):
        engine.namespace_admin.create("acme", "orders", None)
    assert engine.namespace_admin.names("acme") == ["acme/orders"]
    policies = engine.namespace_admin.policies("acme", "orders")
    assert policies["replication_clusters"] == ["magnetar"]
    assert (policies["schema_compatibility_strategy"], policies["is_allow_auto_update_schema"],
            policies["schema_validation_enforced"]) == ("UNDEFINED", None, False)  # fmt: skip
    assert policies["auth_policies"] == {
        "namespace_auth": {}, "destination_auth": {}, "subscription_auth_roles": {}}  # fmt: skip
    engine.namespace_admin.delete("acme", "orders", force=False)
    assert engine.namespace_admin.names("acme") == []
    with pytest.raises(NotFound, match="Namespace does not exist"):
        engine.namespace_admin.policies("acme", "orders")


def test_a_namespace_with_topics_is_deleted_only_with_force(engine):
    engine.tenants.create("acme", CLUSTERS)
    engine.namespace_admin.create("acme", "orders", None)
    partitioned = TopicName.parse("persistent://acme/orders/p")
    engine.admin.create_topic(partitioned, 2)
    engine.producer.publish(TopicName.parse("non-persistent://acme/orders/live"), entry())
    assert engine.namespace_admin.topics("acme", "orders") == [
        "persistent://acme/orders/p-partition-0", "persistent://acme/orders/p-partition-1"]  # fmt: skip
    assert engine.namespace_admin.topics("acme", "orders", "NON_PERSISTENT") == [
        "non-persistent://acme/orders/live"]  # fmt: skip
    assert len(engine.namespace_admin.topics("acme", "orders", "ALL")) == 3
    with pytest.raises(Conflict, match="Cannot delete non empty namespace"):
        engine.namespace_admin.delete("acme", "orders", force=False)
    engine.namespace_admin.delete("acme", "orders", force=True)
    engine.namespace_admin.create("acme", "orders", None)
    assert engine.admin.list_topics(partitioned, partitioned_only=False) == []


def test_a_namespace_created_again_starts_without_the_old_policies_and_grants(engine):
    engine.tenants.create("acme", CLUSTERS)
    engine.namespace_admin.create("acme", "orders", None)
    engine.namespaces.set_message_ttl("acme", "orders", 60)
    engine.permissions.grant("acme", "orders", "app", ["produce"])
    engine.namespace_admin.delete("acme", "orders", force=False)
    engine.namespace_admin.create("acme", "orders", None)
    assert engine.namespaces.message_ttl("acme", "orders") == 0
    assert engine.permissions.namespace("acme", "orders") == {}


def test_a_body_that_is_no_object_creates_no_namespace(engine):
    with pytest.raises(InvalidMessage):
        engine.namespace_admin.create("public", "orders", [1])
    assert engine.namespace_admin.names("public") == ["public/default"]


def test_policies_of_a_namespace_that_does_not_exist_are_404_and_nothing_is_written(engine, stores):  # fmt: skip
    with pytest.raises(NotFound, match="Namespace does not exist"):
        engine.namespaces.set_message_ttl("acme", "orders", 60)
    with pytest.raises(NotFound, match="Namespace does not exist"):
        engine.namespaces.retention("acme", "orders")
    assert stores.policies.get("acme/orders").version == 0


# ------------------------------------------------------------------ topics need a namespace
@pytest.mark.parametrize(
    "create",
    [
        lambda e, t: e.producer.publish(t, entry()),
        lambda e, t: e.admin.create_topic(t, None),
        lambda e, t: e.admin.create_topic(t, 3),
        lambda e, t: e.subscriptions.subscribe(t, "s", None, "Shared", True),
    ],
    ids=["produce", "create", "create partitioned", "subscribe"],
)
def test_a_topic_in_a_namespace_that_does_not_exist_is_topic_not_found(engine, create):
    topic = TopicName.parse("persistent://acme/nope/t")
    with pytest.raises(TopicNotFound, match="Namespace does not exist: acme/nope"):
        create(engine, topic)
    with pytest.raises(NotFound, match="Namespace does not exist: acme/nope"):
        engine.admin.list_topics(topic, partitioned_only=False)
    assert engine.tenants.names() == ["public"]


def test_producing_to_an_existing_topic_never_reads_the_namespace(engine, stores, monkeypatch):
    topic = TopicName.parse("persistent://public/default/hot")
    engine.producer.publish(topic, entry())  # created: the namespace is read once
    reads: list[str] = []
    monkeypatch.setattr(stores.namespaces, "exists", lambda ns: reads.append(ns) or True)
    for _ in range(3):
        engine.producer.publish(topic, entry())
    assert reads == []


def test_the_cluster_is_initialized_once_so_a_deleted_default_namespace_stays_deleted(stores):
    first = Engine.assemble(memory_settings(), stores)
    first.producer.publish(TopicName.parse("orders"), entry())  # public/default made on first use
    first.namespace_admin.delete("public", "default", force=True)
    later = Engine.assemble(memory_settings(), stores)  # another container
    assert later.tenants.initialize_cluster() is False
    with pytest.raises(TopicNotFound, match="Namespace does not exist: public/default"):
        later.producer.publish(TopicName.parse("orders"), entry())
    assert later.namespace_admin.names("public") == []
