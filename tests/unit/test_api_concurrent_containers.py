"""Two Lambda containers served concurrently in one process (as the local gateway runs them)
never read each other's requests: Powertools keeps the current event in a class attribute,
so a handler that read its body after another container began resolving read the other
request's body under its own path (the partition mix-up of docs/reliability.md)."""

from __future__ import annotations

import json
import threading

from magnetar_core.api import http

ROUTE = "/v1/<domain>/<tenant>/<namespace>/<topic>/messages"


def event(topic: str, body: dict) -> dict:
    """An HTTP API (payload 2.0) event for ``POST .../<topic>/messages``."""
    path = f"/v1/persistent/public/default/{topic}/messages"
    return {
        "version": "2.0",
        "routeKey": "POST /v1/{domain}/{tenant}/{namespace}/{topic}/messages",
        "rawPath": path,
        "rawQueryString": f"n={body['n']}",
        "queryStringParameters": {"n": str(body["n"])},
        "headers": {"content-type": "application/json"},
        "requestContext": {
            "http": {"method": "POST", "path": path, "protocol": "HTTP/1.1",
                     "sourceIp": "127.0.0.1", "userAgent": "test"},
            "requestId": f"request-{topic}", "stage": "$default",
        },  # fmt: skip
        "pathParameters": {"domain": "persistent", "tenant": "public",
                           "namespace": "default", "topic": topic},  # fmt: skip
        "body": json.dumps(body),
        "isBase64Encoded": False,
    }


def test_a_handler_reads_its_own_request_while_another_container_resolves_one():
    first, second = http.make_app(), http.make_app()  # two containers of one function
    inside, other_done = threading.Event(), threading.Event()
    seen: dict[str, tuple] = {}

    def handler(app, name):
        def route(domain: str, tenant: str, namespace: str, topic: str):
            if name == "first":
                inside.set()
                other_done.wait(5)  # the second container resolves a request meanwhile
            seen[name] = (topic, http.json_object(app), http.int_query(app, "n"))
            return http.ok({})

        return route

    first.post(ROUTE)(handler(first, "first"))
    second.post(ROUTE)(handler(second, "second"))
    answers: list[dict] = []
    thread = threading.Thread(
        target=lambda: answers.append(first.resolve(event("t-partition-0", {"n": 0}), None))
    )
    thread.start()
    assert inside.wait(5)
    answer = second.resolve(event("t-partition-3", {"n": 3}), None)
    other_done.set()
    thread.join(5)
    assert [a["statusCode"] for a in [*answers, answer]] == [200, 200]
    assert seen == {
        "first": ("t-partition-0", {"n": 0}, 0),
        "second": ("t-partition-3", {"n": 3}, 3),
    }
