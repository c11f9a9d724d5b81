"""Security values: roles, actions, tenant bodies, namespace permissions and their changes."""

from __future__ import annotations

import pytest

from magnetar_core.domain.errors import InvalidMessage
from magnetar_core.domain.security import AuthAction, NamespacePermissions, Role, TenantInfo
from magnetar_core.domain.security.authentication import authenticate, authenticate_header
from magnetar_wire.names import TopicName
from magnetar_wire.tokens import MalformedToken, MissingToken, SigningKey, VerificationKeys, create

P, C = AuthAction.PRODUCE, AuthAction.CONSUME
T = TopicName.parse("persistent://acme/orders/t")


def test_pulsars_action_names_parse_from_a_grant_body():
    assert AuthAction.parse_all(["produce", "consume", "functions"]) == {P, C, AuthAction.FUNCTIONS}
    assert {a.value for a in AuthAction} == {"produce", "consume", "functions", "sources", "sinks", "packages"}  # fmt: skip


@pytest.mark.parametrize("body", [["write"], "produce", [1], {"produce": True}, None])
def test_a_grant_body_that_is_no_list_of_known_actions_is_invalid(body):
    with pytest.raises(InvalidMessage, match="produce"):
        AuthAction.parse_all(body)


@pytest.mark.parametrize("name", ["", " admin", "admin ", "a\nb", "x" * 1025])
def test_a_role_must_be_plain_non_empty_text(name):
    with pytest.raises(InvalidMessage, match="Invalid role"):
        Role(name)


def test_an_iam_principal_arn_is_a_role():
    arn = "arn:aws:sts::123456789012:assumed-role/app/session"
    assert str(Role(arn)) == arn


def test_a_tenant_body_parses_and_prints_in_pulsars_shape():
    info = TenantInfo.from_body({"adminRoles": ["b", "a"], "allowedClusters": ["magnetar"]})
    assert info.admin_roles == {Role("a"), Role("b")}
    assert info.to_body() == {"adminRoles": ["a", "b"], "allowedClusters": ["magnetar"]}
    assert TenantInfo.from_body({}) == TenantInfo()


@pytest.mark.parametrize(
    "body",
    [[], {"adminRoles": "a"}, {"adminRoles": [""]}, {"admins": []}, {"allowedClusters": [3]}],
)
def test_a_tenant_body_that_breaks_the_shape_is_invalid(body):
    with pytest.raises(InvalidMessage):
        TenantInfo.from_body(body)


def test_a_grant_replaces_the_roles_actions_and_a_revoke_removes_them():
    granted = NamespacePermissions().grant(Role("r"), [P, C]).grant(Role("r"), [C])
    assert granted.namespace_actions(Role("r")) == {C}
    assert granted.revoke(Role("r")).namespace_actions(Role("r")) == frozenset()
    assert NamespacePermissions().namespace_actions(Role("r")) == frozenset()


def test_a_topic_grant_covers_the_topic_and_its_partitions_only():
    granted = NamespacePermissions().grant_topic(T.partition(1), Role("r"), [P])
    assert granted.topic_actions(T, Role("r")) == {P}
    assert granted.topic_actions(T.partition(7), Role("r")) == {P}
    assert granted.topic_actions(TopicName.parse("persistent://acme/orders/u"), Role("r")) == frozenset()  # fmt: skip
    assert granted.namespace_actions(Role("r")) == frozenset()


def test_topic_actions_add_the_namespace_grant_to_the_topics_own():
    granted = NamespacePermissions().grant(Role("r"), [C]).grant_topic(T, Role("r"), [P])
    assert granted.topic_actions(T, Role("r")) == {P, C}
    assert granted.topic_permissions_body(T) == {"r": ["consume", "produce"]}


def test_revoking_the_last_grant_on_a_topic_drops_the_topic():
    granted = NamespacePermissions().grant_topic(T, Role("a"), [P]).grant_topic(T, Role("b"), [C])
    assert set(granted.revoke_topic(T, Role("a")).topics[str(T)]) == {Role("b")}
    assert granted.revoke_topic(T, Role("a")).revoke_topic(T, Role("b")).topics == {}


def test_subscription_grants_add_roles_and_the_last_revoke_lifts_the_restriction():
    granted = NamespacePermissions().grant_subscription("s", [Role("a")]).grant_subscription("s", [Role("b")])  # fmt: skip
    assert granted.subscription_roles("s") == {Role("a"), Role("b")}
    assert granted.subscriptions_body() == {"s": ["a", "b"]}
    one = granted.revoke_subscription("s", Role("a"))
    assert one.subscription_roles("s") == {Role("b")}
    assert one.revoke_subscription("s", Role("b")).subscriptions == {}


def test_changes_never_touch_the_value_they_start_from():
    start = NamespacePermissions().grant(Role("r"), [P])
    start.grant(Role("q"), [C]).revoke(Role("r")).grant_subscription("s", [Role("r")])
    assert start == NamespacePermissions().grant(Role("r"), [P])


def test_a_tokens_subject_authenticates_as_its_role():
    keys = VerificationKeys.of(secret_key=bytes(32))
    token = create(SigningKey.secret(bytes(32)), "app")
    assert authenticate(token, keys, 0) == Role("app")
    assert authenticate_header(f"Bearer {token}", keys, 0) == Role("app")
    with pytest.raises(MissingToken):
        authenticate_header(None, keys, 0)


def test_a_subject_that_is_no_valid_role_is_a_malformed_token():
    keys = VerificationKeys.of(secret_key=bytes(32))
    with pytest.raises(MalformedToken, match="not a valid role"):
        authenticate(create(SigningKey.secret(bytes(32)), "bad\trole"), keys, 0)
