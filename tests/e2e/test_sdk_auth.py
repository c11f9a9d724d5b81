"""The SDK with tokens (issue 12), through the local gateway with authentication on to the
emulator: a produce-only role produces, a consume-only role consumes, each is refused what
it was not granted, and a client without a token is refused everything."""

from __future__ import annotations

import uuid

import pytest

import magnetar as pulsar
from magnetar_core.domain.security import AuthAction, NamespacePermissions, Role, TenantInfo


@pytest.fixture
def namespace(secured_gateway) -> str:
    """A tenant of its own with namespace ``app``: ``writer`` may produce, ``reader``
    consume, ``owner`` administers the tenant."""
    tenant = f"sdk-{uuid.uuid4().hex[:8]}"
    stores = secured_gateway.stores
    stores.tenants.put(tenant, TenantInfo(admin_roles=frozenset({Role("owner")})))
    stores.namespaces.create(f"{tenant}/app")
    permissions = (
        NamespacePermissions()
        .grant(Role("writer"), [AuthAction.PRODUCE])
        .grant(Role("reader"), [AuthAction.CONSUME])
    )
    stores.permissions.put(f"{tenant}/app", permissions)
    return f"{tenant}/app"


def _client(secured_gateway, role: str | None, tmp_path=None) -> pulsar.Client:
    if role is None:
        return pulsar.Client(secured_gateway.url, operation_timeout_seconds=10)
    token = secured_gateway.token(role)
    if tmp_path is not None:  # a token file, as `magnetar local --auth` writes one
        (tmp_path / "token").write_text(token + "\n")
        token = (tmp_path / "token").as_uri()
    auth = pulsar.AuthenticationToken(token)
    return pulsar.Client(secured_gateway.url, authentication=auth, operation_timeout_seconds=10)


def test_a_writer_produces_and_a_reader_consumes_with_their_tokens(
    secured_gateway, namespace, tmp_path
):
    topic = f"persistent://{namespace}/orders"
    writer, reader = (
        _client(secured_gateway, "writer"),
        _client(secured_gateway, "reader", tmp_path),
    )
    try:
        consumer = reader.subscribe(
            topic, "billing", initial_position=pulsar.InitialPosition.Earliest
        )
        producer = writer.create_producer(topic)
        sent = [producer.send(f"order-{i}".encode()) for i in range(3)]
        received = []
        for _ in sent:
            msg = consumer.receive(timeout_millis=10_000)
            consumer.acknowledge(msg)
            received.append(msg.data())
        assert received == [b"order-0", b"order-1", b"order-2"]
        with pytest.raises(pulsar.AuthorizationError, match="Role 'writer' is not authorized"):
            writer.subscribe(topic, "spy")
        with pytest.raises(pulsar.AuthorizationError, match="Role 'reader' is not authorized"):
            reader.create_producer(topic)
    finally:
        writer.close()
        reader.close()


def test_a_client_without_a_token_is_refused_with_an_authentication_error(
    secured_gateway, namespace
):
    anonymous = _client(secured_gateway, None)
    try:
        with pytest.raises(pulsar.AuthenticationError, match="Authorization: Bearer"):
            anonymous.create_producer(f"persistent://{namespace}/orders")
    finally:
        anonymous.close()
