"""The function-URL front door locally (``magnetar local --front-door function-url``): which
requests reach ``DataPlaneFunction`` as function-URL events, as template.yaml's
``FrontDoor: FunctionUrl`` deploys it (``magnetar_core.api.front_door``)."""

from __future__ import annotations

from collections.abc import Mapping

from magnetar_core.api.front_door import DATA_PLANE_TARGETS
from magnetar_local.routes import RouteMatch
from magnetar_local.template import FunctionSpec, RouteSpec

FRONT_DOORS = {"http-api": "HttpApi", "function-url": "FunctionUrl"}
"""``--front-door`` values and the template's ``FrontDoor`` parameter value of each."""
DATA_PLANE_FUNCTION = "DataPlaneFunction"


def template_value(front_door: str) -> str:
    """The template's ``FrontDoor`` value for ``front_door``; raises ValueError naming the
    choices for another value."""
    if front_door not in FRONT_DOORS:
        raise ValueError(f"front_door must be one of {', '.join(FRONT_DOORS)}, not {front_door!r}")  # fmt: skip
    return FRONT_DOORS[front_door]


def front_door_function(front_door: str) -> str | None:
    """The function the gateway sends function-URL events to (None: the HTTP API's routes)."""
    return DATA_PLANE_FUNCTION if front_door == "function-url" else None


def invoked(match: RouteMatch, functions: Mapping[str, FunctionSpec], function_url: str | None) -> RouteMatch:  # fmt: skip
    """What a request matching ``match`` invokes: ``match`` itself, or, behind the function
    URL ``function_url`` (a function's logical id), that function's ``$default`` (no route
    key, no path parameters) when the route's handler app is one it serves."""
    if function_url is None or functions[match.route.function].code_dir.name not in DATA_PLANE_TARGETS:  # fmt: skip
        return match
    return RouteMatch(RouteSpec("ANY", "$default", function_url), {})
