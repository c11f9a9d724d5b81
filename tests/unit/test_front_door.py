"""The function-URL front door (``api.front_door``): ``$default`` events are routed as API
Gateway routes them, and the authorizer's check runs inside, with API Gateway's answers and
its per-header cache; the data plane serves exactly the template's routes of its apps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from magnetar_core.api import front_door, http
from magnetar_core.api.front_door import FrontRoute, FunctionUrlFrontDoor
from magnetar_local.served_routes import default_served_routes
from magnetar_local.template import DEFAULT_TEMPLATE, LocalTemplate

ROUTES = [
    FrontRoute("POST", "/v1/{domain}/{tenant}/{namespace}/{topic}/messages", "produce"),
    FrontRoute("GET", "/admin/v2/{domain}/{tenant}/{namespace}/{topic}/partitions", "admin"),
    FrontRoute("GET", "/admin/v2/clusters", "tenants"),
]


class FakeAuthorizer:
    """Admits ``Bearer good`` as role ``app``; ``Bearer boom`` raises (key unreadable)."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.events: list[dict[str, Any]] = []

    def __call__(self, event):
        self.events.append(event)
        header = event["identitySource"][0]
        if header == "Bearer boom":
            raise RuntimeError("the key parameter cannot be read")
        return {"isAuthorized": True, "context": {"role": "app"}} if header == "Bearer good" else {"isAuthorized": False}  # fmt: skip


class Clock:
    def __init__(self) -> None:
        self.now_s = 1000.0

    def __call__(self) -> float:
        return self.now_s


def url_event(method: str, path: str, authorization: str | None = None, **extra) -> dict:
    """A function URL's event: payload 2.0, ``$default``, no path parameters."""
    headers = {"host": "abc.lambda-url.us-east-1.on.aws"}
    if authorization is not None:
        headers["authorization"] = authorization
    return {"version": "2.0", "routeKey": "$default", "rawPath": path, "rawQueryString": "",
            "headers": headers, "isBase64Encoded": False,
            "requestContext": {"http": {"method": method, "path": path}, "routeKey": "$default",
                               "requestId": "r1", **extra}}  # fmt: skip


def door(authorizer=None, cache_s=300, clock=None):
    seen: list[tuple[str, dict]] = []
    handlers = {
        target: (lambda event, _ctx, t=target: seen.append((t, event)) or {"statusCode": 200})
        for target in ("produce", "admin", "tenants")
    }
    built = FunctionUrlFrontDoor(
        ROUTES, handlers, authorizer or FakeAuthorizer(), cache_s, clock or Clock()
    )
    return built, seen


def _answer(result: dict) -> tuple[int, dict]:
    return result["statusCode"], json.loads(result["body"])


def test_a_url_event_reaches_its_routes_app_with_the_route_key_and_decoded_path_parameters():
    served, seen = door()
    path = "/v1/persistent/acme/orders/a%3Ab/messages"
    assert served(url_event("POST", path, "Bearer good"), None) == {"statusCode": 200}
    (target, event), = seen  # fmt: skip
    assert target == "produce"
    key = "POST /v1/{domain}/{tenant}/{namespace}/{topic}/messages"
    assert event["routeKey"] == event["requestContext"]["routeKey"] == key
    assert event["pathParameters"] == {"domain": "persistent", "tenant": "acme",
                                       "namespace": "orders", "topic": "a:b"}  # fmt: skip
    assert event["requestContext"]["authorizer"] == {"lambda": {"role": "app"}}


def test_a_request_no_route_matches_is_a_404_in_the_error_shape_and_runs_nothing():
    served, seen = door()
    status, body = _answer(served(url_event("DELETE", "/admin/v2/clusterz", "Bearer good"), None))
    assert (status, body["error"]) == (404, "NotFound")
    assert "DELETE /admin/v2/clusterz" in body["message"] and seen == []


def test_a_served_path_under_another_method_is_a_405_naming_the_allowed_ones_and_runs_nothing():
    served, seen = door()
    result = served(url_event("DELETE", "/admin/v2/clusters", "Bearer good"), None)
    status, body = _answer(result)
    assert (status, body["error"], result["headers"]["Allow"]) == (405, "NotAllowed", "GET")
    assert "DELETE is not allowed on /admin/v2/clusters" in body["message"] and seen == []


def test_no_authorization_header_is_api_gateways_401_unless_the_service_has_an_anonymous_role():
    authorizer = FakeAuthorizer()
    served, seen = door(authorizer)
    for _ in range(2):  # the authorizer's answer for no credentials is cached as any other
        result = served(url_event("GET", "/admin/v2/clusters"), None)
        assert _answer(result) == (401, {"message": "Unauthorized"})
    assert seen == [] and [e["identitySource"] for e in authorizer.events] == [[""]]

    class Anonymous(FakeAuthorizer):
        def __call__(self, event):
            if event["identitySource"] == [""]:
                return {"isAuthorized": True, "context": {"role": "anonymous"}}
            return super().__call__(event)

    served, seen = door(Anonymous())
    assert served(url_event("GET", "/admin/v2/clusters"), None)["statusCode"] == 200
    assert seen[0][1]["requestContext"]["authorizer"] == {"lambda": {"role": "anonymous"}}


def test_a_token_the_authorizer_denies_is_api_gateways_403_and_runs_nothing():
    served, seen = door()
    result = served(url_event("GET", "/admin/v2/clusters", "Bearer forged"), None)
    assert _answer(result) == (403, {"message": "Forbidden"}) and seen == []


def test_an_authorizer_context_in_the_incoming_event_is_never_trusted():
    served, seen = door()
    spoofed = url_event("GET", "/admin/v2/clusters", authorizer={"lambda": {"role": "admin"}})
    assert _answer(served(spoofed, None))[0] == 401
    spoofed = url_event("GET", "/admin/v2/clusters", "Bearer good",
                        authorizer={"iam": {"userArn": "arn:aws:iam::1:root"}})  # fmt: skip
    served(spoofed, None)
    assert seen[0][1]["requestContext"]["authorizer"] == {"lambda": {"role": "app"}}


def test_answers_are_cached_per_header_for_the_ttl_and_failures_are_a_500_never_cached():
    authorizer, clock = FakeAuthorizer(), Clock()
    served, seen = door(authorizer, cache_s=300, clock=clock)
    for _ in range(3):
        served(url_event("GET", "/admin/v2/clusters", "Bearer good"), None)
    assert len(authorizer.events) == 1 and len(seen) == 3
    clock.now_s += 300
    served(url_event("GET", "/admin/v2/clusters", "Bearer good"), None)
    assert len(authorizer.events) == 2
    for _ in range(2):
        result = served(url_event("GET", "/admin/v2/clusters", "Bearer boom"), None)
        assert _answer(result) == (500, {"message": "Internal Server Error"})
    assert len(authorizer.events) == 4  # each failure asked again
    assert authorizer.events[0]["type"] == "REQUEST"
    assert authorizer.events[0]["routeKey"] == "GET /admin/v2/clusters"


def test_with_authentication_off_every_request_runs_without_a_role_or_a_header():
    authorizer = FakeAuthorizer(enabled=False)
    served, seen = door(authorizer)
    served(url_event("GET", "/admin/v2/clusters", authorizer={"lambda": {"role": "admin"}}), None)
    assert authorizer.events == [] and "authorizer" not in seen[0][1]["requestContext"]


@pytest.fixture(scope="module")
def data_plane_routes() -> list[FrontRoute]:
    authorizer = FakeAuthorizer(enabled=False)
    functions = DEFAULT_TEMPLATE.parent / "functions"
    return front_door.data_plane(functions, http.container_engine(), authorizer).table.routes


def test_the_data_plane_serves_exactly_the_template_routes_of_its_apps(data_plane_routes):
    template, served = LocalTemplate(), default_served_routes()
    expected = {
        (route.method, route.path, template.functions[route.function].code_dir.name)
        for route in served
        if template.functions[route.function].code_dir.name in front_door.DATA_PLANE_TARGETS
    }
    assert {(r.method, r.path, r.target) for r in data_plane_routes} == expected
    assert len(expected) == 152
    unauthorized = [r for r in served if not r.authorized]
    assert all(template.functions[r.function].code_dir.name == "console" for r in unauthorized)


def test_the_data_plane_function_is_the_template_function_for_functions_dataplane():
    spec = LocalTemplate().functions["DataPlaneFunction"]
    assert spec.code_dir == Path(DEFAULT_TEMPLATE.parent / "functions").resolve()
    assert spec.handler == "dataplane.app.lambda_handler"
    assert spec.environment["AUTHORIZER_CACHE_SECONDS"] == "300"


def test_magnetar_local_takes_a_front_door_and_the_stack_refuses_an_unknown_one():
    from magnetar_local.function_url import front_door_function
    from magnetar_local.main import build_parser
    from magnetar_local.stack import LocalStack

    assert build_parser().parse_args(["--front-door", "function-url"]).front_door == "function-url"
    assert build_parser().parse_args([]).front_door == "http-api"
    assert front_door_function("function-url") == "DataPlaneFunction"
    assert front_door_function("http-api") is None
    with pytest.raises(ValueError, match="front_door must be one of http-api, function-url"):
        LocalStack(front_door="cloudfront")
    stack = LocalStack(front_door="function-url")
    assert stack.template.resolve({"Ref": "FrontDoor"}) == "FunctionUrl"


def test_the_apps_of_a_data_plane_container_share_its_one_engine_and_another_container_its_own():
    functions = DEFAULT_TEMPLATE.parent / "functions"
    first, second = object(), object()
    containers = []
    for engine in (first, second):
        with http.injected_engine(engine):  # type: ignore[arg-type] - any object will do
            shared = http.container_engine()
        containers.append(front_door.data_plane(functions, shared, FakeAuthorizer(False)))
    for door, engine in zip(containers, (first, second), strict=True):
        assert set(door.apps) == set(front_door.DATA_PLANE_TARGETS)
        assert {id(app.engine()) for app in door.apps.values()} == {id(engine)}
        assert {id(app.engine.built) for app in door.apps.values()} == {id(engine)}
