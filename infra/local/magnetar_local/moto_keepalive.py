"""Keep-alive connections for moto's server: one TCP connection and one server thread per
client connection, not per request.

werkzeug's development server (which moto's server runs on) answers every request with
``Connection: close``: it cannot tell where a request's body ends, so after each answer it
reads whatever the client sent next and discards it. Every AWS call of the engine and the
tests then opened a new connection (botocore's pools reconnect: "Resetting dropped
connection"), and moto's server started a thread for it and waited up to 10 ms on the closed
socket.

``KeepAliveRequestHandler`` serves a request whose body is framed by ``Content-Length`` (or
that has none) itself: the application reads the body through a stream limited to that
length, whatever it leaves unread is read and dropped after the answer, and the connection
stays open when the answer is framed by its ``Content-Length`` and was sent whole. Anything
else (a chunked or ``Expect``-ing request, an answer without a length, an error in the
application) is served as werkzeug serves it, or answered and then closed. The answers are
moto's, byte for byte but for the ``Connection`` header (tests/unit/test_moto_keepalive.py).
werkzeug's per-request log line is formatted only when its logger takes INFO.
"""

from __future__ import annotations

import contextlib
import logging
import socket
from typing import IO, Any, cast

from moto.moto_server.werkzeug_app import MotoRequestHandler
from werkzeug.exceptions import InternalServerError
from werkzeug.serving import connection_dropped_errors
from werkzeug.wsgi import LimitedStream

_NO_BODY_STATUSES = frozenset({204, 304})


def request_body_length(headers: Any) -> int | None:
    """The length of a request's body when ``Content-Length`` (or its absence: none) frames
    it, else None (chunked, ``Expect: 100-continue``, several or malformed lengths)."""
    if headers.get("Transfer-Encoding") is not None or headers.get("Expect") is not None:
        return None
    values = headers.get_all("Content-Length") or []
    if not values:
        return 0
    text = values[0].strip()
    if len(values) > 1 or not text.isdigit() or not text.isascii():
        return None
    return int(text)


class _Answer:
    """One request's answer: WSGI's ``start_response`` and ``write``, headers sent at the
    first write; ``whole`` once exactly the announced body was sent."""

    def __init__(self, handler: KeepAliveRequestHandler, close: bool = False) -> None:
        self.handler = handler
        self.close = close
        self.status: str | None = None
        self.headers: list[tuple[str, str]] = []
        self.sent = False
        self.remaining: int | None = None  # body bytes still owed; None: no length given

    def start(self, status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        if exc_info is not None:
            try:
                if self.sent:
                    raise exc_info[1].with_traceback(exc_info[2])
            finally:
                exc_info = None
        self.status, self.headers = status, headers
        return self.write

    def write(self, data: bytes) -> None:
        assert self.status is not None, "write() before start_response"
        head = b"" if self.sent else self._head()
        if data and self.remaining is not None:
            self.remaining -= len(data)
        if head or data:
            self.handler.wfile.write(head + data)  # one segment: no wait on a delayed ACK

    def finish(self) -> None:
        if not self.sent:
            self.write(b"")
        self.handler.wfile.flush()

    @property
    def whole(self) -> bool:
        return self.sent and self.remaining == 0

    def _head(self) -> bytes:
        """The status line and headers (with werkzeug's log line), to send."""
        handler = self.handler
        code_text, _, message = (self.status or "").partition(" ")
        code = int(code_text)
        handler.send_response(code, message)
        length: int | None = None
        for name, value in self.headers:
            handler.send_header(name, value)
            if name.lower() == "content-length" and value.strip().isdigit():
                length = int(value)
        if handler.command == "HEAD" or code in _NO_BODY_STATUSES or 100 <= code < 200:
            length = 0
        if length is None or self.close:
            handler.send_header("Connection", "close")  # as werkzeug: no framing, no reuse
        self.remaining = length
        self.sent = True
        handler._headers_buffer.append(b"\r\n")
        head = b"".join(handler._headers_buffer)
        handler._headers_buffer = []
        return head


class KeepAliveRequestHandler(MotoRequestHandler):
    """moto's request handler with HTTP/1.1 keep-alive for requests and answers framed by
    ``Content-Length`` (see the module's docstring)."""

    _headers_buffer: list[bytes]  # http.server's, filled by send_response and send_header

    def setup(self) -> None:
        super().setup()
        # an answer left in two writes would wait for the client's delayed ACK (~40 ms)
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def run_wsgi(self) -> None:
        length = request_body_length(self.headers)
        if length is None:
            self.close_connection = True
            super().run_wsgi()
            return
        self.environ = environ = self.make_environ()
        body = LimitedStream(cast(IO[bytes], self.rfile), length)
        environ["wsgi.input"] = body
        answer = _Answer(self)
        try:
            self._execute(self.server.app, environ, answer)
        except connection_dropped_errors as error:
            self.close_connection = True
            self.connection_dropped(error, environ)
            return
        except Exception as error:
            self._fail(error, environ, answer)
            return
        if not answer.whole:
            self.close_connection = True
            return
        body.exhaust()  # what the application left unread: the next request starts after it

    @staticmethod
    def _execute(app: Any, environ: dict[str, Any], answer: _Answer) -> None:
        chunks = app(environ, answer.start)
        try:
            for data in chunks:
                answer.write(data)
            answer.finish()
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()

    def _fail(self, error: Exception, environ: dict[str, Any], answer: _Answer) -> None:
        """As werkzeug: a 500 when nothing was sent yet, the error logged; then closed."""
        self.close_connection = True
        if self.server.passthrough_errors:
            raise error
        if not answer.sent:
            with contextlib.suppress(Exception):  # as werkzeug: the 500 is best effort
                self._execute(InternalServerError(), environ, _Answer(self, close=True))
        from werkzeug.debug.tbtools import DebugTraceback

        trace = DebugTraceback(error).render_traceback_text()
        self.server.log("error", f"Error on request:\n{trace}")

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        if logging.getLogger("werkzeug").isEnabledFor(logging.INFO):
            super().log_request(code, size)


def keep_connections_alive() -> None:
    """Have ``moto.server.main`` serve with ``KeepAliveRequestHandler`` (idempotent)."""
    import moto.server

    moto.server.MotoRequestHandler = KeepAliveRequestHandler  # type: ignore[misc]


def serve(argv: list[str]) -> None:
    """moto's server (``moto.server.main`` with its arguments) on keep-alive connections,
    its requests' headers parsed without ``email`` (``magnetar_local.http_headers``)."""
    from magnetar_local import http_headers

    http_headers.install()
    keep_connections_alive()
    from moto.server import main

    main(argv)
