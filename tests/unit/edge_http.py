"""Plain HTTP calls to a service and checks of the documented error shape (edge tests)."""

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
