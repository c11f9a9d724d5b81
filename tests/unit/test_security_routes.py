"""Every HTTP route of template.yaml has a route class, and each class builds its requirement."""

from __future__ import annotations

import re

import pytest

from magnetar_core.domain.security import (
    AnyRole,
    Consume,
    Functions,
    ListTopics,
    Lookup,
    NamespaceConsume,
    NamespaceFunctions,
    Produce,
    SuperuserOnly,
    TenantAdmin,
    Unclassified,
)
from magnetar_core.domain.security.routes import PUBLIC_ROUTES, ROUTES, RouteClass, requirement_for
from magnetar_local.served_routes import default_served_routes
from magnetar_wire.names import InvalidTopicName, TopicName

ALL_TEMPLATE_ROUTES = default_served_routes()  # ANY /admin/{proxy+} as the admin app's routes
TEMPLATE_ROUTES = {(r.method, r.path) for r in ALL_TEMPLATE_ROUTES} - PUBLIC_ROUTES
SAMPLE = {"domain": "persistent", "tenant": "acme", "namespace": "orders", "topic": "t",
          "subscription": "billing", "consumerId": "c-1", "producerName": "p-1", "role": "app", "name": "to-billing",
          "numMessages": "5", "expireTimeInSeconds": "60", "timestamp": "1700000000000",
          "messagePosition": "1", "ledgerId": "1", "entryId": "0", "version": "0"}  # fmt: skip
TOPIC = TopicName.parse("persistent://acme/orders/t")
BY_CLASS = {
    RouteClass.SUPERUSER: SuperuserOnly,
    RouteClass.ANY_ROLE: AnyRole,
    RouteClass.TENANT_ADMIN: TenantAdmin,
    RouteClass.LIST_TOPICS: ListTopics,
    RouteClass.NAMESPACE_CONSUME: NamespaceConsume,
    RouteClass.LOOKUP: Lookup,
    RouteClass.PRODUCE: Produce,
    RouteClass.CONSUME: Consume,
    RouteClass.CONSUME_SUBSCRIPTION: Consume,
    RouteClass.FUNCTIONS: Functions,
    RouteClass.NAMESPACE_FUNCTIONS: NamespaceFunctions,
}


def params_of(path: str) -> dict[str, str]:
    return {name: SAMPLE[name] for name in re.findall(r"{(\w+)}", path)}


def test_the_template_has_routes_to_check():
    assert len(TEMPLATE_ROUTES) >= 50


@pytest.mark.parametrize(("method", "path"), sorted(TEMPLATE_ROUTES), ids=" ".join)
def test_every_template_route_is_classified(method, path):
    assert (method, path) in ROUTES, f"{method} {path} has no route class in domain/security/routes.py"  # fmt: skip
    assert not isinstance(requirement_for(method, path, params_of(path)), Unclassified)


def test_the_public_routes_are_exactly_the_template_routes_without_the_authorizer():
    unauthorized = {(r.method, r.path) for r in ALL_TEMPLATE_ROUTES if not r.authorized}
    assert unauthorized == PUBLIC_ROUTES
    assert not PUBLIC_ROUTES & set(ROUTES)


def test_every_classified_route_not_marked_pending_is_served_by_the_template():
    served = {key for key, route in ROUTES.items() if not route.pending}
    assert served - TEMPLATE_ROUTES == set()


@pytest.mark.parametrize(("method", "path"), sorted(ROUTES), ids=" ".join)
def test_each_route_builds_the_requirement_of_its_class_with_words_for_a_403(method, path):
    requirement = requirement_for(method, path, params_of(path))
    assert type(requirement) is BY_CLASS[ROUTES[(method, path)].route_class]
    assert requirement.action and "{" not in requirement.action
    if "tenant" in params_of(path):
        assert requirement.tenant == "acme"
    if "namespace" in params_of(path):
        assert requirement.namespace == "acme/orders"


PULSAR_CLASSES = [
        ("POST", "/v1/{domain}/{tenant}/{namespace}/{topic}/messages", Produce(TOPIC)),
        ("POST", "/v1/{domain}/{tenant}/{namespace}/{topic}/uploads", Produce(TOPIC)),
        ("POST", "/v1/{domain}/{tenant}/{namespace}/{topic}/subscriptions/{subscription}/consumers/{consumerId}/ack", Consume(TOPIC, "billing")),
        ("POST", "/v1/{domain}/{tenant}/{namespace}/{topic}/subscriptions/{subscription}/consumers/{consumerId}/seek", Consume(TOPIC, "billing")),
        ("DELETE", "/admin/v2/{domain}/{tenant}/{namespace}/{topic}/subscription/{subscription}", Consume(TOPIC, "billing")),
        ("GET", "/admin/v2/{domain}/{tenant}/{namespace}/{topic}/subscriptions", Consume(TOPIC)),
        # issue 14: Pulsar's SKIP, EXPIRE_MESSAGES, RESET_CURSOR and SUBSCRIBE are consume operations
        ("POST", "/admin/v2/{domain}/{tenant}/{namespace}/{topic}/subscription/{subscription}/skip/{numMessages}", Consume(TOPIC, "billing")),
        ("POST", "/admin/v2/{domain}/{tenant}/{namespace}/{topic}/subscription/{subscription}/skip_all", Consume(TOPIC, "billing")),
        ("POST", "/admin/v2/{domain}/{tenant}/{namespace}/{topic}/subscription/{subscription}/expireMessages/{expireTimeInSeconds}", Consume(TOPIC, "billing")),
        ("POST", "/admin/v2/{domain}/{tenant}/{namespace}/{topic}/all_subscription/expireMessages/{expireTimeInSeconds}", Consume(TOPIC)),
        ("POST", "/admin/v2/{domain}/{tenant}/{namespace}/{topic}/subscription/{subscription}/resetcursor/{timestamp}", Consume(TOPIC, "billing")),
        ("POST", "/admin/v2/{domain}/{tenant}/{namespace}/{topic}/subscription/{subscription}/resetcursor", Consume(TOPIC, "billing")),
        ("PUT", "/admin/v2/{domain}/{tenant}/{namespace}/{topic}/subscription/{subscription}", Consume(TOPIC, "billing")),
        ("GET", "/admin/v2/{domain}/{tenant}/{namespace}/{topic}/subscription/{subscription}/position/{messagePosition}", Consume(TOPIC, "billing")),
        ("GET", "/admin/v2/{domain}/{tenant}/{namespace}/{topic}/examinemessage", Consume(TOPIC)),
        ("GET", "/admin/v2/{domain}/{tenant}/{namespace}/{topic}/ledger/{ledgerId}/entry/{entryId}", Consume(TOPIC)),
        ("GET", "/admin/v2/{domain}/{tenant}/{namespace}/{topic}/lastMessageId", Consume(TOPIC)),
        ("GET", "/admin/v2/{domain}/{tenant}/{namespace}/{topic}/partitions", Lookup(TOPIC)),
        ("GET", "/admin/v2/{domain}/{tenant}/{namespace}/{topic}/stats", Lookup(TOPIC)),
        ("GET", "/admin/v2/{domain}/{tenant}/{namespace}", ListTopics("acme", "acme/orders")),
        ("POST", "/admin/v2/namespaces/{tenant}/{namespace}/clearBacklog/{subscription}", NamespaceConsume("acme", "acme/orders", "clear the backlog of subscription billing in namespace acme/orders")),
        ("POST", "/admin/v2/namespaces/{tenant}/{namespace}/unsubscribe/{subscription}", NamespaceConsume("acme", "acme/orders", "unsubscribe billing from the topics of namespace acme/orders")),
        ("DELETE", "/admin/v2/{domain}/{tenant}/{namespace}/{topic}", TenantAdmin("acme", "delete topic persistent://acme/orders/t", "acme/orders")),
        # issue 14: Pulsar's TERMINATE, UNLOAD, TRUNCATE and partition updates are the tenant admin's
        ("POST", "/admin/v2/{domain}/{tenant}/{namespace}/{topic}/terminate", TenantAdmin("acme", "terminate topic persistent://acme/orders/t", "acme/orders")),
        ("POST", "/admin/v2/{domain}/{tenant}/{namespace}/{topic}/terminate/partitions", TenantAdmin("acme", "terminate the partitions of persistent://acme/orders/t", "acme/orders")),
        ("PUT", "/admin/v2/{domain}/{tenant}/{namespace}/{topic}/unload", TenantAdmin("acme", "unload topic persistent://acme/orders/t", "acme/orders")),
        ("DELETE", "/admin/v2/{domain}/{tenant}/{namespace}/{topic}/truncate", TenantAdmin("acme", "truncate topic persistent://acme/orders/t", "acme/orders")),
        ("POST", "/admin/v2/{domain}/{tenant}/{namespace}/{topic}/partitions", TenantAdmin("acme", "update the partitions of persistent://acme/orders/t", "acme/orders")),
        ("POST", "/admin/v2/namespaces/{tenant}/{namespace}/retention", TenantAdmin("acme", "set the retention policy of namespace acme/orders", "acme/orders")),
        ("GET", "/admin/v2/brokers/health", SuperuserOnly("check the broker's health")),
        ("PUT", "/admin/v2/tenants/{tenant}", SuperuserOnly("create tenant acme", "acme")),
        ("GET", "/admin/v2/clusters", AnyRole("list the clusters")),
        ("POST", "/admin/v2/namespaces/{tenant}/{namespace}/permissions/{role}", TenantAdmin("acme", "grant permissions on namespace acme/orders", "acme/orders")),
        ("PUT", "/admin/v2/{domain}/{tenant}/{namespace}/{topic}/triggers/{name}", Functions(TOPIC, "create or replace trigger to-billing of persistent://acme/orders/t")),
        ("GET", "/admin/v2/{domain}/{tenant}/{namespace}/{topic}/triggers", Functions(TOPIC, "list the triggers of persistent://acme/orders/t")),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [pytest.param(m, p, e, id=f"{m} {p} needs {type(e).__name__}") for m, p, e in PULSAR_CLASSES],
)
def test_the_route_classes_are_pulsars(method, path, expected):
    assert requirement_for(method, path, params_of(path)) == expected


def test_the_method_may_come_in_any_case():
    path = "/v1/{domain}/{tenant}/{namespace}/{topic}/messages"
    assert requirement_for("post", path, params_of(path)) == Produce(TOPIC)


def test_a_route_nobody_classified_is_unclassified_and_so_denied():
    assert requirement_for("PATCH", "/v1/{domain}/{tenant}/{namespace}/{topic}/messages", SAMPLE) == Unclassified("PATCH", "/v1/{domain}/{tenant}/{namespace}/{topic}/messages")  # fmt: skip
    assert isinstance(requirement_for("GET", "/admin/v2/secret", {}), Unclassified)


def test_a_route_whose_path_parameters_are_missing_is_unclassified():
    path = "/v1/{domain}/{tenant}/{namespace}/{topic}/messages"
    assert isinstance(requirement_for("POST", path, {"domain": "persistent"}), Unclassified)


def test_an_invalid_topic_or_namespace_name_is_a_400_not_a_requirement():
    path = "/v1/{domain}/{tenant}/{namespace}/{topic}/messages"
    with pytest.raises(InvalidTopicName):
        requirement_for("POST", path, {**params_of(path), "topic": "a b"})
    ns_path = "/admin/v2/namespaces/{tenant}/{namespace}/retention"
    with pytest.raises(InvalidTopicName):
        requirement_for("GET", ns_path, {"tenant": "acme", "namespace": ".."})


def test_a_non_persistent_topic_keeps_its_domain():
    path = "/v1/{domain}/{tenant}/{namespace}/{topic}/messages"
    requirement = requirement_for("POST", path, {**params_of(path), "domain": "non-persistent"})
    assert requirement == Produce(TopicName.parse("non-persistent://acme/orders/t"))
