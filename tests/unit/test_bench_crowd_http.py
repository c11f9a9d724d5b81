"""``magnetar perf crowd`` counts what the SDK's HTTP requests met: answers of 429 and 503
(retried by the SDK) and connection errors, on a local server of its own."""

from __future__ import annotations

import http.server
import socket
import threading
from collections import Counter

import pytest
import requests

from magnetar_bench.crowd import counting_http


class _Busy(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        status = 503 if self.path == "/busy" else 200
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Busy)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_answers_of_503_and_refused_connections_are_counted_and_others_are_not(server):
    seen: Counter[str] = Counter()
    with counting_http(seen), requests.Session() as session:
        assert session.get(f"{server}/busy").status_code == 503
        assert session.get(f"{server}/fine").status_code == 200
        with pytest.raises(requests.exceptions.ConnectionError):
            session.get(f"http://127.0.0.1:{closed_port()}/")

    assert seen == {"answered 503": 1, "connection ConnectionError": 1}


def test_requests_after_the_run_are_not_counted(server):
    seen: Counter[str] = Counter()
    with counting_http(seen):
        pass
    with requests.Session() as session:
        session.get(f"{server}/busy")

    assert seen == {}
