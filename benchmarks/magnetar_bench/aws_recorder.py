"""``RecordingProxy``: every AWS request a process tree makes, seen on the wire.

A Spark job's executors are Python worker processes of their own, so hooks on this
process's boto3 sessions (``perf cost``'s ``CapacityMeter``) never see their requests. The
proxy sits between the job (``--endpoint-url`` = the proxy) and the embedded stack's
emulator, forwards each request unchanged and records its operation and, for DynamoDB, the
request units AWS would bill (``capacity``'s rules; reads and deletes billed on the *stored*
item's size, whatever the projection, from ``Recorder.sizes`` taken before the run).
"""

from __future__ import annotations

import http.client
import json
import re
import threading
import urllib.parse
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from magnetar_bench.capacity import item_size_bytes, read_units, write_units

_HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "host"}


def s3_operation(method: str, path: str, query: str, headers: Any) -> str:
    """The S3 API operation of a path-style request."""
    params = urllib.parse.parse_qs(query, keep_blank_values=True)
    has_key = "/" in path.lstrip("/")
    if method == "GET":
        if "list-type" in params:
            return "ListObjectsV2"
        return "GetObject" if has_key else "ListObjects"
    if method == "PUT":
        return "CopyObject" if headers.get("x-amz-copy-source") else "PutObject"
    if method == "POST":
        return "DeleteObjects" if "delete" in params else "PostObject"
    if method == "DELETE":
        return "DeleteObject"
    if method == "HEAD":
        return "HeadObject" if has_key else "HeadBucket"
    return method


def key_of(key: dict) -> str:
    """A DynamoDB key as a string (``Recorder.sizes``' keys)."""
    return json.dumps(key, sort_keys=True)


class Recorder:
    """Requests by ``service.Operation`` and DynamoDB units by ``"<table> RRU|WRU"``."""

    def __init__(self) -> None:
        self.requests: Counter[str] = Counter()
        self.units: dict[str, float] = {}
        self.sizes: dict[tuple[str, str], int] = {}
        """Stored item sizes by ``(table, key_of(key))``, set before a run."""
        self._lock = threading.Lock()

    def reset(self, sizes: dict[tuple[str, str], int] | None = None) -> None:
        """Forget what was counted; ``sizes``: the stored item sizes for the next run."""
        with self._lock:
            self.requests.clear()
            self.units.clear()
            self.sizes = dict(sizes or {})

    def snapshot(self) -> dict:
        with self._lock:
            return {"requests": dict(sorted(self.requests.items())),
                    "units": {k: round(v, 1) for k, v in sorted(self.units.items())}}  # fmt: skip

    def s3(self, operation: str) -> None:
        with self._lock:
            self.requests[f"s3.{operation}"] += 1

    def dynamodb(self, operation: str, request: dict, response: dict) -> None:
        """Count one DynamoDB request and the units it bills."""
        units: dict[str, float] = {}

        def add(name: str, value: float) -> None:
            units[name] = units.get(name, 0.0) + value

        table = request.get("TableName", "?")
        consistent = bool(request.get("ConsistentRead"))
        if operation in ("Query", "Scan", "GetItem"):
            items = response.get("Items", [response["Item"]] if "Item" in response else [])
            found = re.search(r"\bpk = (:\w+)", request.get("KeyConditionExpression", ""))
            if found:  # a projection without pk: the Query's own pk names the items
                pk = request["ExpressionAttributeValues"][found.group(1)]
                items = [{"pk": pk, **i} for i in items]
            size = sum(self._size(table, i) for i in items)
            add(f"{table} RRU", read_units(size, consistent))
        elif operation == "BatchGetItem":
            for name, items in (response.get("Responses") or {}).items():
                strong = bool(request["RequestItems"].get(name, {}).get("ConsistentRead"))
                add(f"{name} RRU", sum(read_units(self._size(name, i), strong) for i in items))
        elif operation == "BatchWriteItem":
            for name, writes in (request.get("RequestItems") or {}).items():
                for w in writes:
                    if "PutRequest" in w:
                        size = item_size_bytes(w["PutRequest"]["Item"])
                    else:
                        size = self._stored_size(name, w["DeleteRequest"]["Key"]) or 0
                    add(f"{name} WRU", write_units(size))
        elif operation in ("PutItem", "UpdateItem", "DeleteItem"):
            size = item_size_bytes(request.get("Item")) if operation == "PutItem" else 0
            stored = self._stored_size(table, request["Key"]) if "Key" in request else None
            add(f"{table} WRU", write_units(max(size, stored or 0)))
        with self._lock:
            self.requests[f"dynamodb.{operation}"] += 1
            for name, value in units.items():
                self.units[name] = self.units.get(name, 0.0) + value

    def _stored_size(self, table: str, key: dict) -> int | None:
        return self.sizes.get((table, key_of(key)))

    def _size(self, table: str, item: dict) -> int:
        """A read item's stored size (its full size, not the projected one): by its key, or,
        projected without its sort key (a keys-only Scan), the table's mean stored size."""
        key = {k: item[k] for k in ("pk", "eid", "sub", "name") if k in item}
        stored = self._stored_size(table, key)
        if stored is None and len(key) < 2:
            stored = self._mean_size(table)
        return stored if stored is not None else item_size_bytes(item)

    def _mean_size(self, table: str) -> int | None:
        sizes = [v for (t, _), v in self.sizes.items() if t == table]
        return round(sum(sizes) / len(sizes)) if sizes else None


class RecordingProxy:
    """An HTTP proxy on a free loopback port forwarding to ``target_url`` (the emulator)."""

    def __init__(self, target_url: str, recorder: Recorder) -> None:
        self.recorder = recorder
        target = urllib.parse.urlsplit(target_url)
        host, port = target.hostname or "127.0.0.1", target.port or 80
        recorder_ = recorder

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                return

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_HEADERS}
                upstream = http.client.HTTPConnection(host, port, timeout=120)
                upstream.request(self.command, self.path, body=body, headers=headers)
                answer = upstream.getresponse()
                data = answer.read()
                self._record(body, answer.status, data)
                self.send_response(answer.status)
                for k, v in answer.getheaders():
                    if k.lower() not in _HOP_HEADERS and k.lower() != "content-length":
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                upstream.close()

            def _record(self, body: bytes, status: int, data: bytes) -> None:
                target = self.headers.get("X-Amz-Target", "")
                if target.startswith("DynamoDB_"):
                    answer = json.loads(data or b"{}") if status < 400 else {}
                    recorder_.dynamodb(target.split(".", 1)[1], json.loads(body or b"{}"), answer)
                elif "/s3/" in self.headers.get("Authorization", ""):
                    path, _, query = self.path.partition("?")
                    recorder_.s3(s3_operation(self.command, path, query, self.headers))

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
