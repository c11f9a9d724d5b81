"""The HTTP edge answers bad input with 400 and its own faults with the documented error shape,
and logs every fault with the request id (issue 11, defects 6 and 7)."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from edge_http import TOPIC, assert_error, call

from magnetar_core.api import http, limits
from magnetar_core.services.admin import Admin


@contextmanager
def service_log() -> Iterator[io.StringIO]:
    """What the handlers' Powertools logger writes (JSON lines on stdout in Lambda)."""
    handler = logging.getLogger(http.SERVICE).powertools_handler  # type: ignore[attr-defined]
    stream = io.StringIO()
    previous = handler.setStream(stream)
    try:
        yield stream
    finally:
        handler.setStream(previous)


def _records(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.startswith("{")]


# ----------------------------------------------------------------------- defect 6: faults logged


def test_an_unexpected_exception_in_a_handler_is_a_500_in_the_error_shape_logged_with_the_request_id(
    svc, monkeypatch
):
    def broken(self, topic):
        raise RuntimeError("the disk is on fire")

    monkeypatch.setattr(Admin, "partitions", broken)
    with service_log() as log:
        status, body, headers = call(f"{svc.url}/admin/v2{TOPIC}/partitions", "GET")
    assert (status, body["error"]) == (500, "UnknownError"), body
    assert set(body) == {"error", "message"}
    request_id = headers["apigw-requestid"]
    assert request_id and request_id in body["message"]
    assert "fire" not in body["message"]  # internal text stays in the log
    errors = [r for r in _records(log) if r["level"] == "ERROR"]
    assert len(errors) == 1, log.getvalue()
    assert errors[0]["correlation_id"] == request_id
    assert errors[0]["function_request_id"]
    assert "RuntimeError: the disk is on fire" in errors[0]["exception"]


def test_the_engines_own_loggers_reach_the_service_log_as_json_with_the_request_id(
    svc, monkeypatch
):
    def noisy(self, topic):
        logging.getLogger("magnetar_core.services.admin").warning("looking at %s", topic)
        return {"partitions": 0}

    monkeypatch.setattr(Admin, "partitions", noisy)
    with service_log() as log:
        status, _, headers = call(f"{svc.url}/admin/v2{TOPIC}/partitions", "GET")
    assert status == 200
    (record,) = [r for r in _records(log) if r["message"].startswith("looking at")]
    assert record["level"] == "WARNING" and record["name"] == "magnetar_core.services.admin"
    assert record["correlation_id"] == headers["apigw-requestid"]


def test_the_local_gateway_logs_a_crashing_handler_with_the_request_id_and_answers_the_error_shape(
    caplog,
):
    from magnetar_local.events import HttpRequest
    from magnetar_local.gateway import Gateway

    gateway = Gateway([], {})

    def crash(event, context):
        raise RuntimeError("container died")

    gateway.add_route("GET", "/boom", crash)
    with caplog.at_level(logging.ERROR, logger="magnetar_local.gateway"):
        response = gateway.invoke(HttpRequest("GET", "/boom", "", [], b""))
    body = json.loads(response.body)
    assert (response.status, body["error"], set(body)) == (
        502,
        "UnknownError",
        {"error", "message"},
    )
    request_id = dict(response.headers)["apigw-requestid"]
    assert request_id in body["message"]
    (record,) = [r for r in caplog.records if r.name == "magnetar_local.gateway"]
    assert request_id in record.getMessage() and record.exc_info is not None


def test_a_handler_module_leaves_the_sdks_magnetar_logger_alone(svc):
    call(f"{svc.url}/admin/v2{TOPIC}/partitions", "GET")  # loads a handler module
    sdk = logging.getLogger("magnetar")
    assert sdk.handlers == [] and sdk.propagate
    for handler in logging.getLogger().handlers:
        assert not any(getattr(f, "logger", None) == "magnetar" for f in handler.filters)


# ----------------------------------------------------------------------- defect 7: bad input


JSON_ROUTES = [
    f"/v1{TOPIC}/messages",
    f"/v1{TOPIC}/producers",
    f"/v1{TOPIC}/subscriptions/s/consumers",
    f"/v1{TOPIC}/subscriptions/s/consumers/c/receive",
    f"/v1{TOPIC}/subscriptions/s/consumers/c/ack",
    f"/v1{TOPIC}/subscriptions/s/consumers/c/nack",
    f"/v1{TOPIC}/subscriptions/s/consumers/c/seek",
    "/admin/v2/namespaces/public/default/deduplication",
]


@pytest.mark.parametrize("path", JSON_ROUTES)
def test_a_body_that_is_not_utf8_is_a_400_invalid_message_on_every_json_route(svc, path):
    answer = call(svc.url + path, body=b'{"messages": "\xff\xfe"}')
    assert_error(answer, 400, "InvalidMessage", "UTF-8")


@pytest.mark.parametrize("path", JSON_ROUTES[:3])
def test_a_body_nested_100k_deep_is_a_400_invalid_message(svc, path):
    assert_error(call(svc.url + path, body=b"[" * 100_000), 400, "InvalidMessage", "nested")


@pytest.mark.parametrize(
    "path",
    [
        "/v1/persistent/public/default/" + "x" * 1100 + "/messages",
        "/v1/persistent/" + "t" * 3000 + "/default/x/messages",
        "/v1/persistent/public/" + "n" * 3000 + "/x/messages",
    ],
)
def test_names_longer_than_the_keys_allow_are_a_400_invalid_topic_name(svc, path):
    body = json.dumps({"messages": [{"payload": "YWJj"}]}).encode()
    assert_error(call(svc.url + path, body=body), 400, "InvalidTopicName", "bytes")


def test_names_at_the_limits_are_accepted(svc):
    tenant, namespace = "t" * limits.MAX_TENANT_BYTES, "n" * limits.MAX_NAMESPACE_BYTES
    topic = "x" * limits.MAX_TOPIC_BYTES
    svc.create_namespaces(f"{tenant}/{namespace}")
    base = f"{svc.url}/v1/persistent/{tenant}/{namespace}/{topic}"
    status, body, _ = call(base + "/messages", body=b'{"messages": [{"payload": "YWJj"}]}')
    assert status == 200, body
    sub = "s" * limits.MAX_SUBSCRIPTION_BYTES
    status, body, _ = call(f"{base}/subscriptions/{sub}/consumers", body=b"{}")
    assert status == 200, body


def test_a_partition_of_a_topic_at_the_limit_is_accepted(svc):
    topic = "x" * limits.MAX_TOPIC_BYTES
    svc.create_partitioned_topic(f"persistent/public/default/{topic}", 2)
    path = f"/v1/persistent/public/default/{topic}-partition-1/messages"
    status, body, _ = call(svc.url + path, body=b'{"messages": [{"payload": "YWJj"}]}')
    assert status == 200, body


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/subscriptions/" + "s" * 1100 + "/consumers", b"{}"),
        ("/producers/" + "p" * 1100 + "/heartbeat?epoch=0", b""),
    ],
)
def test_subscription_and_producer_names_longer_than_the_keys_allow_are_a_400(svc, path, body):
    assert_error(call(f"{svc.url}/v1{TOPIC}{path}", body=body), 400, "InvalidMessage", "bytes")


@pytest.mark.parametrize("path", ["/producers", "/messages"])
def test_a_producer_name_in_a_body_is_bounded_like_one_in_a_path(svc, path):
    name = "p" * (limits.MAX_PRODUCER_NAME_BYTES + 1)
    body = {"producerName": name, "messages": [{"payload": "YWJj"}]}
    answer = call(f"{svc.url}/v1{TOPIC}{path}", body=json.dumps(body).encode())
    assert_error(answer, 400, "InvalidMessage", "producerName", "bytes")
    body["producerName"] = name[1:]
    assert call(f"{svc.url}/v1{TOPIC}{path}", body=json.dumps(body).encode())[0] == 200


def test_namespace_policy_routes_refuse_names_longer_than_the_keys_allow(svc):
    path = "/admin/v2/namespaces/" + "t" * 3000 + "/default/deduplication"
    assert_error(call(svc.url + path, body=b"true"), 400, "InvalidTopicName", "bytes")


def test_every_limit_keeps_every_key_we_build_within_dynamodb_and_s3_limits():
    from magnetar_core.domain.compaction import segment_prefix
    from magnetar_core.domain.log import log_key
    from magnetar_core.services.produce import object_prefix
    from magnetar_core.services.uploads import upload_prefix
    from magnetar_wire.names import TopicName

    name = TopicName.of(
        "non-persistent",
        "t" * limits.MAX_TENANT_BYTES,
        "n" * limits.MAX_NAMESPACE_BYTES,
        "x" * limits.MAX_TOPIC_BYTES,
    ).partition(2**31 - 1)  # the longest partition suffix (a Java int)
    ledger = log_key(str(name), 2**63 - 1)
    sub, run_id = "s" * limits.MAX_SUBSCRIPTION_BYTES, "r" * 32
    assert len(ledger.encode()) <= 2048  # partition keys (log, cursors)
    assert len(f"{ledger}|np|{sub}".encode()) <= 2048  # non-persistent buffers
    assert len(name.local.encode()) <= 1024 and len(sub.encode()) <= 1024  # sort keys
    longest_object = segment_prefix(ledger, run_id) + f"{2**63 - 1}-{2**63 - 1}"
    assert len(longest_object.encode()) <= 1024  # S3 keys
    assert len((object_prefix(name) + "u" * 32).encode()) <= 1024
    assert len((upload_prefix(name) + "u" * 64).encode()) <= 1024  # the longest upload id
    assert len(("segments/" + str(name).replace("://", "/") + "/" + "9" * 60).encode()) <= 1024


def test_the_handlers_own_500_has_the_error_shape_for_a_storage_fault(svc, monkeypatch):
    from magnetar_core.domain.errors import StorageFault

    def failing(self, topic):
        raise StorageFault("DynamoDB said no: ValidationException")

    monkeypatch.setattr(Admin, "partitions", failing)
    with service_log() as log:
        answer = call(f"{svc.url}/admin/v2{TOPIC}/partitions", "GET")
    assert_error(answer, 500, "UnknownError", "DynamoDB said no")
    assert [r["correlation_id"] for r in _records(log) if r["level"] == "ERROR"] == [
        answer[2]["apigw-requestid"]
    ]


def test_an_overloaded_produce_is_a_503_with_retry_after_in_the_error_shape(svc, monkeypatch):
    from magnetar_core.domain.errors import Overloaded
    from magnetar_core.services.commit import Committer

    def overloaded(self, *args, **kwargs):
        raise Overloaded("Could not commit to t; retry", retry_after_ms=1500)

    monkeypatch.setattr(Committer, "commit", overloaded)
    answer = call(
        f"{svc.url}/v1{TOPIC}/messages",
        body=json.dumps({"messages": [{"payload": "eA=="}]}).encode(),
    )
    status, body, headers = answer
    assert (status, body["error"], body["retryAfterMs"]) == (503, "ServiceUnitNotReady", 1500)
    assert headers["Retry-After"] == "2"  # whole seconds, rounded up
    assert "Could not commit" in body["message"] and "request id" in body["message"]
