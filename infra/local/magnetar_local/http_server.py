"""The gateway's HTTP/1.1 side: one ``RequestHandler`` per connection (keep-alive, every
response with Content-Length, the body framed by Content-Length or chunks of at most
``MAX_BODY_BYTES``; a body that cannot be framed is answered and its connection closed),
each request handed to its front's ``invoke`` (``magnetar_local.gateway.Gateway``), the
set of open connections a crash resets (``OpenConnections``), and the listening server
(``BacklogServer``: a listen backlog for many clients connecting at once)."""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import urlsplit

from magnetar_local.events import HttpRequest, HttpResponse, json_response
from magnetar_local.tls import client_cert, handshake

log = logging.getLogger("magnetar_local.gateway")  # the gateway's log, as before the split

MAX_BODY_BYTES = 10 * 1024 * 1024
"""API Gateway HTTP API's largest request payload."""


LISTEN_BACKLOG = 512
"""Connections the listening socket queues before accepting them (``listen``'s backlog).
``socketserver``'s default of 5 reset clients when many connected at once (100 concurrent
producers saw resets); the kernel caps it at ``net.core.somaxconn``."""


class BacklogServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer whose listening socket queues ``LISTEN_BACKLOG`` connections."""

    request_queue_size = LISTEN_BACKLOG
    daemon_threads = True


class OpenConnections:
    """The client connections a server has open (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()

    def add(self, conn: socket.socket) -> None:
        with self._lock:
            self._open.add(conn)

    def discard(self, conn: socket.socket) -> None:
        with self._lock:
            self._open.discard(conn)

    def reset(self) -> None:
        """Shut every open connection down (its client sees it fail, not answered) and
        forget them; a connection already gone is skipped."""
        with self._lock:
            connections, self._open = list(self._open), set()
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


class Front(Protocol):
    """What answers the requests a ``RequestHandler`` reads."""

    connections: OpenConnections

    def invoke(self, request: HttpRequest) -> HttpResponse:
        """The answer to ``request``; never raises."""
        ...


class _BadFraming(Exception):
    """The request's body cannot be delimited: answer ``status`` and close the connection."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


class RequestHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 with keep-alive; every response carries Content-Length. A subclass sets
    ``owner``, the front that answers."""

    owner: Front
    protocol_version = "HTTP/1.1"
    server_version = "MagnetarLocalGateway/0.1"
    timeout = 120  # seconds an idle keep-alive connection may hold its thread
    handshake_timeout_s = 10.0

    def setup(self) -> None:
        super().setup()
        # Headers and body leave in separate writes: without TCP_NODELAY, Nagle's algorithm
        # and the client's delayed ACK add ~40 ms to every keep-alive request.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.owner.connections.add(self.connection)
        self._client_cert: dict[str, Any] | None = None
        self._refused = False
        try:  # TLS listeners (magnetar_local.tls): the handshake runs in this thread
            handshake(self.connection, self.handshake_timeout_s)
            self._client_cert = client_cert(self.connection)
        except (OSError, ValueError) as error:
            log.info("TLS handshake with %s failed: %s", self.client_address[0], error)
            self._refused = True

    def handle(self) -> None:
        if not self._refused:
            super().handle()

    def finish(self) -> None:
        self.owner.connections.discard(self.connection)
        super().finish()

    def _dispatch(self) -> None:
        url = urlsplit(self.path)
        try:
            body = self._read_body()
        except _BadFraming as bad:
            # the rest of the stream cannot be framed: answer and close the connection
            self.close_connection = True
            response = json_response(bad.status, {"error": bad.code, "message": bad.message})
            self._respond(response, close=True)
            return
        request = HttpRequest(
            method=self.command,
            raw_path=url.path or "/",
            raw_query=url.query,
            headers=list(self.headers.items()),
            body=body,
            source_ip=self.client_address[0],
            protocol=self.request_version,
            client_cert=self._client_cert,
        )
        response = self.owner.invoke(request)
        try:
            self._respond(response)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client left (e.g. a consumer closed mid long-poll)

    def _respond(self, response: HttpResponse, close: bool = False) -> None:
        self.send_response(response.status)
        for name, value in response.headers:
            if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(response.body)))
        if close:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(response.body)

    def _read_body(self) -> bytes:
        """The body, by chunks or Content-Length (at most MAX_BODY_BYTES); raises
        _BadFraming for a length or chunk size that is not a non-negative integer."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._read_chunks()
        values = self.headers.get_all("Content-Length") or []
        if not values:
            return b""
        text = values[0].strip()
        if len(values) > 1 or not text.isdigit() or not text.isascii():
            shown = ", ".join(values)[:40]
            raise _BadFraming(
                400,
                "InvalidMessage",
                f"Content-Length must be a non-negative integer, not {shown!r}",
            )
        length = int(text)
        if length > MAX_BODY_BYTES:
            raise _BadFraming(
                413, "MessageTooBig", f"The body is {length} bytes; at most {MAX_BODY_BYTES}"
            )
        return self.rfile.read(length) if length else b""

    def _read_chunks(self) -> bytes:
        chunks: list[bytes] = []
        total = 0
        while True:
            text = self.rfile.readline(1024).split(b";", 1)[0].strip()
            if not text or not all(c in b"0123456789abcdefABCDEF" for c in text):
                raise _BadFraming(
                    400, "InvalidMessage", f"A chunk size must be hexadecimal, not {text[:40]!r}"
                )
            size = int(text, 16)
            if size == 0:
                while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(chunks)
            total += size
            if total > MAX_BODY_BYTES:
                raise _BadFraming(413, "MessageTooBig", f"The body is over {MAX_BODY_BYTES} bytes")
            chunks.append(self.rfile.read(size))
            self.rfile.readline()

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _dispatch

    def __getattr__(self, name: str) -> Any:
        """``do_<METHOD>`` of every other method (TRACE, QUERY, ...) dispatches too: a method
        no route has is a 404 NotFound in the error shape, not the standard library's 501
        HTML page (found by tests/fuzz)."""
        if name.startswith("do_"):
            return self._dispatch
        raise AttributeError(name)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:  # fmt: skip
        """The standard library's answer to a request line or headers it cannot parse (a
        path over its 64 KiB line: 414; a control character: 400; too many headers: 431; an
        HTTP/2 request line: 505), every one the client's ``InvalidMessage``,
        in the JSON error shape instead of its HTML page (found by probes), with a status
        line even when the request line never said HTTP/1.x; the connection is closed, as
        the standard library does."""
        phrase = self.responses.get(code, ("Error", ""))[0]
        text = f"{phrase}: {message}" if message and message != phrase else phrase
        self.close_connection = True
        if self.request_version == self.default_request_version:
            self.request_version = self.protocol_version  # a status line and headers, not 0.9
        self._respond(json_response(code, {"error": "InvalidMessage", "message": text}), close=True)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        log.debug("%s %s", self.address_string(), format % args)
