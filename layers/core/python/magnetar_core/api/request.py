"""What a handler reads from the request: the topic its path names, the JSON body (and its
fields), the raw body, query parameters. Each raises a Pulsar-named error (InvalidMessage,
InvalidTopicName, UnsupportedMediaType) that the resolver (``api.http``) answers as JSON."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

from magnetar_core.api.limits import INT64_MAX, INT64_MIN
from magnetar_core.domain.errors import InvalidMessage, UnsupportedMediaType
from magnetar_wire.names import TopicName


def topic_of(domain: str, tenant: str, namespace: str, topic: str) -> TopicName:
    """The topic a route's path names; raises InvalidTopicName."""
    return TopicName.of(domain, tenant, namespace, topic)


def json_body(app: APIGatewayHttpResolver, default: Any = None) -> Any:
    """The request body as JSON (``default`` when empty): UTF-8 text, not nested more than
    the parser can follow, no NaN/Infinity; raises InvalidMessage, or UnsupportedMediaType
    for a body sent as a media type that is not JSON (``JSON_BODY_TYPES``)."""
    raw = raw_body(app)
    if not raw:
        return default
    kind = content_type(app)
    if kind not in JSON_BODY_TYPES and not kind.endswith("+json"):
        raise UnsupportedMediaType(
            f"Content-Type {kind[:64]!r} is not supported: send the body as application/json"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidMessage(f"The body is not UTF-8 text: {exc}") from None
    try:
        return json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise InvalidMessage("The body is not valid JSON: it is nested too deeply") from None
    except ValueError as exc:
        raise InvalidMessage(f"The body is not valid JSON: {exc}") from exc


# What a JSON body may be sent as: JSON, none, or what ``curl -d`` and urllib send unasked.
JSON_BODY_TYPES = ("application/json", "", "application/x-www-form-urlencoded")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def json_object(app: APIGatewayHttpResolver) -> dict:
    """The request body as a JSON object ({} when empty); raises InvalidMessage."""
    body = json_body(app, {})
    if not isinstance(body, dict):
        raise InvalidMessage("The body must be a JSON object")
    return body


def raw_body(app: APIGatewayHttpResolver) -> bytes:
    """The request body as bytes (base64-decoded when API Gateway encoded it); raises
    InvalidMessage for a body that is neither."""
    event = app.current_event
    if not event.body:
        return b""
    try:
        if event.is_base64_encoded:
            return base64.b64decode(event.body)
        return event.body.encode("utf-8")
    except (binascii.Error, UnicodeError) as exc:
        raise InvalidMessage(f"The body cannot be read: {exc}") from None


def content_type(app: APIGatewayHttpResolver) -> str:
    return (app.current_event.headers.get("content-type") or "").split(";")[0].strip().lower()


def int_query(
    app: APIGatewayHttpResolver,
    name: str,
    required: bool = False,
    minimum: int = INT64_MIN,
    maximum: int = INT64_MAX,
) -> int | None:
    """An integer query parameter such as ``epoch=3``, within ``minimum..maximum`` (a Java
    long by default); raises InvalidMessage."""
    raw = app.current_event.get_query_string_value(name)
    if raw is None or raw == "":
        if required:
            raise InvalidMessage(f"Query parameter '{name}' is required")
        return None
    try:
        value = int(raw)
    except ValueError:
        raise InvalidMessage(f"Query parameter '{name}' must be an integer, not {raw!r}") from None
    if not minimum <= value <= maximum:
        raise InvalidMessage(
            f"Query parameter '{name}' must be an integer from {minimum} to {maximum}"
        )
    return value


def epoch(app: APIGatewayHttpResolver, required: bool = False) -> int | None:
    """The producer epoch of ``?epoch=``: 0 or more; raises InvalidMessage."""
    return int_query(app, "epoch", required, minimum=0)


def choice_query(app: APIGatewayHttpResolver, name: str, choices: tuple[str, ...], default: str):
    """A query parameter that must be one of ``choices`` (``default`` when absent); raises
    InvalidMessage naming the allowed values."""
    value = app.current_event.get_query_string_value(name)
    if value is None:
        return default
    if value not in choices:
        raise InvalidMessage(
            f"Query parameter '{name}' must be one of {', '.join(choices)}, not {value[:64]!r}"
        )
    return value


def flag(app: APIGatewayHttpResolver, name: str) -> bool:
    """A boolean query parameter such as ``force=true``: ``true`` or ``false`` (any case;
    absent or empty is false); anything else raises InvalidMessage."""
    raw = (app.current_event.get_query_string_value(name) or "false").lower()
    if raw not in ("true", "false"):
        raise InvalidMessage(f"Query parameter '{name}' must be true or false, not {raw[:64]!r}")
    return raw == "true"


def field(
    body: dict, name: str, kind: type[Any], default: Any, max_bytes: int | None = None
) -> Any:
    """``body[name]`` checked to be of ``kind`` (an int: within a Java long; a str: at most
    ``max_bytes`` UTF-8 bytes when given); raises InvalidMessage naming the field."""
    value: Any = body.get(name, default)
    if value is None:
        return default
    if kind is int and isinstance(value, bool) or not isinstance(value, kind):
        raise InvalidMessage(
            f"Field '{name}' must be of type {kind.__name__}, not {type(value).__name__}"
        )
    if kind is int and not INT64_MIN <= value <= INT64_MAX:
        raise InvalidMessage(f"Field '{name}' must be an integer from {INT64_MIN} to {INT64_MAX}")
    if max_bytes is not None and len(value.encode("utf-8", "surrogatepass")) > max_bytes:
        raise InvalidMessage(f"Field '{name}' is longer than {max_bytes} bytes (UTF-8)")
    return value
