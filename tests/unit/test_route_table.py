"""The route table (``magnetar_core.api.route_table``) reads its templates once and tries
each method's routes most specific first: it picks exactly the route and parameters that
ranking every fitting route picks (API Gateway's precedence, written out below as the
reference), on generated tables and paths."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from magnetar_core.api.route_table import RouteMatch, RouteTable


@dataclass(frozen=True)
class Route:
    method: str
    path: str


def reference_match(routes: list[Route], method: str, raw_path: str) -> RouteMatch | None:
    """Every route that fits, ranked segment by segment (literal < parameter < greedy),
    then an explicit method before ANY, the first of equals; else ``$default``."""

    def segments(path: str) -> list[str]:
        return [s for s in path.strip("/").split("/") if s] if path != "/" else []

    def kind(segment: str) -> int:
        if segment.startswith("{") and segment.endswith("+}"):
            return 2
        return 1 if segment.startswith("{") and segment.endswith("}") else 0

    def fit(template: list[str], request: list[str]) -> dict[str, str] | None:
        parameters = {}
        for index, segment in enumerate(template):
            if index >= len(request):
                return None
            if kind(segment) == 2:
                parameters[segment[1:-2]] = unquote("/".join(request[index:]))
                return parameters
            if kind(segment) == 1:
                parameters[segment[1:-1]] = unquote(request[index])
            elif unquote(request[index]) != segment:
                return None
        return parameters if len(template) == len(request) else None

    best = None
    for route in routes:
        if route.path == "$default" or route.method not in (method.upper(), "ANY"):
            continue
        template = segments(route.path)
        parameters = fit(template, segments(raw_path))
        if parameters is None:
            continue
        rank = (*(kind(s) for s in template), int(route.method == "ANY"))
        if best is None or rank < best[0]:
            best = (rank, RouteMatch(route, parameters))
    if best is not None:
        return best[1]
    default = next((r for r in routes if r.path == "$default"), None)
    return RouteMatch(default, {}) if default is not None else None


literals = st.sampled_from(["v2", "topics", "a", "b", "a b", "é"])
template_segments = literals | st.sampled_from(["{x}", "{y}", "{rest+}"])
methods = st.sampled_from(["GET", "PUT", "ANY", "POST"])
templates = st.lists(template_segments, max_size=4).map(lambda s: "/" + "/".join(s))
tables = st.lists(st.builds(Route, methods, templates | st.just("$default")), max_size=12)
request_segments = st.sampled_from(["v2", "topics", "a", "b", "a%20b", "%C3%A9", "%2F", "c"])
paths = st.lists(request_segments, max_size=6).map(lambda s: "/" + "/".join(s))


@given(tables, st.sampled_from(["GET", "get", "PUT", "DELETE", "ANY"]), paths)
@settings(max_examples=examples(500))
def test_any_table_picks_the_route_and_parameters_the_ranking_of_every_route_picks(
    routes: list[Route], method: str, path: str
) -> None:
    assert RouteTable(routes).match(method, path) == reference_match(routes, method, path)


def test_a_literal_beats_a_parameter_which_beats_a_greedy_one_and_get_beats_any() -> None:
    routes = [
        Route("ANY", "/v2/{rest+}"),
        Route("GET", "/v2/{x}/b"),
        Route("ANY", "/v2/a/b"),
        Route("GET", "/v2/a/b"),
    ]
    table = RouteTable(routes)
    assert table.match("get", "/v2/a/b") == RouteMatch(routes[3], {})
    assert table.match("PUT", "/v2/a/b") == RouteMatch(routes[2], {})
    assert table.match("GET", "/v2/c%20d/b") == RouteMatch(routes[1], {"x": "c d"})
    assert table.match("POST", "/v2/a/b%2Fc/d") == RouteMatch(routes[0], {"rest": "a/b/c/d"})
    assert table.match("GET", "/v1") is None
