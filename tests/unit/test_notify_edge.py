"""The notification channel's Lambda edge (``api.notify``) on the memory engine: the
events/notify samples answer as their README says, a refused token refuses the connection,
and a stream batch through the trigger fan-out posts the channel's notices."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from magnetar_core.adapters.memory import RecordingConnections, memory_stores
from magnetar_core.api import fanout as fanout_api
from magnetar_core.api import notify as notify_api
from magnetar_core.api.authorizer import allowed, denied
from magnetar_core.engine import Engine
from magnetar_local.events import LambdaContext
from magnetar_local.memory_service import memory_settings
from magnetar_wire.names import TopicName

SAMPLES = Path(__file__).resolve().parents[2] / "events" / "notify"
TOPIC = "persistent://public/default/events-demo"


def sample(name: str, consumer_id: str = "demo-consumer-id") -> dict:
    return json.loads((SAMPLES / name).read_text().replace("demo-consumer-id", consumer_id))


@pytest.fixture
def setup() -> tuple[Engine, RecordingConnections, str]:
    connections = RecordingConnections()
    engine = Engine.assemble(memory_settings(), memory_stores(), connections=connections)
    engine.tenants.initialize_cluster()
    handle = engine.subscriptions.subscribe(TopicName.parse(TOPIC), "demo", None, "Shared", True)
    return engine, connections, handle.consumer_id


def context() -> LambdaContext:
    return LambdaContext("notify", 256, 10)


def test_the_samples_connect_watch_refuse_a_bad_body_and_disconnect(setup) -> None:
    engine, _, consumer_id = setup
    seen_roles = []

    def authorize(event):
        seen_roles.append(event["headers"].get("authorization"))
        return allowed("demo-role")

    handle = notify_api.lambda_handler(lambda: engine, authorize)
    assert handle(sample("connect.json"), context())["statusCode"] == 200
    assert seen_roles == ["Bearer <a Pulsar token; omitted when authentication is off>"]
    assert engine.notify._watches.connection("ZZ9plzAlpha0=") == (True, "demo-role")
    # the consumer was registered without a role (authentication off): any role may watch it
    answer = handle(sample("watch.json", consumer_id), context())
    assert (answer["statusCode"], json.loads(answer["body"])) == (200, {"watching": 1, "ref": 1})
    answer = handle(sample("watch_bad_body.json", consumer_id), context())
    assert answer["statusCode"] == 400
    assert json.loads(answer["body"]) == {
        "error": "InvalidMessage",
        "message": "watches[0].consumerId must be a non-empty string",
        "ref": 2,
    }
    assert handle(sample("disconnect.json"), context())["statusCode"] == 200
    assert engine.notify._watches.connection("ZZ9plzAlpha0=") == (False, None)


def test_a_token_that_proves_no_role_refuses_the_connection(setup) -> None:
    engine, _, _ = setup
    handle = notify_api.lambda_handler(lambda: engine, lambda event: denied())
    assert handle(sample("connect.json"), context())["statusCode"] == 403
    assert engine.notify._watches.connection("ZZ9plzAlpha0=") == (False, None)


def test_a_message_of_another_action_is_refused_as_invalid_message(setup) -> None:
    engine, _, _ = setup
    event = sample("watch.json")
    event["requestContext"]["routeKey"] = "$default"
    answer = notify_api.lambda_handler(lambda: engine, lambda e: allowed(None))(event, context())
    assert answer["statusCode"] == 400
    assert json.loads(answer["body"])["error"] == "InvalidMessage"


def test_a_stream_batch_posts_a_notice_to_the_connections_watching_its_partitions(setup) -> None:
    engine, connections, consumer_id = setup
    handle = notify_api.lambda_handler(lambda: engine, lambda event: allowed(None))
    handle(sample("connect.json"), context())
    handle(sample("watch.json", consumer_id), context())
    record = {"eventName": "INSERT", "dynamodb": {"SequenceNumber": "1",
              "Keys": {"pk": {"S": f"{TOPIC}|1"}, "eid": {"N": "0"}}}}  # fmt: skip
    fanout = fanout_api.lambda_handler(lambda: engine)
    assert fanout({"Records": [record]}, LambdaContext("trigger-fanout", 256, 180)) == {
        "batchItemFailures": []
    }
    assert connections.sent == [("ZZ9plzAlpha0=", b'{"notice":"%s"}' % TOPIC.encode())]


def test_connect_checks_the_query_string_token_with_the_http_authorizers_logic(setup) -> None:
    from magnetar_core.adapters.memory.credentials import CallerIdentity
    from magnetar_core.api.authorizer import RequestAuthorizer
    from magnetar_core.services.authentication import Authenticator, KeySource
    from magnetar_wire.tokens import SigningKey, create

    engine, _, _ = setup
    secret = b"0123456789abcdef0123456789abcdef"
    reference = "data:;base64," + base64.b64encode(secret).decode()
    authenticator = Authenticator(
        KeySource(secret_key=reference), CallerIdentity({}, {}), "magnetar"
    )
    handle = notify_api.lambda_handler(lambda: engine, RequestAuthorizer(authenticator, True))
    refused = {}
    for case, token in {"none": None, "tampered": create(SigningKey.secret(b"x" * 32), "eve"),
                        "valid": create(SigningKey.secret(secret), "alice")}.items():  # fmt: skip
        event = sample("connect.json")
        event["queryStringParameters"] = {"token": token} if token else {}
        refused[case] = handle(event, context())["statusCode"]
    assert refused == {"none": 403, "tampered": 403, "valid": 200}
    assert engine.notify._watches.connection("ZZ9plzAlpha0=") == (True, "alice")
