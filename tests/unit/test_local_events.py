"""Payload format 2.0 events and response mapping of the local gateway (no network)."""

from __future__ import annotations

import base64
import json

import pytest

from magnetar_local.events import (
    HttpRequest,
    InvalidLambdaResponse,
    LambdaContext,
    build_event,
    to_http_response,
)
from magnetar_local.routes import RouteMatch
from magnetar_local.template import RouteSpec

ROUTE = RouteSpec("POST", "/v1/{domain}/{tenant}/{namespace}/{topic}/messages", "ProduceFunction")
MATCH = RouteMatch(
    ROUTE, {"domain": "persistent", "tenant": "public", "namespace": "default", "topic": "my topic"}
)


def _request(body: bytes = b"", content_type: str = "application/json", **extra) -> HttpRequest:
    headers = [
        ("Host", "127.0.0.1:9"),
        ("Content-Type", content_type),
        ("User-Agent", "ua/1"),
        ("X-Multi", "a"),
        ("x-multi", "b"),
        ("Cookie", "c1=v1; c2=v2"),
    ]
    return HttpRequest(
        method="POST",
        raw_path="/v1/persistent/public/default/my%20topic/messages",
        raw_query="a=1&b=&a=2",
        headers=headers,
        body=body,
        **extra,
    )


def test_a_json_request_becomes_a_well_formed_version_2_event():
    event = build_event(_request(b'{"messages": []}'), MATCH)
    assert event["version"] == "2.0"
    assert event["routeKey"] == event["requestContext"]["routeKey"] == f"POST {ROUTE.path}"
    assert event["rawPath"] == "/v1/persistent/public/default/my%20topic/messages"
    assert event["rawQueryString"] == "a=1&b=&a=2"
    assert event["queryStringParameters"] == {"a": "1,2", "b": ""}
    assert event["pathParameters"]["topic"] == "my topic"
    assert event["headers"]["x-multi"] == "a,b"
    assert "cookie" not in event["headers"] and event["cookies"] == ["c1=v1", "c2=v2"]
    assert (event["body"], event["isBase64Encoded"]) == ('{"messages": []}', False)
    context = event["requestContext"]
    assert context["stage"] == "$default" and context["domainName"] == "127.0.0.1:9"
    assert context["http"] == {
        "method": "POST",
        "path": event["rawPath"],
        "protocol": "HTTP/1.1",
        "sourceIp": "127.0.0.1",
        "userAgent": "ua/1",
    }
    assert isinstance(context["timeEpoch"], int) and context["requestId"]
    assert context["time"].endswith(" +0000")


def test_a_binary_body_is_base64_encoded():
    payload = bytes(range(256))
    event = build_event(_request(payload, "application/vnd.magnetar.entry"), MATCH)
    assert event["isBase64Encoded"] is True
    assert base64.b64decode(event["body"]) == payload


def test_a_request_without_body_query_or_parameters_omits_those_keys():
    request = HttpRequest("GET", "/admin/v2/brokers/health", "", [("Host", "h")], b"")
    event = build_event(request, RouteMatch(RouteSpec("GET", "/admin/v2/brokers/health", "A"), {}))
    assert not {"body", "queryStringParameters", "pathParameters", "cookies"} & set(event)
    assert event["isBase64Encoded"] is False


def test_a_full_response_maps_status_headers_cookies_and_base64_bodies():
    response = to_http_response(
        {
            "statusCode": 201,
            "headers": {"Content-Type": "application/octet-stream"},
            "multiValueHeaders": {"X-A": ["1", "2"]},
            "cookies": ["s=1"],
            "body": base64.b64encode(b"\x00\x01").decode(),
            "isBase64Encoded": True,
        }
    )
    assert response.status == 201 and response.body == b"\x00\x01"
    assert ("X-A", "1") in response.headers and ("X-A", "2") in response.headers
    assert ("Set-Cookie", "s=1") in response.headers


@pytest.mark.parametrize(
    ("result", "body"),
    [({"ok": True}, json.dumps({"ok": True}).encode()), ("ok", b"ok"), ([1], b"[1]")],
)
def test_a_result_without_status_code_is_a_200_json_response(result, body):
    response = to_http_response(result)
    assert (response.status, response.body) == (200, body)
    assert ("Content-Type", "application/json") in response.headers


def test_a_malformed_response_is_rejected():
    with pytest.raises(InvalidLambdaResponse):
        to_http_response({"statusCode": "teapot"})


def test_the_lambda_context_counts_down_from_the_function_timeout():
    context = LambdaContext("magnetar-produce", 256, 30)
    assert 29_000 < context.get_remaining_time_in_millis() <= 30_000
    assert context.invoked_function_arn.endswith(":function:magnetar-produce")
    assert context.memory_limit_in_mb == 256 and context.aws_request_id
