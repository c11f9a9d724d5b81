"""The function-URL front door (template.yaml ``FrontDoor: FunctionUrl``) end to end: the SDK
-> local gateway passing function-URL events (``$default``, no path parameters, no
authorizer) to ``DataPlaneFunction`` -> the handler apps in-process -> emulator, with
authentication on: no token is 401, a token that proves nothing 403, a role without the
grant 403 (Pulsar's reason), and nothing changes; a granted role produces, receives, acks."""

from __future__ import annotations

import uuid

import pytest
import requests

import magnetar as pulsar
from magnetar_core.domain.security import AuthAction, NamespacePermissions, Role, TenantInfo
from magnetar_local.secured import SecuredGateway

pytestmark = pytest.mark.emulator


@pytest.fixture(scope="module")
def url_gateway(local_stack, engine_clients):
    """A gateway with authentication on serving the API as the function URL does."""
    gateway = SecuredGateway(local_stack, engine_clients, front_door="function-url").start()
    try:
        yield gateway
    finally:
        gateway.stop()


@pytest.fixture
def namespace(url_gateway) -> str:
    """A tenant of its own whose namespace ``app`` lets ``worker`` produce and consume."""
    tenant = f"url-{uuid.uuid4().hex[:8]}"
    stores = url_gateway.stores
    stores.tenants.put(tenant, TenantInfo(admin_roles=frozenset({Role("owner")})))
    stores.namespaces.create(f"{tenant}/app")
    grants = NamespacePermissions().grant(Role("worker"), [AuthAction.PRODUCE, AuthAction.CONSUME])
    stores.permissions.put(f"{tenant}/app", grants)
    return f"{tenant}/app"


def test_a_granted_role_produces_receives_and_acks_through_the_function_url(url_gateway, namespace):
    topic = f"persistent://{namespace}/orders"
    auth = pulsar.AuthenticationToken(url_gateway.token("worker"))
    client = pulsar.Client(url_gateway.url, authentication=auth, operation_timeout_seconds=10)
    try:
        consumer = client.subscribe(topic, "s", initial_position=pulsar.InitialPosition.Earliest)
        producer = client.create_producer(topic, batching_enabled=False)
        sent = [producer.send(f"order-{i}".encode()) for i in range(3)]
        received = []
        for _ in sent:
            message = consumer.receive(timeout_millis=10_000)
            consumer.acknowledge(message)
            received.append(message.data())
        consumer.close()
    finally:
        client.close()
    assert received == [b"order-0", b"order-1", b"order-2"]
    loader = url_gateway.gateway.loader
    assert loader.containers("DataPlaneFunction") >= 1
    assert loader.containers("ProduceFunction") == loader.containers("ReceiveFunction") == 0
    stats = requests.get(
        f"{url_gateway.url}/admin/v2/persistent/{namespace}/orders/stats",
        headers=url_gateway.headers("worker"),
        timeout=10,
    )
    assert stats.status_code == 200
    assert stats.json()["subscriptions"]["s"]["msgBacklog"] == 0


def test_no_token_a_bad_token_and_a_role_without_the_grant_are_refused_and_change_nothing(
    url_gateway, namespace
):
    produce = f"{url_gateway.url}/v1/persistent/{namespace}/t/messages"
    body = {"payload": "aGk="}
    anonymous = requests.post(produce, json=body, timeout=10)
    forged = requests.post(
        produce, json=body, headers={"Authorization": "Bearer not.a.token"}, timeout=10
    )
    stranger = requests.post(
        produce, json=body, headers=url_gateway.headers("stranger"), timeout=10
    )
    assert (anonymous.status_code, anonymous.json()) == (401, {"message": "Unauthorized"})
    assert (forged.status_code, forged.json()) == (403, {"message": "Forbidden"})
    assert stranger.status_code == 403
    assert stranger.json()["error"] == "AuthorizationError"
    assert "Role 'stranger' is not authorized to produce" in stranger.json()["message"]
    granted = requests.get(
        f"{url_gateway.url}/admin/v2/persistent/{namespace}/t/lastMessageId",
        headers=url_gateway.headers("worker"),
        timeout=10,
    )
    assert granted.status_code == 404  # the topic was never created by the refused produces
