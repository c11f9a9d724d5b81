"""SDK -> local gateway running the Lambda authorizer as API Gateway does -> handlers ->
emulator: an AWS workload authenticates as its IAM principal (AuthenticationAws, answered by
the emulator's STS), once per token thanks to the authorizer cache; requests without or with
a bad token are stopped at the gateway and change nothing."""

from __future__ import annotations

import uuid

import pytest
import requests

import magnetar as pulsar
from magnetar_core.api.authorizer import authorizer_from_env

pytestmark = pytest.mark.emulator

DEMO_KEY = "bWFnbmV0YXItZGVtby1rZXktbm90LWEtc2VjcmV0ISE="
MOTO_PRINCIPAL = "arn:aws:sts::123456789012:user/moto"  # moto's STS: the default identity


@pytest.fixture
def gateway_with_authorizer(local_stack):
    """The session's gateway running the authorizer before every route as API Gateway does:
    the authorizer of functions/authorizer, with authentication on and the demo key (the
    handlers' containers are left as they are)."""
    environment = {
        **local_stack.environment,
        "AUTHENTICATION_ENABLED": "true",
        "TOKEN_SECRET_KEY": f"data:;base64,{DEMO_KEY}",
        "SUPERUSER_ROLES": MOTO_PRINCIPAL,
    }
    authorize = authorizer_from_env(environment)
    gateway = local_stack.gateway
    gateway.use_authorizer(
        "AuthorizerFunction", cache_s=300, handler=lambda event, _: authorize(event)
    )
    try:
        yield gateway
    finally:
        gateway.use_authorizer(None)


def test_an_aws_workload_produces_and_consumes_as_its_iam_principal(
    local_stack, gateway_with_authorizer
):
    seen: list[dict] = []
    whoami = gateway_with_authorizer.add_route(
        "GET",
        "/it/whoami",
        lambda event, _: seen.append(event["requestContext"]) or {"statusCode": 204},
    )
    auth = pulsar.AuthenticationAws(endpoint_url=local_stack.aws_endpoint_url)
    client = pulsar.Client(local_stack.url, authentication=auth)
    try:
        topic = f"persistent://public/default/iam-{uuid.uuid4().hex[:8]}"
        consumer = client.subscribe(topic, "s", initial_position=pulsar.InitialPosition.Earliest)
        client.create_producer(topic).send(b"as my IAM role")
        message = consumer.receive(10_000)
        assert message.data() == b"as my IAM role"
        consumer.acknowledge(message)
        headers = auth._headers()
        assert (
            requests.get(local_stack.url + "/it/whoami", headers=headers, timeout=10).status_code
            == 204
        )
    finally:
        client.close()
        gateway_with_authorizer.remove_route(whoami)
    assert seen[0]["authorizer"] == {"lambda": {"role": MOTO_PRINCIPAL}}
    assert gateway_with_authorizer.authorizer.invocations == 1  # one token, cached for every call


def test_no_token_or_a_bad_one_is_stopped_at_the_gateway_and_stores_nothing(
    local_stack, gateway_with_authorizer
):
    topic = f"iam-refused-{uuid.uuid4().hex[:8]}"
    produce = f"{local_stack.url}/v1/persistent/public/default/{topic}/messages"
    body = {"payload": "aGk="}
    anonymous = requests.post(produce, json=body, timeout=10)
    assert (anonymous.status_code, anonymous.json()) == (401, {"message": "Unauthorized"})
    forged = requests.post(produce, json=body, timeout=10,
                           headers={"Authorization": "Bearer magnetar-aws-v1.aHR0cHM6Ly9ldmlsLmV4YW1wbGU"})  # fmt: skip
    assert (forged.status_code, forged.json()) == (403, {"message": "Forbidden"})
    admin = pulsar.AuthenticationAws(endpoint_url=local_stack.aws_endpoint_url)._headers()
    answer = requests.get(
        f"{local_stack.url}/admin/v2/persistent/public/default/{topic}/partitions",
        headers=admin, timeout=10,
    )  # fmt: skip
    assert answer.status_code == 404, answer.text  # the topic was never created
