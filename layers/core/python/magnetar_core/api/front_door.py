"""The function-URL front door: one Lambda behind an ``AWS::Lambda::Url`` serves the routes of
several handler apps, as the HTTP API would (template.yaml's ``FrontDoor: FunctionUrl``).

A function URL has no request charge (API Gateway HTTP API: $1.00 per million requests) but
no routes and no authorizer either: its events are payload 2.0 with ``routeKey`` ``$default``
and no ``pathParameters``. ``FunctionUrlFrontDoor`` restores what API Gateway adds, so the
existing handler apps run unchanged, in-process:

1. **Route**: ``(method, rawPath)`` against the handler apps' routes with API Gateway's
   precedence (``api.route_table``); no route: 404 ``NotFound`` in our error shape (405
   ``NotAllowed`` with an Allow header when the path has routes under other methods). The
   event gets the ``routeKey`` and the URL-decoded ``pathParameters`` API Gateway would set.
2. **Authenticate** as the API's Lambda authorizer does (``api.authorizer``): no
   ``Authorization`` header: the anonymous role when the service has one (``ANONYMOUS_USER_
   ROLE``; the authorizer's answer for no credentials), else 401 ``{"message":
   "Unauthorized"}``; a token that proves no role:
   403 ``{"message": "Forbidden"}``; the authorizer failing (key or STS unreachable): 500
   ``{"message": "Internal Server Error"}``, nothing cached — API Gateway's bodies. Answers are
   cached per ``Authorization`` value for ``cache_s`` seconds per container (API Gateway's
   authorizer cache). The role goes in ``requestContext.authorizer.lambda.role``, replacing
   whatever the event held, and the handler's guard authorizes the route (403 with Pulsar's
   reason), exactly as behind the HTTP API.
3. **Run** the route's handler (its app's ``lambda_handler``) and return its answer.
"""

from __future__ import annotations

import copy
import importlib.util
import itertools
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from magnetar_core.api import http
from magnetar_core.api.authorizer_cache import AuthorizerCache
from magnetar_core.api.guard import route_template
from magnetar_core.api.route_table import RouteTable

log = logging.getLogger("magnetar.front_door")

Handler = Callable[[dict[str, Any], Any], Any]


class Authorize(Protocol):
    """An authorizer (``api.authorizer.ContainerAuthorizer``): a simple response per payload
    2.0 authorizer event, and whether authentication is on at all."""

    @property
    def enabled(self) -> bool: ...

    def __call__(self, event: Mapping[str, Any]) -> dict[str, Any]: ...


_LOADS = itertools.count(1)


@dataclass(frozen=True)
class FrontRoute:
    """A route served through the front door: method, API Gateway path template, handler."""

    method: str
    path: str
    target: str

    @property
    def route_key(self) -> str:
        """API Gateway's route key, e.g. ``POST /v1/{domain}/.../messages``."""
        return f"{self.method} {self.path}"


def gateway_answer(status: int, message: str) -> dict[str, Any]:
    """API Gateway's own answer (its body is ``{"message": ...}``, not our error shape)."""
    return {
        "statusCode": status,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps({"message": message}),
    }


def not_found(method: str, path: str, allowed: list[str] | None = None) -> dict[str, Any]:
    """A request no served route matches: 404 ``NotFound`` in our error shape; 405
    ``NotAllowed`` with an Allow header when routes take the path under ``allowed``."""
    headers = {"Content-Type": "application/json"}
    if not allowed:
        body = {"error": "NotFound", "message": f"No route for {method} {path}"}
        return {"statusCode": 404, "headers": headers, "body": json.dumps(body)}
    headers["Allow"] = allow = ", ".join(allowed)
    body = {"error": "NotAllowed", "message": f"{method} is not allowed on {path}; use {allow}"}
    return {"statusCode": 405, "headers": headers, "body": json.dumps(body)}


def routes_of(app: Any, target: str) -> list[FrontRoute]:
    """The routes of a Powertools resolver ``app`` (its ``<name>`` rules as API Gateway's
    ``{name}`` templates), each served by ``target``. Reads the resolver's route lists
    (Powertools internals: tests/unit/test_front_door.py compares the result with
    template.yaml's routes, so an upgrade that moves them fails there)."""
    found = []
    for route in [*app._static_routes, *app._dynamic_routes]:
        found.append(FrontRoute(route.method.upper(), route_template(route.path), target))
    return found


def load_handler_module(path: Path, name: str | None = None, code_dir: Path | None = None) -> Any:
    """Load a handler file (``functions/<name>/app.py``) as module ``name`` (default: one
    unique in the process): each load is a container of its own (its resolver, its
    engine). ``code_dir`` is on ``sys.path`` while it loads, as a function's code is on
    Lambda. Raises what the module raises, FileNotFoundError for a missing file."""
    if not path.is_file():
        raise FileNotFoundError(f"handler file {path} does not exist")
    name = name or f"magnetar_front_{path.parent.name}_{next(_LOADS)}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    if code_dir is not None:
        sys.path.insert(0, str(code_dir))
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    finally:
        if code_dir is not None:
            sys.path.remove(str(code_dir))
    return module


class FunctionUrlFrontDoor:
    """Serves function-URL events with ``handlers`` (target name -> Lambda handler) on
    ``routes``; ``authorize`` answers a payload 2.0 authorizer event with a simple response
    (``api.authorizer``); its ``enabled`` False admits every request without a role or
    header (Pulsar with authentication off). ``cache_s``: seconds an answer is kept per
    ``Authorization`` value (0: none); ``clock_s``: monotonic seconds."""

    def __init__(
        self,
        routes: Iterable[FrontRoute],
        handlers: Mapping[str, Handler],
        authorize: Authorize,
        cache_s: float = 300,
        clock_s: Callable[[], float] = time.monotonic,
    ) -> None:
        self.table: RouteTable[FrontRoute] = RouteTable(routes)
        self._handlers = dict(handlers)
        self._authorize = authorize
        self._answers = AuthorizerCache(cache_s, clock_s)
        self.authorizer_calls = 0
        """How often ``authorize`` ran (cache misses)."""
        self.apps: dict[str, Any] = {}
        """The handler modules served, by target (``data_plane`` fills it)."""

    def __call__(self, event: dict[str, Any], context: Any) -> Any:
        """The answer to one function-URL event (see the module docstring); never raises
        for a refused request, only what the route's handler raises."""
        request = (event.get("requestContext") or {}).get("http") or {}
        method, path = str(request.get("method", "GET")).upper(), event.get("rawPath") or "/"
        match = self.table.match(method, path)
        if match is None:
            methods = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
            return not_found(method, path, [m for m in methods if self.table.match(m, path)])
        routed = copy.copy(event)
        routed["requestContext"] = request_context = dict(event.get("requestContext") or {})
        request_context.pop("authorizer", None)  # only ours counts, never the caller's
        routed["routeKey"] = request_context["routeKey"] = match.route.route_key
        routed.pop("pathParameters", None)
        if match.path_parameters:
            routed["pathParameters"] = dict(match.path_parameters)
        if self._authorize.enabled:
            refused = self._admit(routed)
            if refused is not None:
                return refused
        return self._handlers[match.route.target](routed, context)

    def _admit(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """None when ``event`` may go on (its ``requestContext.authorizer.lambda`` set), else
        API Gateway's 401, 403 or 500."""
        header = _authorization(event.get("headers") or {}) or ""
        answer = self._answers.get(header)
        if answer is None:
            try:
                self.authorizer_calls += 1
                answer = self._authorize(_authorizer_event(event, header))
            except Exception:  # noqa: BLE001 - API Gateway answers 500 and caches nothing
                log.exception("the authorizer failed on %s", event.get("routeKey"))
                return gateway_answer(500, "Internal Server Error")
            self._answers.put(header, answer)
        if answer.get("isAuthorized") is not True:
            # no credentials and no anonymous role: API Gateway's 401 for a missing header
            return gateway_answer(403 if header else 401, "Forbidden" if header else "Unauthorized")
        event["requestContext"]["authorizer"] = {"lambda": dict(answer.get("context") or {})}
        return None


def _authorization(headers: Mapping[str, str]) -> str | None:
    for name, value in headers.items():
        if name.lower() == "authorization":
            return value
    return None


def _authorizer_event(event: Mapping[str, Any], header: str) -> dict[str, Any]:
    """The payload 2.0 REQUEST authorizer event API Gateway would send for ``event``."""
    answer = {
        "version": "2.0",
        "type": "REQUEST",
        "identitySource": [header],
        "routeKey": event.get("routeKey"),
        "rawPath": event.get("rawPath"),
        "rawQueryString": event.get("rawQueryString", ""),
        "headers": dict(event.get("headers") or {}),
        "requestContext": copy.deepcopy(event.get("requestContext") or {}),
    }
    for optional in ("queryStringParameters", "pathParameters"):
        if optional in event:
            answer[optional] = copy.deepcopy(event[optional])
    return answer


DATA_PLANE_TARGETS = ("produce", "producers", "consumers", "receive", "ack", "nack", "admin",
                      "tenants")  # fmt: skip
"""The handler apps the function URL serves (``functions/<name>/app.py``): the SDK's whole
surface (data plane, lookups, failover probe) and the admin CLI's; not the console."""


def functions_dir_of(handler_file: str) -> Path:
    """The directory holding the handler apps, from the data plane's own ``app.py`` path
    (``functions/dataplane/app.py`` -> ``functions/``)."""
    return Path(handler_file).resolve().parents[1]


def data_plane(
    functions_dir: Path,
    engine: http.ContainerEngine,
    authorize: Authorize,
    env: Mapping[str, str] = os.environ,
    targets: Iterable[str] = DATA_PLANE_TARGETS,
) -> FunctionUrlFrontDoor:
    """A container's front door over the handler apps ``functions_dir/<target>/app.py``,
    each loaded once here (its own resolver), all on the container's one ``engine`` (built
    on the first request of any of them: one set of clients and caches). ``env``: the
    function's environment: ``AUTHORIZER_CACHE_SECONDS`` (default 300, as the template's
    ``AuthorizerCacheSeconds``). Raises what loading a handler module raises."""
    apps: dict[str, Any] = {}
    with http.shared_engine(engine):
        for target in targets:
            apps[target] = load_handler_module(functions_dir / target / "app.py")
    routes = [route for target, app in apps.items() for route in routes_of(app.app, target)]
    handlers = {target: app.lambda_handler for target, app in apps.items()}
    cache_s = float(env.get("AUTHORIZER_CACHE_SECONDS", "300"))
    door = FunctionUrlFrontDoor(routes, handlers, authorize, cache_s)
    door.apps = apps
    return door
