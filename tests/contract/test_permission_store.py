"""Contract of the namespace permission store: defaults, versioned replace and delete, and
records that stay out of topic listings and apart from the namespace's policies."""

from __future__ import annotations

import pytest
from security_backends import security_stores

from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.policies import NamespacePolicies
from magnetar_core.domain.security import AuthAction, NamespacePermissions, Role
from magnetar_wire.names import TopicName


@pytest.fixture
def security(backend, request):
    return security_stores(backend, request)


def every_kind_of_grant(ns: str) -> NamespacePermissions:
    topic = TopicName.parse(f"persistent://{ns}/orders")
    return (
        NamespacePermissions()
        .grant(Role("app"), [AuthAction.PRODUCE, AuthAction.CONSUME])
        .grant(Role("ops"), list(AuthAction))
        .grant(Role("arn:aws:iam::123456789012:role/reader"), [AuthAction.CONSUME])
        .grant_topic(topic, Role("writer"), [AuthAction.PRODUCE])
        .grant_topic(
            TopicName.parse(f"non-persistent://{ns}/live"), Role("w"), [AuthAction.PRODUCE]
        )  # fmt: skip
        .grant_subscription("billing", [Role("app"), Role("billing")])
    )


def test_a_namespace_without_permissions_reads_as_none_granted_at_version_0(security, uid):
    assert security.permissions.get(f"c/ns-{uid}") == NamespacePermissions()


def test_put_stores_every_kind_of_grant_and_returns_the_next_version(security, uid):
    ns = f"c/ns-{uid}"
    wanted = every_kind_of_grant(ns)
    stored = security.permissions.put(ns, wanted)
    assert stored == wanted.with_version(1)
    assert security.permissions.get(ns) == stored


def test_put_needs_the_version_it_read(security, uid):
    ns = f"c/ns-{uid}"
    first = security.permissions.put(ns, NamespacePermissions().grant(Role("a"), [AuthAction.PRODUCE]))  # fmt: skip
    with pytest.raises(ConditionFailed):
        security.permissions.put(ns, NamespacePermissions())  # version 0: stale
    second = security.permissions.put(ns, first.revoke(Role("a")))
    assert second.version == 2 and second.roles == {}
    with pytest.raises(ConditionFailed):
        security.permissions.put(ns, first.grant(Role("b"), [AuthAction.CONSUME]))
    assert security.permissions.get(ns) == second


def test_delete_needs_the_version_read_and_leaves_none_granted(security, uid):
    ns = f"c/ns-{uid}"
    stored = security.permissions.put(ns, every_kind_of_grant(ns))
    with pytest.raises(ConditionFailed):
        security.permissions.delete(ns, NamespacePermissions())
    security.permissions.delete(ns, stored)
    assert security.permissions.get(ns) == NamespacePermissions()


def test_permissions_never_list_as_topics_nor_touch_the_namespace_policies(security, uid):
    ns = f"c/ns-{uid}"
    security.permissions.put(ns, every_kind_of_grant(ns))
    assert security.topics.list(f"persistent://{ns}") == []
    assert security.policies.get(ns) == NamespacePolicies()
    policies = security.policies.put(ns, NamespacePolicies(deduplication=True))
    assert security.permissions.get(ns).version == 1
    assert security.policies.get(ns) == policies
