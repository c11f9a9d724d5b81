"""Helpers of the durability tests: ``magnetar local`` as a real subprocess on a data
directory, and a recording proxy in front of it that outlives its restarts (the SDK talks to
the proxy; what the service confirmed is read off the wire by the chaos observer)."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit

from magnetar_chaos.observer import GatewayObserver

START_TIMEOUT_S = 120.0
_HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


class Service:
    """One ``magnetar local --port 0 --data-dir DIR`` process with its state in ``home``
    (``options``: more of the command's options)."""

    def __init__(self, home: Path, data_dir: Path, *options: str) -> None:
        self.home, self.data_dir = home, data_dir
        env = {k: v for k, v in os.environ.items() if k != "MAGNETAR_SERVICE_URL"}
        env["MAGNETAR_HOME"] = str(home)
        command = [sys.executable, "-m", "magnetar.cli", "local", "--port", "0",
                   "--data-dir", str(data_dir), "--log-level", "WARNING", *options]  # fmt: skip
        self.log = home / f"service-{time.monotonic_ns()}.log"
        home.mkdir(parents=True, exist_ok=True)
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(command, cwd=home, env=env, stdout=log,
                                            stderr=subprocess.STDOUT)  # fmt: skip
        self.started_s = self._await_record()

    def _await_record(self) -> float:
        began = time.monotonic()
        record = self.home / "services" / f"{self.process.pid}.json"
        while not record.exists():
            if self.process.poll() is not None:
                raise AssertionError(f"magnetar local exited: {self.log.read_text()[-2000:]}")
            if time.monotonic() - began > START_TIMEOUT_S:
                raise AssertionError(f"magnetar local not up in {START_TIMEOUT_S} s")
            time.sleep(0.05)  # another process: nothing to wait on but its record
        self.url = json.loads(record.read_text())["url"]
        return time.monotonic() - began

    def kill(self) -> None:
        """SIGKILL: no handler runs, nothing is flushed by the service itself."""
        self.process.kill()
        self.process.wait(30)
        (self.home / "services" / f"{self.process.pid}.json").unlink(missing_ok=True)

    def terminate(self) -> None:
        self.process.terminate()
        self.process.wait(60)


class RecordingProxy:
    """Forwards every request to ``upstream`` (one service: a proxy per restart) and feeds
    the answers to ``observer`` (shared by the proxies of a test); an upstream that does not
    answer closes the client's connection, as a dead service does."""

    def __init__(self, upstream: str, observer: GatewayObserver) -> None:
        self.observer = observer
        self.upstream = upstream
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                request = SimpleNamespace(raw_path=self.path.split("?")[0], body=body)
                try:
                    answer = proxy.observer.wrap(lambda r: proxy.send(self, r))(request)
                except OSError:
                    self.close_connection = True
                    return
                self.send_response(answer.status)
                for name, value in answer.headers:
                    if name.lower() not in _HOP_HEADERS:
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)

            do_GET = do_POST = do_PUT = do_DELETE = _forward

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def send(self, handler: BaseHTTPRequestHandler, request: SimpleNamespace) -> SimpleNamespace:
        target = urlsplit(self.upstream)
        connection = http.client.HTTPConnection(target.hostname, target.port, timeout=60)
        try:
            headers = {k: v for k, v in handler.headers.items() if k.lower() not in _HOP_HEADERS}
            connection.request(handler.command, handler.path, request.body, headers)
            response = connection.getresponse()
            return SimpleNamespace(status=response.status, headers=response.getheaders(),
                                   body=response.read())  # fmt: skip
        finally:
            connection.close()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def where_missing(url: str, topic: str, subscription: str, model: Any) -> dict:
    """Where the confirmed sends ``subscription`` never delivered are (a failure's details):
    ``lost`` those the topic's log does not hold (a real loss), ``stored`` those it holds
    (held back: a consumer's lease, a hole, a cursor), and the subscription's stats (its
    consumers with their unacknowledged messages, its backlog)."""
    import magnetar as pulsar

    missing = sorted(set(model.confirmed) - {d[0] for d in model.deliveries[subscription]})
    client = pulsar.Client(url)
    stored: set[str] = set()
    try:
        reader = client.create_reader(topic, pulsar.MessageId.earliest)
        while True:
            try:
                stored.add(reader.read_next(3000).data().decode())
            except pulsar.Timeout:
                break
    finally:
        client.close()
    path = "/admin/v2/" + topic.replace("://", "/") + "/stats"
    try:
        with urllib.request.urlopen(url + path, timeout=30) as answer:
            stats = json.loads(answer.read()).get("subscriptions", {}).get(subscription)
    except OSError as e:
        stats = f"stats failed: {e}"
    return {"lost": [m for m in missing if m not in stored][:20],
            "stored": [m for m in missing if m in stored][:20], "stats": stats}  # fmt: skip
