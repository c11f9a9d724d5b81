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


class _Compiled(Generic[R]):
    """A route's template, read once: each segment's kind and text (the literal, or the
    parameter's name), its rank (segment kinds, then 1 for ``ANY``: lower is more
    specific) and where its greedy parameter is (None: it has none)."""

    __slots__ = ("greedy_at", "rank", "route", "segments")

    def __init__(self, route: R) -> None:
        self.route = route
        self.segments: list[tuple[int, str]] = []
        for segment in _segments(route.path):
            kind = _kind(segment)
            name = segment[1:-2] if kind == _GREEDY else segment[1:-1] if kind == _PARAM else segment  # fmt: skip
            self.segments.append((kind, name))
        kinds = [kind for kind, _ in self.segments]
        self.rank = (*kinds, int(route.method == "ANY"))
        self.greedy_at = kinds.index(_GREEDY) if _GREEDY in kinds else None


class RouteTable(Generic[R]):
    """An immutable set of routes; ``match`` picks the most specific one.

    The templates are read once, and each method's candidate routes are kept most specific
    first (ties in the routes' order), so a match is the first route that fits: the same
    answer as ranking every route that fits, without reading every template per request."""

    def __init__(self, routes: Iterable[R]) -> None:
        self.routes = list(routes)
        compiled = [_Compiled(route) for route in self.routes if route.path != "$default"]
        self._ranked = sorted(compiled, key=lambda c: c.rank)  # stable: ties keep the order
        self._default = next((r for r in self.routes if r.path == "$default"), None)
        self._by_method = {m: self._candidates(m) for m in {c.route.method for c in compiled}}

    def _candidates(self, method: str) -> list[_Compiled[R]]:
        return [c for c in self._ranked if c.route.method in (method, "ANY")]

    def match(self, method: str, raw_path: str) -> RouteMatch[R] | None:
        """Return the best route for ``method`` and the raw (still URL-encoded) path, or None."""
        method = method.upper()
        candidates = self._by_method.get(method)
        if candidates is None:  # a method no route names: only ANY routes may fit
            candidates = self._candidates(method)
        request = _segments(raw_path)
        decoded: list[str] | None = None
        for compiled in candidates:
            greedy_at, size = compiled.greedy_at, len(compiled.segments)
            if (size != len(request)) if greedy_at is None else (greedy_at >= len(request)):
                continue
            if decoded is None:
                decoded = [unquote(segment) for segment in request]
            parameters = _match_segments(compiled, request, decoded)
            if parameters is not None:
                return RouteMatch(compiled.route, parameters)
        return RouteMatch(self._default, {}) if self._default is not None else None


def _match_segments(
    compiled: _Compiled[R], request: list[str], decoded: list[str]
) -> dict[str, str] | None:
    """Path parameters if the ``request`` segments (``decoded``: each URL-decoded) fit the
    route's template, else None (the lengths fit already)."""
    parameters: dict[str, str] = {}
    for index, (kind, text) in enumerate(compiled.segments):
        if kind == _GREEDY:
            parameters[text] = unquote("/".join(request[index:]))
            return parameters
        if kind == _PARAM:
            parameters[text] = decoded[index]
        elif decoded[index] != text:
            return None
    return parameters
