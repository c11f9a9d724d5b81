"""``FakeService``: a small in-memory stand-in for the Magnetar HTTP API, for unit tests.

It implements just enough of docs/http-api.md for the SDK's own tests (produce with entry
bodies or ``entryRef``, producers with access modes / epochs / heartbeats, deduplication,
uploads, partitions, namespace listing, subscribe / receive (long poll, ``format: entry``,
large entries by URL) / ack / nack / redeliver / unsubscribe / close) and records every
request. It is NOT the service:
no persistence, no Key_Shared, no delayed delivery, and non-persistent topics behave like
persistent ones here (the service drops what nobody listens to). Use it as a context manager::

    with FakeService() as svc:
        client = magnetar.Client(svc.url)
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl

from magnetar_wire import decode_entry, format_message_id, parse_message_id

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


@dataclass
class _Sub:
    type: str
    next_read: int
    consumers: dict = field(default_factory=dict)  # id -> name
    inflight: dict = field(default_factory=dict)  # entry index -> consumer id
    redeliver: deque = field(default_factory=deque)
    acked: dict = field(default_factory=dict)  # entry index -> set of batch indexes / "all"
    redeliveries: dict = field(default_factory=dict)  # entry index -> count


class FakeService(ProducerRoutes):
    """The fake; ``url`` is its base URL, ``requests`` what it received."""

    def __init__(self) -> None:
        self.lock = threading.Condition()
        self.requests: list[Recorded] = []
        self.entries: dict[str, list[tuple[bytes, int]]] = {}  # topic path -> (entry, count)
        self.partitioned: dict[str, int] = {}
        self.subs: dict[tuple[str, str], _Sub] = {}
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

    def _subscribe(self, a: dict, body: Any, raw: bytes) -> tuple[int, Any]:
        with self.lock:
            key = (a["topic"], a["sub"])
            log = self.entries.setdefault(a["topic"], [])
            sub = self.subs.get(key)
            if sub is None:
                start = 0 if body.get("initialPosition") == "Earliest" else len(log)
                sub = self.subs[key] = _Sub(body.get("subscriptionType", "Exclusive"), start)
            if body.get("subscriptionType") not in ("Exclusive", "Shared"):
                return 400, {"error": "NotAllowedError", "message": "type not supported"}
            if sub.consumers and (sub.type == "Exclusive" or body["subscriptionType"] != sub.type):
                return 409, {
                    "error": "ConsumerBusy",
                    "message": "Exclusive consumer is already connected",
                }
            cid = f"c{next(self._ids)}"
            name = body.get("consumerName") or f"fake-{cid}"
            sub.consumers[cid] = name
        return 200, {"consumerId": cid, "consumerName": name, "subscription": a["sub"],
                     "topic": a["topic"]}  # fmt: skip

    def _sub(self, a: dict) -> _Sub | None:
        sub = self.subs.get((a["topic"], a["sub"]))
        return sub if sub is not None and a["cid"] in sub.consumers else None

    def _receive(self, a: dict, body: Any, raw: bytes) -> tuple[int, Any]:
        deadline = time.monotonic() + body.get("waitMs", 0) / 1000
        with self.lock:
            while True:
                sub = self._sub(a)
                if sub is None:
                    return 404, {"error": "ConsumerNotFound", "message": "unknown consumer"}
                out = self._dispatch(a, sub, body.get("maxMessages", 100))
                remaining = deadline - time.monotonic()
                if out or remaining <= 0:
                    return 200, {"entries": out}
                self.lock.wait(remaining)

    def _dispatch(self, a: dict, sub: _Sub, max_messages: int) -> list[dict]:
        log = self.entries.get(a["topic"], [])
        out: list[dict] = []
        count = inline = 0
        while count < max_messages:
            if sub.redeliver:
                idx = sub.redeliver.popleft()
            elif sub.next_read < len(log):
                idx = sub.next_read
                sub.next_read += 1
            else:
                break
            raw, n = log[idx]
            acked = sub.acked.get(idx, set())
            if acked == "all" or len(acked) >= n:
                continue
            sub.inflight[idx] = a["cid"]
            mask = sorted(set(range(n)) - acked) if acked else None
            count += n - len(acked)
            m = re.search(r"-partition-(\d+)$", a["topic"])
            inline += len(raw)
            data = {"data": base64.b64encode(raw).decode()}
            if inline > self.inline_receive_bytes:  # the rest by URL, as the service does
                data = {"data": None, "url": self.blob_url(raw)}
            out.append({"ledgerId": 1, "entryId": idx, "partition": int(m.group(1)) if m else -1,
                        "redeliveryCount": sub.redeliveries.get(idx, 0), "batchIndexes": mask,
                        **data, "topic": a["topic"].replace("/", "://", 1)})  # fmt: skip
        return out

    def _ack(self, a: dict, body: Any, raw: bytes) -> tuple[int, Any]:
        with self.lock:
            sub = self._sub(a)
            if sub is None:
                return 404, {"error": "ConsumerNotFound", "message": "unknown consumer"}
            if body.get("cumulative") and sub.type == "Shared":
                return 400, {"error": "CumulativeAcknowledgementNotAllowedError", "message": "no"}
            for text in body["messageIds"]:
                _, entry, _, batch = parse_message_id(text)
                targets = range(entry + 1) if body.get("cumulative") else [entry]
                for idx in targets:
                    if batch < 0 or idx < entry:
                        sub.acked[idx] = "all"
                    elif sub.acked.get(idx) != "all":
                        sub.acked.setdefault(idx, set()).add(batch)
                    acked = sub.acked[idx]
                    if acked == "all" or len(acked) >= self.entries[a["topic"]][idx][1]:
                        sub.inflight.pop(idx, None)
        return 200, {"acknowledged": len(body["messageIds"])}

    def _back(self, sub: _Sub, indexes: list[int]) -> int:
        for idx in sorted(set(indexes)):
            sub.inflight.pop(idx, None)
            sub.redeliveries[idx] = sub.redeliveries.get(idx, 0) + 1
            sub.redeliver.append(idx)
        sub.redeliver = deque(sorted(set(sub.redeliver)))
        self.lock.notify_all()
        return len(set(indexes))

    def _nack(self, a: dict, body: Any, raw: bytes) -> tuple[int, Any]:
        with self.lock:
            sub = self._sub(a)
            if sub is None:
                return 404, {"error": "ConsumerNotFound", "message": "unknown consumer"}
            idx = [parse_message_id(t)[1] for t in body["messageIds"]]
            return 200, {"redelivered": self._back(sub, [i for i in idx if i in sub.inflight])}

    def _redeliver(self, a: dict, body: Any, raw: bytes) -> tuple[int, Any]:
        with self.lock:
            sub = self._sub(a)
            if sub is None:
                return 404, {"error": "ConsumerNotFound", "message": "unknown consumer"}
            mine = [i for i, c in sub.inflight.items() if c == a["cid"]]
            return 200, {"redelivered": self._back(sub, mine)}

    def _close(self, a: dict, body: Any, raw: bytes) -> tuple[int, Any]:
        with self.lock:
            sub = self._sub(a)
            if sub is None:
                return 404, {"error": "ConsumerNotFound", "message": "unknown consumer"}
            self._back(sub, [i for i, c in sub.inflight.items() if c == a["cid"]])
            del sub.consumers[a["cid"]]
        return 200, {"closed": True}

    def _unsubscribe(self, a: dict, body: Any, raw: bytes) -> tuple[int, Any]:
        with self.lock:
            sub = self._sub(a)
            if sub is None:
                return 404, {"error": "ConsumerNotFound", "message": "unknown consumer"}
            if len(sub.consumers) > 1:
                return 409, {"error": "ConsumerBusy", "message": "other consumers connected"}
            del self.subs[(a["topic"], a["sub"])]
        return 200, {"unsubscribed": True}


def sdk_threads() -> list[threading.Thread]:
    """Live threads the SDK started (every SDK thread is named ``magnetar-...``): after
    ``close()`` / ``shutdown()`` this must be empty, whatever else runs in the process."""
    return [t for t in threading.enumerate() if t.name.startswith("magnetar-")]
