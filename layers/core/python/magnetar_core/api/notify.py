"""The notification channel's edge: API Gateway WebSocket API events -> ``services.notify``.

Routes (``requestContext.routeKey``; the API selects ``$request.body.action``):

* ``$connect``: authenticates like the HTTP routes' authorizer (``api.authorizer``; the
  token as query parameter ``token`` — WebSocket clients cannot always set headers — or an
  ``Authorization`` header) and records the connection with its role. A token that proves
  no role is answered 403 (API Gateway then refuses the connection).
* ``watch``: ``{"action": "watch", "ref": <any>, "watches": [{"topic", "subscription",
  "consumerId"}, ...]}``: holds the consumers' leases and stores the watches; answered (a
  two-way route) ``{"watching": n, "ref": ref}`` (and ``recheckInMs`` when a watched cursor
  may have work without a commit then: a delayed bucket, another consumer's lease end), or ``{"error", "message", "ref"}`` with
  Pulsar's error name for a bad body or consumer (nothing stored).
* ``$disconnect``: forgets the connection's watches and releases its holds.

Answers are ``{"statusCode", "body"}`` as API Gateway's Lambda proxy integration takes
them; a fault past the service raises (API Gateway answers the client an internal error).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from magnetar_core.api import metrics
from magnetar_core.api.authorizer import ROLE_CONTEXT_KEY, ContainerAuthorizer
from magnetar_core.api.http import container_engine, logger
from magnetar_core.domain.errors import InvalidMessage, MagnetarError
from magnetar_core.engine import Engine

Authorize = Callable[[Mapping[str, Any]], dict[str, Any]]
"""An authorizer: a payload 2.0 authorizer event -> its simple response (``api.authorizer``)."""


def _answer(status: int, body: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {"statusCode": status, "body": json.dumps(body) if body is not None else ""}


def connect_event(event: Mapping[str, Any]) -> dict[str, Any]:
    """The authorizer event of a ``$connect``: its ``Authorization`` header, else its
    ``token`` query parameter as a bearer token."""
    headers = {str(k).lower(): v for k, v in (event.get("headers") or {}).items()}
    token = (event.get("queryStringParameters") or {}).get("token")
    if "authorization" not in headers and isinstance(token, str) and token:
        headers["authorization"] = f"Bearer {token}"
    return {"routeKey": "$connect", "headers": headers}


def lambda_handler(
    engine: Callable[[], Engine] | None = None, authorize: Authorize | None = None
) -> Callable[[Any, Any], dict]:
    """The channel function's entry point on ``engine()`` (None: a container engine of its
    own), authenticating ``$connect`` with ``authorize`` (None: the container's authorizer,
    from the environment as the HTTP API's)."""
    engine = engine or container_engine()
    authorize = authorize or ContainerAuthorizer()

    @logger.inject_lambda_context
    @metrics.invocation_measured("notify")
    def handle(event: Any, context: Any) -> dict:
        request = event.get("requestContext") or {}
        route, connection = request.get("routeKey"), str(request.get("connectionId") or "")
        if route == "$connect":
            answer = authorize(connect_event(event))
            if not answer.get("isAuthorized"):
                return _answer(403, {"error": "AuthorizationError", "message": "token refused"})
            engine().notify.connect(connection, (answer.get("context") or {}).get(ROLE_CONTEXT_KEY))
            return _answer(200)
        if route == "$disconnect":
            released = engine().notify.disconnect(connection)
            logger.info("connection %s ended: %d holds released", connection, released)
            return _answer(200)
        return _watch(engine, connection, route, event.get("body"))

    return handle


def _watch(engine: Callable[[], Engine], connection: str, route: Any, text: Any) -> dict:
    """Answer a ``watch`` message (or refuse another route as InvalidMessage)."""
    ref = None
    try:
        try:
            body = json.loads(text) if isinstance(text, str) else None
        except ValueError:
            body = None
        ref = body.get("ref") if isinstance(body, dict) else None
        if route != "watch":
            raise InvalidMessage(f"unknown action {route!r}: the channel takes 'watch'")
        count, recheck_ms = engine().notify.watch(connection, body)
    except MagnetarError as exc:
        if exc.status >= 500:
            raise
        return _answer(exc.status, {"error": exc.code, "message": exc.message, "ref": ref})
    answer: dict[str, Any] = {"watching": count, "ref": ref}
    if recheck_ms is not None:
        answer["recheckInMs"] = recheck_ms
    return _answer(200, answer)
