"""Two handler containers resolving at once in one process (the local gateway's threads)
each see their own event: Powertools keeps the current event on its router *class*, which
mixed requests up under load (a produce read a receive's body; partitions crossed). The
containers share their routes' compiled regular expressions (compiled once per process)."""

from __future__ import annotations

import json
import re
import threading

from magnetar_core.adapters.memory import memory_stores
from magnetar_core.api import http
from magnetar_core.engine import Engine
from magnetar_local.memory_service import memory_settings


def _event(path: str, body: str) -> dict:
    return {
        "version": "2.0",
        "routeKey": "POST /echo/{name}",
        "rawPath": path,
        "rawQueryString": "",
        "headers": {"content-type": "application/json"},
        "requestContext": {
            "http": {"method": "POST", "path": path, "sourceIp": "127.0.0.1"},
            "requestId": f"req-{path}",
            "stage": "$default",
        },
        "pathParameters": {"name": path.rsplit("/", 1)[1]},
        "body": body,
        "isBase64Encoded": False,
    }


def test_a_route_sees_its_own_body_and_path_while_another_container_resolves_a_request():
    first_inside = threading.Event()
    second_done = threading.Event()
    engine = Engine.assemble(memory_settings(), memory_stores())  # authentication off
    apps = [http.make_app(lambda: engine), http.make_app(lambda: engine)]
    seen: dict[str, tuple[str, str]] = {}

    for app in apps:

        @app.post("/echo/<name>")
        def echo(name: str, app=app):  # noqa: ANN202
            if name == "first":
                first_inside.set()
                assert second_done.wait(5)  # the other container resolves meanwhile
            seen[name] = (app.current_event.body or "", app.current_event.path)
            return http.ok({"name": name})

    first = threading.Thread(target=lambda: apps[0].resolve(_event("/echo/first", '{"a":1}'), None))
    first.start()
    assert first_inside.wait(5)
    answer = apps[1].resolve(_event("/echo/second", '{"b":2}'), None)
    second_done.set()
    first.join(5)
    assert json.loads(answer["body"]) == {"name": "second"}
    assert seen == {"first": ('{"a":1}', "/echo/first"), "second": ('{"b":2}', "/echo/second")}


def test_containers_share_a_routes_compiled_pattern_and_each_still_routes_its_own_requests():
    engine = Engine.assemble(memory_settings(), memory_stores())  # authentication off
    apps = [http.make_app(lambda: engine), http.make_app(lambda: engine)]
    for app in apps:

        @app.post("/echo/<name>")
        def echo(name: str):  # noqa: ANN202
            return http.ok({"name": name})

        re.purge()  # not re's own cache: it holds fewer patterns than the handlers have

    first, second = ([r.rule for r in app._dynamic_routes if "echo" in r.rule.pattern] for app in apps)  # fmt: skip
    assert first == second and first[0] is second[0]  # one compiled pattern for both
    for app, name in zip(apps, ["first", "second"], strict=True):
        answer = app.resolve(_event(f"/echo/{name}", "{}"), None)
        assert (answer["statusCode"], json.loads(answer["body"])) == (200, {"name": name})
    assert apps[0].resolve(_event("/echo/a/b", "{}"), None)["statusCode"] == 404
