"""Route matching with API Gateway HTTP API precedence (pure: no I/O).

A request matches a route when the method is equal (or the route's is ``ANY``) and the path
segments match: a literal segment matches itself, ``{name}`` matches one non-empty segment,
``{name+}`` (greedy) matches the rest of the path. The most specific route wins: comparing
segment by segment, a literal beats a parameter, which beats a greedy parameter; then an
explicit method beats ``ANY``; ``$default`` is the last resort.

Shared by the local gateway (``magnetar_local.routes``) and the function-URL front door
(``api.front_door``), which routes ``$default`` events as API Gateway would have.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar
from urllib.parse import unquote

_LITERAL, _PARAM, _GREEDY = 0, 1, 2


class Routed(Protocol):
    """What the table needs of a route: its method (``GET``, ..., ``ANY``) and path
    template (``/v1/{domain}/...`` or ``$default``)."""

    @property
    def method(self) -> str: ...

    @property
    def path(self) -> str: ...


R = TypeVar("R", bound=Routed)


@dataclass(frozen=True)
class RouteMatch(Generic[R]):
    """A matched route and its URL-decoded path parameters."""

    route: R
    path_parameters: dict[str, str]


def _segments(path: str) -> list[str]:
    return [segment for segment in path.strip("/").split("/") if segment] if path != "/" else []


def _kind(segment: str) -> int:
    if segment.startswith("{") and segment.endswith("+}"):
        return _GREEDY
    if segment.startswith("{") and segment.endswith("}"):
        return _PARAM
    return _LITERAL


class RouteTable(Generic[R]):
    """An immutable set of routes; ``match`` picks the most specific one."""

    def __init__(self, routes: Iterable[R]) -> None:
        self.routes = list(routes)
        self._compiled = [
            (route, _segments(route.path)) for route in self.routes if route.path != "$default"
        ]
        self._default = next((r for r in self.routes if r.path == "$default"), None)

    def match(self, method: str, raw_path: str) -> RouteMatch[R] | None:
        """Return the best route for ``method`` and the raw (still URL-encoded) path, or None."""
        request = _segments(raw_path)
        best: tuple[tuple[int, ...], RouteMatch[R]] | None = None
        for route, template in self._compiled:
            if route.method not in (method.upper(), "ANY"):
                continue
            parameters = _match_segments(template, request)
            if parameters is None:
                continue
            rank = tuple(_kind(segment) for segment in template) + (int(route.method == "ANY"),)
            if best is None or rank < best[0]:
                best = (rank, RouteMatch(route, parameters))
        if best is not None:
            return best[1]
        return RouteMatch(self._default, {}) if self._default is not None else None


def _match_segments(template: list[str], request: list[str]) -> dict[str, str] | None:
    """Path parameters if ``request`` segments fit ``template`` segments, else None."""
    parameters: dict[str, str] = {}
    for index, segment in enumerate(template):
        kind = _kind(segment)
        if kind == _GREEDY:
            if index >= len(request):
                return None
            parameters[segment[1:-2]] = unquote("/".join(request[index:]))
            return parameters
        if index >= len(request):
            return None
        if kind == _PARAM:
            parameters[segment[1:-1]] = unquote(request[index])
        elif unquote(request[index]) != segment:
            return None
    return parameters if len(template) == len(request) else None
