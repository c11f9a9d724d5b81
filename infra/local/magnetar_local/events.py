"""API Gateway HTTP API payload format 2.0: request events, Lambda context, response mapping.

Follows https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-develop-integrations-lambda.html
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from magnetar_local.routes import RouteMatch

_TEXT_TYPES = (
    "application/json",
    "application/xml",
    "application/javascript",
    "application/x-www-form-urlencoded",
    "application/yaml",
)


def is_text_content_type(content_type: str | None) -> bool:
    """True when a body of this Content-Type is passed to the handler as text (not base64)."""
    media_type = (content_type or "").split(";", 1)[0].strip().lower()
    return (
        media_type.startswith("text/")
        or media_type in _TEXT_TYPES
        or media_type.endswith("+json")
        or media_type.endswith("+xml")
    )


@dataclass
class HttpRequest:
    """The parts of an HTTP request the event builder needs (header names in any case)."""

    method: str
    raw_path: str
    raw_query: str
    headers: list[tuple[str, str]]
    body: bytes
    source_ip: str = "127.0.0.1"
    protocol: str = "HTTP/1.1"
    client_cert: dict[str, Any] | None = None
    """The verified client certificate of a TLS connection (``magnetar_local.tls``)."""


def build_event(
    request: HttpRequest, match: RouteMatch, api_id: str = "local", account_id: str = "123456789012"
) -> dict[str, Any]:
    """Build the payload 2.0 event API Gateway would send for ``request`` on ``match``."""
    headers: dict[str, str] = {}
    cookies: list[str] = []
    for name, value in request.headers:
        lower = name.lower()
        if lower == "cookie":
            cookies.extend(part.strip() for part in value.split(";") if part.strip())
            continue
        headers[lower] = f"{headers[lower]},{value}" if lower in headers else value
    now = time.time()
    route_key = match.route.route_key
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": route_key,
        "rawPath": request.raw_path,
        "rawQueryString": request.raw_query,
        "headers": headers,
        "requestContext": {
            "accountId": account_id,
            "apiId": api_id,
            "domainName": headers.get("host", "localhost"),
            "domainPrefix": headers.get("host", "localhost").split(".", 1)[0].split(":", 1)[0],
            "http": {
                "method": request.method.upper(),
                "path": request.raw_path,
                "protocol": request.protocol,
                "sourceIp": request.source_ip,
                "userAgent": headers.get("user-agent", ""),
            },
            "requestId": uuid.uuid4().hex[:16],
            "routeKey": route_key,
            "stage": "$default",
            "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now)),
            "timeEpoch": int(now * 1000),
        },
        "isBase64Encoded": False,
    }
    if request.client_cert is not None:  # as API Gateway's mutual TLS puts it
        event["requestContext"]["authentication"] = {"clientCert": dict(request.client_cert)}
    if cookies:
        event["cookies"] = cookies
    query = _join_values(parse_qsl(request.raw_query, keep_blank_values=True))
    if query:
        event["queryStringParameters"] = query
    if match.path_parameters:
        event["pathParameters"] = dict(match.path_parameters)
    if request.body:
        text = _as_text(request.body, headers.get("content-type"))
        if text is None:
            event["body"] = base64.b64encode(request.body).decode("ascii")
            event["isBase64Encoded"] = True
        else:
            event["body"] = text
    return event


def _join_values(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    joined: dict[str, str] = {}
    for name, value in pairs:
        joined[name] = f"{joined[name]},{value}" if name in joined else value
    return joined


def _as_text(body: bytes, content_type: str | None) -> str | None:
    if not is_text_content_type(content_type):
        return None
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return None


@dataclass
class HttpResponse:
    """What the gateway sends back: status, header pairs (repeatable) and body bytes."""

    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""


class InvalidLambdaResponse(ValueError):
    """The handler returned something API Gateway would reject (it answers 502)."""


def to_http_response(result: Any) -> HttpResponse:
    """Map a handler's return value to an HTTP response (payload 2.0 rules).

    A dict with ``statusCode`` is a full response (headers, multiValueHeaders, cookies,
    body, isBase64Encoded); any other value is a 200 ``application/json`` body (a string
    as is, anything else JSON-encoded). Raises InvalidLambdaResponse for a malformed one.
    """
    if not (isinstance(result, dict) and "statusCode" in result):
        text = result if isinstance(result, str) else json.dumps(result)
        return HttpResponse(200, [("Content-Type", "application/json")], text.encode())
    try:
        status = int(result["statusCode"])
        headers = [(str(k), str(v)) for k, v in (result.get("headers") or {}).items()]
        for name, values in (result.get("multiValueHeaders") or {}).items():
            headers.extend((str(name), str(value)) for value in values)
        headers.extend(("Set-Cookie", str(cookie)) for cookie in result.get("cookies") or [])
        body = result.get("body")
        if body is None:
            payload = b""
        elif result.get("isBase64Encoded"):
            payload = base64.b64decode(body)
        else:
            payload = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    except (TypeError, ValueError, AttributeError) as error:
        raise InvalidLambdaResponse(f"malformed Lambda response: {error}") from error
    if not 100 <= status <= 599:
        raise InvalidLambdaResponse(f"malformed Lambda response: statusCode {status}")
    return HttpResponse(status, headers, payload)


def json_response(status: int, document: dict[str, Any]) -> HttpResponse:
    """A JSON response produced by the gateway itself (404, 502, ...)."""
    return HttpResponse(
        status, [("Content-Type", "application/json")], json.dumps(document).encode()
    )


class LambdaContext:
    """The subset of the Lambda context object handlers use (Powertools reads these)."""

    def __init__(
        self,
        function_name: str,
        memory_mb: int,
        timeout_s: int,
        region: str = "us-east-1",
        account_id: str = "123456789012",
    ) -> None:
        self.function_name = function_name
        self.function_version = "$LATEST"
        self.memory_limit_in_mb = memory_mb
        self.invoked_function_arn = f"arn:aws:lambda:{region}:{account_id}:function:{function_name}"
        self.aws_request_id = str(uuid.uuid4())
        self.log_group_name = f"/aws/lambda/{function_name}"
        self.log_stream_name = "local"
        self._deadline = time.monotonic() + timeout_s

    def get_remaining_time_in_millis(self) -> int:
        """Milliseconds left before the function's timeout (never negative)."""
        return max(0, int((self._deadline - time.monotonic()) * 1000))
