"""The routes the HTTP API serves: template.yaml's routes, with each route that hands routing
to its function's app expanded into the app's own routes.

A route with method ``ANY`` on a greedy path (``ANY /admin/{proxy+}``: AdminFunction) is one
API Gateway route and one Lambda permission for many paths: API Gateway sends it whatever no
more specific route takes, and the function's Powertools resolver routes by path (a path it
does not serve: 404 ``NotFound`` in our error shape). The routes served through it are those
of its app under the greedy route's prefix that the API really sends to it (a more specific
route of another function does not shadow them). Every other template route is served as is
(``GET /console/{proxy+}`` is a route of the console's own).

The local gateway routes with ``LocalTemplate.routes`` as API Gateway does (and tells its
observers the served route a greedy route's request took); what reads the API's surface
(openapi.yaml, the route classes of ``domain.security.routes``, the function URL's table,
the sample events) compares it with ``served_routes``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from functools import cache

from magnetar_core.api.front_door import load_handler_module, routes_of
from magnetar_local.routes import RouteTable
from magnetar_local.template import DEFAULT_TEMPLATE, FunctionSpec, LocalTemplate, RouteSpec


def hands_routing_to_app(route: RouteSpec) -> bool:
    """Whether ``route`` is an ``ANY`` route on a greedy path (its app routes by path)."""
    return route.method == "ANY" and route.path.endswith("+}")


def _sample_path(path: str) -> str:
    """A request path for a route template (each parameter a sample segment)."""
    return re.sub(r"\{(\w+)\}", lambda m: f"sample-{m.group(1)}", path)


def app_routes(spec: FunctionSpec) -> list[RouteSpec]:
    """The routes of the function's app (its handler module's resolver), as route specs."""
    module = load_handler_module(spec.code_dir / (spec.handler.rsplit(".", 1)[0].replace(".", "/") + ".py"),
                                 code_dir=spec.code_dir)  # fmt: skip
    # loaded only to read its routes: kept in sys.modules, every gateway's load (one a
    # MemoryService) stayed alive for the rest of the process, with the app and its engine
    sys.modules.pop(module.__name__, None)
    return [RouteSpec(route.method, route.path, spec.logical_id)
            for route in routes_of(module.app, spec.logical_id)]  # fmt: skip


def served_routes(routes: Sequence[RouteSpec], functions: Mapping[str, FunctionSpec]) -> list[RouteSpec]:  # fmt: skip
    """The routes an API of ``routes`` (a template's, on its ``functions``) serves (see the
    module docstring), in their order."""
    table = RouteTable(routes)
    served: list[RouteSpec] = []
    for route in routes:
        if not hands_routing_to_app(route):
            served.append(route)
            continue
        prefix = route.path.rsplit("/", 1)[0] + "/"
        for candidate in app_routes(functions[route.function]):
            match = table.match(candidate.method, _sample_path(candidate.path))
            if candidate.path.startswith(prefix) and match is not None and match.route == route:
                served.append(RouteSpec(candidate.method, candidate.path, route.function,
                                        route.authorized))  # fmt: skip
    return served


@cache
def default_served_routes() -> tuple[RouteSpec, ...]:
    """``served_routes`` of template.yaml (the default local stack), computed once."""
    template = LocalTemplate(DEFAULT_TEMPLATE)
    return tuple(served_routes(template.routes, template.functions))
