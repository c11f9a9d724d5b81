"""Powertools resolver factory, Pulsar-named JSON errors and answers for handlers (what they
read from a request: ``api.request``).

Every answer of ours is JSON ``{"error": <Pulsar result name>, "message": ...}`` on failure,
5xx included; every fault is logged (JSON, with the API Gateway request id as
``correlation_id`` and the Lambda request id as ``function_request_id``) by the one
Powertools logger of the handlers, whose configuration the engine's own loggers
(``magnetar_core.*``, ``magnetar_wire.*``) share.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.logging.utils import copy_config_to_registered_loggers

from magnetar_core.api import metrics
from magnetar_core.api.containers import ContainerEngine as ContainerEngine  # the handlers'
from magnetar_core.api.containers import container_engine as container_engine
from magnetar_core.api.containers import injected_engine as injected_engine
from magnetar_core.api.containers import shared_clients as shared_clients
from magnetar_core.api.containers import shared_engine as shared_engine
from magnetar_core.api.guard import caller_role as caller_role  # for the handlers
from magnetar_core.api.guard import guard, served_route
from magnetar_core.api.limits import check_path_names
from magnetar_core.domain.errors import MagnetarError
from magnetar_core.engine import Engine
from magnetar_core.services.deadline import Deadline, within
from magnetar_wire.frames import ENTRIES_CONTENT_TYPE as ENTRIES_CONTENT_TYPE

ENTRY_CONTENT_TYPE = "application/vnd.magnetar.entry"
UPLOAD_EXPIRY_SECONDS = 900

SERVICE = metrics.SERVICE
"""The Powertools service name. Not ``magnetar``: Powertools drops, on the root logger's
handlers, every record whose logger name contains the service name (its SuppressFilter),
which silenced ``magnetar_local.*`` and ``magnetar_core.*``; ``magnetar`` is also the SDK's
logger."""
ENGINE_LOGGERS = ("magnetar_core", "magnetar_wire")

logger = Logger(service=SERVICE)
for _name in ENGINE_LOGGERS:
    logging.getLogger(_name)  # registered, so that Powertools finds it
copy_config_to_registered_loggers(source_logger=logger, include=set(ENGINE_LOGGERS))


def error_response(
    code: str, message: str, status: int, retry_after_ms: int | None = None
) -> Response:
    """``{"error": <Pulsar result name>, "message": ...}`` with ``status``; with
    ``retry_after_ms`` also ``retryAfterMs`` and a Retry-After header (whole seconds, >= 1)."""
    doc: dict[str, Any] = {"error": code, "message": message}
    headers = None
    if retry_after_ms is not None:
        doc["retryAfterMs"] = retry_after_ms
        headers = {"Retry-After": str(max(1, -(-retry_after_ms // 1000)))}
    body = json.dumps(doc)
    return Response(
        status_code=status,
        content_type=content_types.APPLICATION_JSON,
        body=body,
        headers=headers,
    )


class _Resolver(APIGatewayHttpResolver):
    """Powertools' HTTP API resolver with the event being resolved kept on the instance.

    Powertools stores the current event and Lambda context on the ``BaseRouter`` *class*,
    shared by every resolver of the process. One Lambda process resolves one event at a
    time, but the local gateway runs many containers' handlers in one process, on threads:
    there a concurrent request's event replaced this one's mid-route (a produce read a
    receive's body; a partition's path parameters served another partition's request).
    Here ``current_event`` and ``lambda_context`` are per resolver (a container serves one
    request at a time), set by ``resolve`` before Powertools routes.

    A route's regular expression is compiled once per process (``_compile_regex``), not
    once per resolver: a Lambda process loads one container, the local gateway loads one
    per concurrent request, each registering every route of its handler again (and more
    routes than ``re``'s own cache holds).
    """

    @staticmethod
    @functools.cache
    def _compile_regex(rule: str, base_regex: str | None = None) -> re.Pattern[str]:
        if base_regex is None:
            return APIGatewayHttpResolver._compile_regex(rule)
        return APIGatewayHttpResolver._compile_regex(rule, base_regex)

    def resolve(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        self.__dict__["_event"] = self._to_proxy_event(dict(event))
        self.__dict__["_context"] = context
        return super().resolve(event, context)

    @property
    def current_event(self) -> Any:
        return self.__dict__.get("_event")

    @current_event.setter
    def current_event(self, value: Any) -> None:
        self.__dict__["_event"] = value

    @property
    def lambda_context(self) -> Any:
        return self.__dict__.get("_context")

    @lambda_context.setter
    def lambda_context(self, value: Any) -> None:
        self.__dict__["_context"] = value


def make_app(engine: Callable[[], Engine] | None = None) -> APIGatewayHttpResolver:
    """An HTTP API (payload 2.0) resolver whose errors are Pulsar-named JSON: domain errors
    with their status, anything unexpected as a logged 500 ``UnknownError`` naming the
    request id; path parameters decoded once (by API Gateway) and bounded in length; every
    request authenticated and authorized on ``engine()``'s security before its route runs
    (``api.guard``: 401, 403; nothing when authentication is off). Pass the handler
    module's ``container_engine()``; None makes one of its own. Its current event is its
    own (``_Resolver``), never another thread's."""
    app = _Resolver()
    app.use([_path_arguments, guard(engine or container_engine())])

    @app.exception_handler(MagnetarError)
    def domain_error(exc: MagnetarError) -> Response:
        retry = getattr(exc, "retry_after_ms", None)
        if exc.status < 500:
            return error_response(exc.code, exc.message, exc.status, retry)
        request_id = _request_id(app)
        if retry is not None:  # overload: expected under load, the client waits and resends
            logger.warning("request %s: %s, retry after %d ms", request_id, exc.code, retry)
            message = f"{exc.message} (request id {request_id})"
            return error_response(exc.code, message, exc.status, retry)
        logger.exception("request %s failed: %s", request_id, exc.code)
        return error_response(exc.code, f"{exc.message} (request id {request_id})", exc.status)

    @app.exception_handler(Exception)
    def fault(exc: Exception) -> Response:
        request_id = _request_id(app)
        logger.exception("request %s failed", request_id)
        message = f"Internal error; the service log has the details under request id {request_id}"
        return error_response("UnknownError", message, 500)

    @app.not_found
    def not_found(_exc: NotFoundError) -> Response:
        """404 NotFound; 405 NotAllowed with an Allow header when the path is a route's
        under another method."""
        event = app.current_event
        routes = app._static_routes + app._dynamic_routes  # noqa: SLF001 - Powertools' table
        allowed = sorted({route.method for route in routes if route.rule.match(event.path)})
        method, path, allow = event.http_method, event.path, ", ".join(allowed)
        if not allowed:
            return error_response("NotFound", f"No route for {method} {path}", 404)
        answer = error_response("NotAllowed", f"{method} is not allowed on {path}; use {allow}", 405)  # fmt: skip
        answer.headers["Allow"] = allow
        return answer

    return app


def lambda_handler(app: APIGatewayHttpResolver) -> Callable[[dict, Any], dict]:
    """The Lambda entry point of ``app``: resolves each event with the Lambda context and
    the API Gateway request id (``correlation_id``) in every log record, and writes its
    metrics (one EMF record per request: ``api.metrics``)."""

    def handle(event: dict, context: Any) -> dict:
        with within(_deadline(context)):  # no commit starts too close to the timeout
            return app.resolve(event, context)

    measured = metrics.http_measured(handle, lambda event: served_route(app, event))
    return logger.inject_lambda_context(
        measured, correlation_id_path=correlation_paths.API_GATEWAY_HTTP
    )


def _deadline(context: Any) -> Deadline | None:
    """The invocation's commit deadline (``services.deadline``); None without a Lambda context."""
    remaining_ms = getattr(context, "get_remaining_time_in_millis", None)
    left = remaining_ms() if callable(remaining_ms) else None
    return Deadline.after(left, lambda: time.monotonic() * 1000) if isinstance(left, int) else None


def _request_id(app: APIGatewayHttpResolver) -> str:
    """API Gateway's id of the current request (its ``apigw-requestid`` response header)."""
    context = app.current_event.raw_event.get("requestContext") or {}
    return context.get("requestId") or "unknown"


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _path_arguments(app: APIGatewayHttpResolver, next_middleware: NextMiddleware) -> Response:
    """Route arguments from the event's ``pathParameters``, which API Gateway and the local
    gateway decode once, instead of the resolver's matches on ``rawPath`` (percent-encoded
    locally, so a name the SDK encodes arrived as ``a%3Ab``); bounded in length (raises
    InvalidTopicName / InvalidMessage). A match without its parameter in the event (a
    greedy route's event: ``ANY /admin/{proxy+}`` carries only ``proxy``; an event without
    ``pathParameters``) is decoded here, once, as API Gateway decodes a parameter."""
    given = {_snake(k): v for k, v in (app.current_event.path_parameters or {}).items()}
    matched: dict[str, str] = app.context.get("_route_args", {})
    arguments = {name: given[name] if name in given else unquote(value)
                 for name, value in matched.items()}  # fmt: skip
    check_path_names(arguments)
    app.append_context(_route_args=arguments)
    return next_middleware(app)


def ok(body: Any, status: int = 200) -> Response:
    return Response(
        status_code=status, content_type=content_types.APPLICATION_JSON, body=json.dumps(body)
    )


def no_content() -> Response:
    return Response(status_code=204, body="")


def plain_text(body: str, status: int = 200) -> Response:
    """A ``text/plain`` answer (Pulsar's health check answers ``ok``)."""
    return Response(status_code=status, content_type="text/plain", body=body)
