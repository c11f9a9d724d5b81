"""Plain HTTP calls to a service and checks of the documented error shape (edge tests), and
the consumer and admin calls the memory-service tests of the admin verbs and stats share."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

TOPIC = "/persistent/public/default/t"


def call(url: str, method: str = "POST", body: bytes | None = None, headers=None):
    """(status, parsed JSON body, headers) of one request."""
    request = urllib.request.Request(
        url, data=body, method=method, headers=headers or {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null"), response.headers
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null"), error.headers


def assert_error(answer, status: int, code: str, *words: str) -> None:
    """``answer`` is ``status`` with ``{"error": code, "message": ...}`` naming ``words``."""
    got, body, _ = answer
    assert (got, set(body), body["error"]) == (status, {"error", "message"}, code), body
    for word in words:
        assert word in body["message"], body["message"]


def subscribe(svc, path: str, sub: str) -> str:
    """A Shared consumer from earliest on ``path`` (``persistent/t/ns/topic``); its id."""
    body = {"subscriptionType": "Shared", "initialPosition": "Earliest", "consumerName": "c"}
    url = f"{svc.url}/v1/{path}/subscriptions/{sub}/consumers"
    status, answer, _ = call(url, body=json.dumps(body).encode())
    assert status == 200, answer
    return answer["consumerId"]


def receive(svc, path: str, sub: str, consumer: str) -> list[str]:
    """The ids of what one receive (up to 100, no wait) hands ``consumer``."""
    url = f"{svc.url}/v1/{path}/subscriptions/{sub}/consumers/{consumer}/receive"
    status, answer, _ = call(url, body=json.dumps({"maxMessages": 100, "waitMs": 0}).encode())
    assert status == 200, answer
    return [m["messageId"] for m in answer["messages"]]


def admin(svc, path: str, verb: str, method: str = "POST", body=None):
    """``method /admin/v2/<path>/<verb>`` with ``body`` as JSON: (status, answer, headers)."""
    data = None if body is None else json.dumps(body).encode()
    return call(f"{svc.url}/admin/v2/{path}/{verb}", method=method, body=data)
