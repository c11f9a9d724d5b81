"""``FakeService``: a small in-memory stand-in for the Magnetar HTTP API, for unit tests.

It implements just enough of docs/http-api.md for the SDK's own tests (produce with entry
bodies or ``entryRef``, producers with access modes / epochs / heartbeats, deduplication,
uploads, partitions, namespace listing, subscribe / receive (long poll, ``format: entry``,
large entries by URL) / ack / nack / redeliver / unsubscribe / close) and records every
request. Nacks honour ``delayMs`` / ``backoff`` (held without the service's tick). It is
NOT the service: no persistence, no Key_Shared, no delayed delivery (``deliverAt`` is
ignored), no dead-letter policy (the subscribe body is only recorded), and non-persistent
topics behave like persistent ones here (the service drops what nobody listens to). Use it
as a context manager::

    with FakeService() as svc:
        client = magnetar.Client(svc.url)
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl

from magnetar_wire import decode_entry, format_message_id

from ._fake_consumers import ConsumerRoutes
from ._fake_producers import PRODUCER_ROUTES, ProducerRoutes

__all__ = ["FakeService", "Recorded"]

_TOPIC = r"/(?P<topic>(?:persistent|non-persistent)/[^/]+/[^/]+/[^/]+)"
_CONS = _TOPIC + r"/subscriptions/(?P<sub>[^/]+)/consumers"
_NAMESPACE = r"^/admin/v2/(?P<domain>persistent|non-persistent)/(?P<ns>[^/]+/[^/]+)$"
_ROUTES = [
    ("GET", "list_topics", re.compile(_NAMESPACE)),
    ("GET", "partitions", re.compile(r"^/admin/v2" + _TOPIC + r"/partitions$")),
    ("PUT", "create_partitioned", re.compile(r"^/admin/v2" + _TOPIC + r"/partitions$")),
    ("POST", "produce", re.compile(r"^/v1" + _TOPIC + r"/messages$")),
    ("POST", "subscribe", re.compile(r"^/v1" + _CONS + r"$")),
    ("DELETE", "close", re.compile(r"^/v1" + _CONS + r"/(?P<cid>[^/]+)$")),
    ("POST", "action", re.compile(r"^/v1" + _CONS + r"/(?P<cid>[^/]+)/(?P<action>\w+)$")),
    *PRODUCER_ROUTES,
]


@dataclass
class Recorded:
    """One request the fake received."""

    method: str
    kind: str  # produce, subscribe, receive, ack, nack, redeliver, unsubscribe, close, ...
    path: str
    body: Any  # parsed JSON, the decoded entry for produce, or None
    headers: dict
    at: float = field(default_factory=time.monotonic)
    query: dict = field(default_factory=dict)


class FakeService(ProducerRoutes, ConsumerRoutes):
    """The fake; ``url`` is its base URL, ``requests`` what it received."""

    def __init__(self) -> None:
        self.lock = threading.Condition()
        self.requests: list[Recorded] = []
        self.entries: dict[str, list[tuple[bytes, int]]] = {}  # topic path -> (entry, count)
        self.partitioned: dict[str, int] = {}
        self.subs: dict[tuple[str, str], Any] = {}  # (topic, subscription) -> its state
        self.errors: list[tuple[str, int, dict]] = []  # (kind, status, body), used once each
        self.delay: dict[str, float] = {}  # kind -> seconds to stall before answering
        self._ids = itertools.count(1)
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                status, body = fake._handle(self.command, self.path, raw, dict(self.headers))
                blob = isinstance(body, bytes)
                data = body if blob else json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                self.send_header("Content-Type", "application/octet-stream" if blob
                                 else "application/json")  # fmt: skip
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except OSError:  # the client gave up (an aborted long poll)
                    self.close_connection = True

            do_GET = do_POST = do_PUT = do_DELETE = _any  # noqa: N815

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def process_request(self, request: Any, client_address: Any) -> None:
                t = threading.Thread(target=self.process_request_thread, daemon=True,
                                     args=(request, client_address), name="fake-service-request")  # fmt: skip
                t.start()

        self._server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._init_producers()
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True, name="fake-service"
        )

    def __enter__(self) -> FakeService:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop serving and join the server thread."""
        with self.lock:
            self.lock.notify_all()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    # ------------------------------------------------------------------ test helpers

    def fail_next(self, kind: str, status: int, error: str, message: str = "injected") -> None:
        """Answer the next request of ``kind`` with ``{"error": error, "message": message}``."""
        with self.lock:
            self.errors.append((kind, status, {"error": error, "message": message}))

    def recorded(self, kind: str) -> list[Recorded]:
        """The requests of ``kind`` received so far."""
        with self.lock:
            return [r for r in self.requests if r.kind == kind]

    def wait_for(self, predicate: Any, timeout: float = 5.0) -> bool:
        """Wait until ``predicate(self)`` is true (re-checked on every request)."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while not predicate(self):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self.lock.wait(remaining)
            return True

    # ------------------------------------------------------------------ dispatch

    def _handle(self, method: str, path: str, raw: bytes, headers: dict) -> tuple[int, Any]:
        path, _, qs = path.partition("?")
        query = dict(parse_qsl(qs))
        found = [(k, rx.match(path)) for m, k, rx in _ROUTES if m == method and rx.match(path)]
        if not found:
            return 404, {"error": "NotFound", "message": f"no route {method} {path}"}
        kind, match = found[0]
        args = {**match.groupdict(), "query": query}
        if kind == "action":
            kind = args["action"]
        body: Any = {}
        if kind == "produce":
            if "json" in headers.get("Content-Type", ""):
                with self.lock:
                    raw = self.blobs[json.loads(raw)["entryRef"]]
            body = decode_entry(raw)
        elif kind == "s3_put":
            body = None
        elif raw:
            body = json.loads(raw)
        with self.lock:
            self.requests.append(Recorded(method, kind, path, body, headers, query=query))
            self.lock.notify_all()
            for i, (k, status, err) in enumerate(self.errors):
                if k == kind:
                    del self.errors[i]
                    return status, err
        if self.delay.get(kind):
            time.sleep(self.delay[kind])
        return getattr(self, f"_{kind}")(args, body, raw)

    def _partitions(self, a: dict, body: Any, raw: bytes) -> tuple[int, Any]:
        with self.lock:
            if a["topic"] in self.partitioned:
                return 200, {"partitions": self.partitioned[a["topic"]]}
            if a["topic"] in self.entries:
                return 200, {"partitions": 0}
        return 404, {"error": "TopicNotFound", "message": "unknown topic"}

    def _list_topics(self, a: dict, body: Any, raw: bytes) -> tuple[int, Any]:
        """The namespace's topics of ``domain``: partitions by partition name, as Pulsar."""
        prefix = f"{a['domain']}/{a['ns']}/"
        with self.lock:
            names = {t for t in self.entries if t.startswith(prefix)} - set(self.partitioned)
            for t, n in self.partitioned.items():
                if t.startswith(prefix):
                    names.update(f"{t}-partition-{i}" for i in range(n))
        return 200, sorted(t.replace("/", "://", 1) for t in names)

    def _create_partitioned(self, a: dict, body: Any, raw: bytes) -> tuple[int, Any]:
        with self.lock:
            self.partitioned[a["topic"]] = int(body)
        return 204, None

    def _produce(self, a: dict, decoded: Any, raw: bytes) -> tuple[int, Any]:
        with self.lock:
            refused = self.admit(a, decoded, raw)
            if refused is not None:
                return refused
            log = self.entries.setdefault(a["topic"], [])
            entry_id = len(log)
            log.append((raw, len(decoded.messages)))
            self.lock.notify_all()
        m = re.search(r"-partition-(\d+)$", a["topic"])
        part = int(m.group(1)) if m else -1
        n = len(decoded.messages)
        ids = [format_message_id(1, entry_id, part, i if decoded.header.batched else -1)
               for i in range(n)]  # fmt: skip
        topic = a["topic"].replace("/", "://", 1)
        return 200, {"messageIds": ids, "ledgerId": 1, "entryId": entry_id, "partition": part,
                     "topic": topic}  # fmt: skip


def sdk_threads() -> list[threading.Thread]:
    """Live threads the SDK started (every SDK thread is named ``magnetar-...``): after
    ``close()`` / ``shutdown()`` this must be empty, whatever else runs in the process."""
    return [t for t in threading.enumerate() if t.name.startswith("magnetar-")]
