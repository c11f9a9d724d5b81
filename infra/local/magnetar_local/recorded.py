"""The requests a ``MemoryService`` received, for tests to look at: each ``Recorded`` with
its *kind* — ``produce``, ``subscribe``, ``receive``, ``ack``, ``nack``... (``kind_of``) —
and the path under which the service serves presigned entry objects (``OBJECTS_PATH``).
``RequestRecorder`` is the service's side of it: recording, waiting for a request, and an
injected error or stall per kind."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import parse_qsl

from magnetar_core.api.http import ENTRIES_CONTENT_TYPE, ENTRY_CONTENT_TYPE
from magnetar_local.events import HttpRequest, HttpResponse, json_response
from magnetar_wire import decode_entry
from magnetar_wire.frames import decode_frames

__all__ = ["OBJECTS_PATH", "Recorded", "RequestRecorder", "kind_of"]

OBJECTS_PATH = "/_objects"

_TOPIC = r"/(?:persistent|non-persistent)/[^/]+/[^/]+/[^/]+"
_CONSUMERS = r"^/v1" + _TOPIC + r"/subscriptions/[^/]+/consumers"
KINDS: list[tuple[str, str, re.Pattern[str]]] = [
    (m, kind, re.compile(rx))
    for m, kind, rx in (
        ("GET", "list_topics", r"^/admin/v2/(?:persistent|non-persistent)/[^/]+/[^/]+$"),
        ("GET", "partitions", r"^/admin/v2" + _TOPIC + r"/partitions$"),
        ("PUT", "create_partitioned", r"^/admin/v2" + _TOPIC + r"/partitions$"),
        ("POST", "produce", r"^/v1" + _TOPIC + r"/messages$"),
        ("POST", "upload", r"^/v1" + _TOPIC + r"/uploads$"),
        ("POST", "register", r"^/v1" + _TOPIC + r"/producers$"),
        ("POST", "heartbeat", r"^/v1" + _TOPIC + r"/producers/[^/]+/heartbeat$"),
        ("DELETE", "release", r"^/v1" + _TOPIC + r"/producers/[^/]+$"),
        ("POST", "subscribe", _CONSUMERS + r"$"),
        ("DELETE", "close", _CONSUMERS + r"/[^/]+$"),
        ("POST", "action", _CONSUMERS + r"/[^/]+/(?P<action>\w+)$"),
        ("PUT", "s3_put", "^" + OBJECTS_PATH + "/"),
        ("GET", "s3_get", "^" + OBJECTS_PATH + "/"),
    )
]


@dataclass
class Recorded:
    """One request the service received. ``body``: the decoded entry of a produce (also of
    one by ``entryRef``), the list of decoded entries of a multi-entry produce, parsed JSON,
    or None for object uploads."""

    method: str
    kind: str  # produce, register, subscribe, receive, ack, nack, redeliver, close, ...
    path: str
    body: Any
    headers: dict
    at: float = field(default_factory=time.monotonic)
    query: dict = field(default_factory=dict)


def kind_of(method: str, path: str) -> str:
    """The kind of a request (``other`` for none of ``KINDS``)."""
    for m, kind, pattern in KINDS:
        match = pattern.match(path)
        if m == method and match:
            return match.group("action") if kind == "action" else kind
    return "other"


class RequestRecorder:
    """Records every request (``record``), answers one of a kind with an injected error
    (``fail_next``) or stalls it (``delay``), and lets tests wait for what they expect.
    ``read_object`` reads an uploaded entry object (a produce by ``entryRef``)."""

    def __init__(self, read_object: Callable[[str], bytes]) -> None:
        self.read_object = read_object
        self.requests: list[Recorded] = []
        self.errors: list[tuple[str, int, dict]] = []  # (kind, status, body), used once each
        self.delay: dict[str, float] = {}  # kind -> seconds to stall before handling
        self._cond = threading.Condition()

    def fail_next(
        self,
        kind: str,
        status: int,
        error: str,
        message: str = "injected",
        retry_after_ms: int | None = None,
    ) -> None:
        """Answer the next request of ``kind`` with ``{"error": error, "message": message}``
        (the handler does not run); with ``retry_after_ms`` also ``retryAfterMs``, as the
        service answers overload."""
        body: dict = {"error": error, "message": message}
        if retry_after_ms is not None:
            body["retryAfterMs"] = retry_after_ms
        with self._cond:
            self.errors.append((kind, status, body))

    def recorded(self, kind: str) -> list[Recorded]:
        """The requests of ``kind`` received so far."""
        with self._cond:
            return [r for r in self.requests if r.kind == kind]

    def recorded_entries(self) -> list[Recorded]:
        """One record per entry produced so far, in commit order: a multi-entry produce
        (``application/vnd.magnetar.entries``) counts once per entry, each with its decoded
        entry as ``body`` and its request's path, headers and query."""
        out: list[Recorded] = []
        for request in self.recorded("produce"):
            if isinstance(request.body, list):
                out += [replace(request, body=entry) for entry in request.body]
            else:
                out.append(request)
        return out

    def wait_for(self, predicate: Callable[[Any], Any], timeout: float = 5.0) -> bool:
        """Wait until ``predicate(self)`` is true (re-checked on every request)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate(self):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(min(remaining, 0.1))
            return True

    def wake_waiters(self) -> None:
        """Have every ``wait_for`` check its predicate now (the service stops)."""
        with self._cond:
            self._cond.notify_all()

    def record(self, request: HttpRequest) -> tuple[str, HttpResponse | None]:
        """Record ``request``: its kind, and the injected answer to give instead of serving
        it (None: serve it, after its kind's ``delay``)."""
        kind = kind_of(request.method, request.raw_path)
        headers = dict(request.headers)
        recorded = Recorded(
            request.method, kind, request.raw_path, self._body_of(kind, request, headers),
            headers, query=dict(parse_qsl(request.raw_query)),
        )  # fmt: skip
        with self._cond:
            self.requests.append(recorded)
            self._cond.notify_all()
            injected = next((e for e in self.errors if e[0] == kind), None)
            if injected is not None:
                self.errors.remove(injected)
        if injected is not None:
            return kind, json_response(injected[1], injected[2])
        if self.delay.get(kind):
            time.sleep(self.delay[kind])
        return kind, None

    def _body_of(self, kind: str, request: HttpRequest, headers: dict) -> Any:
        """What ``Recorded.body`` holds for ``request`` (its raw bytes when undecodable)."""
        raw = request.body
        content_type = {k.lower(): v for k, v in headers.items()}.get("content-type", "")
        try:
            if kind == "produce" and content_type.startswith(ENTRIES_CONTENT_TYPE):
                return [decode_entry(entry) for entry in decode_frames(raw)]
            if kind == "produce" and content_type.startswith(ENTRY_CONTENT_TYPE):
                return decode_entry(raw)
            if kind in ("s3_put", "s3_get"):
                return None
            body = json.loads(raw) if raw else {}
            if kind == "produce" and isinstance(body, dict) and "entryRef" in body:
                return decode_entry(self.read_object(body["entryRef"]))
            return body
        except Exception:  # recording never fails a request: the handler answers it
            return raw
