"""Powertools resolver factory, Pulsar-named JSON errors and request parsing for handlers."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.exceptions import NotFoundError

from magnetar_core.domain.errors import InvalidMessage, MagnetarError
from magnetar_core.domain.names import TopicName
from magnetar_core.engine import Engine
from magnetar_core.settings import Settings

ENTRY_CONTENT_TYPE = "application/vnd.magnetar.entry"
UPLOAD_EXPIRY_SECONDS = 900
logger = Logger(service="magnetar")
_injected: ContextVar[Engine | None] = ContextVar("magnetar_injected_engine", default=None)


def error_response(code: str, message: str, status: int) -> Response:
    """``{"error": <Pulsar result name>, "message": ...}`` with ``status``."""
    body = json.dumps({"error": code, "message": message})
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body=body)


def make_app() -> APIGatewayHttpResolver:
    """An HTTP API (payload 2.0) resolver whose errors are Pulsar-named JSON."""
    app = APIGatewayHttpResolver()

    @app.exception_handler(MagnetarError)
    def domain_error(exc: MagnetarError) -> Response:
        if exc.status >= 500:
            logger.exception("request failed")
        return error_response(exc.code, exc.message, exc.status)

    @app.not_found
    def not_found(_exc: NotFoundError) -> Response:
        event = app.current_event
        return error_response("NotFound", f"No route for {event.http_method} {event.path}", 404)

    return app


def engine_from_env() -> Engine:
    """The engine for this Lambda container, from settings read once here at the edge (or
    the engine ``injected_engine`` hands to handler modules loaded inside it)."""
    injected = _injected.get()
    if injected is not None:
        return injected
    return Engine.build(Settings.from_env(os.environ))


@contextmanager
def injected_engine(engine: Engine) -> Iterator[Engine]:
    """Within the block (this thread / context only), ``engine_from_env`` returns ``engine``:
    load a handler module inside it to run the handler on an engine built elsewhere (e.g. on
    in-memory adapters) instead of one built from the environment."""
    token = _injected.set(engine)
    try:
        yield engine
    finally:
        _injected.reset(token)


def topic_of(domain: str, tenant: str, namespace: str, topic: str) -> TopicName:
    """The topic a route's path names; raises InvalidTopicName."""
    return TopicName.of(domain, tenant, namespace, topic)


def json_body(app: APIGatewayHttpResolver, default: Any = None) -> Any:
    """The request body as JSON (``default`` when empty); raises InvalidMessage."""
    raw = app.current_event.decoded_body if app.current_event.body else None
    if not raw:
        return default
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise InvalidMessage(f"The body is not valid JSON: {exc}") from exc


def json_object(app: APIGatewayHttpResolver) -> dict:
    """The request body as a JSON object ({} when empty); raises InvalidMessage."""
    body = json_body(app, {})
    if not isinstance(body, dict):
        raise InvalidMessage("The body must be a JSON object")
    return body


def raw_body(app: APIGatewayHttpResolver) -> bytes:
    """The request body as bytes (base64-decoded when API Gateway encoded it)."""
    event = app.current_event
    if not event.body:
        return b""
    if event.is_base64_encoded:
        return base64.b64decode(event.body)
    return event.body.encode()


def content_type(app: APIGatewayHttpResolver) -> str:
    return (app.current_event.headers.get("content-type") or "").split(";")[0].strip().lower()


def int_query(app: APIGatewayHttpResolver, name: str, required: bool = False) -> int | None:
    """An integer query parameter such as ``epoch=3``; raises InvalidMessage."""
    raw = app.current_event.get_query_string_value(name)
    if raw is None or raw == "":
        if required:
            raise InvalidMessage(f"Query parameter '{name}' is required")
        return None
    try:
        return int(raw)
    except ValueError:
        raise InvalidMessage(f"Query parameter '{name}' must be an integer, not {raw!r}") from None


def flag(app: APIGatewayHttpResolver, name: str) -> bool:
    """A boolean query parameter such as ``force=true``."""
    return (app.current_event.get_query_string_value(name, "false") or "").lower() == "true"


def field(body: dict, name: str, kind: type, default: Any) -> Any:
    """``body[name]`` checked to be of ``kind``; raises InvalidMessage naming the field."""
    value = body.get(name, default)
    if value is None:
        return default
    if kind is int and isinstance(value, bool) or not isinstance(value, kind):
        raise InvalidMessage(
            f"Field '{name}' must be of type {kind.__name__}, not {type(value).__name__}"
        )
    return value


def ok(body: Any, status: int = 200) -> Response:
    return Response(
        status_code=status, content_type=content_types.APPLICATION_JSON, body=json.dumps(body)
    )


def no_content() -> Response:
    return Response(status_code=204, body="")
