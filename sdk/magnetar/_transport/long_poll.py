"""``LongPoll``: an abortable long-poll POST for the consumer's receive loop, on one
keep-alive connection to the transport's current deployment."""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import ssl
import threading
from typing import Any
from urllib.parse import urlsplit

from magnetar import exceptions as exc

from .http import Transport, decode_body, error_from_response

__all__ = ["LongPoll"]


class LongPoll:
    """One keep-alive connection for a sequence of long-poll POSTs, abortable from another
    thread: ``abort()`` shuts the socket down so a blocked ``post`` returns at once."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport
        self._lock = threading.Lock()
        self._conn: http.client.HTTPConnection | None = None
        self._conn_url = ""  # the service URL the open connection goes to
        self._aborted = False
        self._woken = threading.Event()  # set by interrupt / abort: a pause ends at once
        transport.register_poll(self)

    def _new_conn(self, url: str, timeout: float) -> http.client.HTTPConnection:
        parts = urlsplit(url)
        https = parts.scheme == "https"
        host, port = parts.hostname or "localhost", parts.port or (443 if https else 80)
        if not https:
            return http.client.HTTPConnection(host, port, timeout=timeout)
        ctx = ssl.create_default_context(
            cafile=self._t.verify if isinstance(self._t.verify, str) else None
        )
        if self._t.verify is False:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        cert = self._t.cert
        if cert is not None:
            ctx.load_cert_chain(*((cert,) if isinstance(cert, str) else cert))
        return http.client.HTTPSConnection(host, port, timeout=timeout, context=ctx)

    def post(self, path: str, body: Any, read_timeout: float) -> Any:
        """POST ``body`` as JSON and return the decoded response.

        Raises:
            AlreadyClosed: ``abort()`` was called (before or during the request).
            ConnectError / Timeout / PulsarException: as ``Transport.call``.
        """
        payload = json.dumps(body).encode()
        headers = {"Content-Type": "application/json", **self._t.headers()}
        for attempt in (0, 1):
            conn, reused, url = self._connect()
            try:
                conn.sock.settimeout(read_timeout)
                conn.request("POST", urlsplit(url).path.rstrip("/") + path, body=payload,
                             headers=headers)  # fmt: skip
                resp = conn.getresponse()
                data = resp.read()
            except TimeoutError:
                self._drop()
                raise exc.Timeout(f"POST {path} timed out after {read_timeout} s") from None
            except (OSError, http.client.HTTPException) as e:
                self._drop()
                if self._aborted:
                    raise exc.AlreadyClosed("the consumer is closed") from None
                switched = url != self._t.base_url  # interrupted by Transport.switch
                if (reused and attempt == 0 and not switched
                        and not isinstance(e, ConnectionRefusedError)):  # fmt: skip
                    continue  # the server closed an idle keep-alive connection: retry once
                raise exc.ConnectError(f"cannot reach {self._t.base_url}: {e}") from None
            if resp.status >= 400:
                raise error_from_response(resp.status, data, "POST", path)
            return decode_body(data, resp.getheader("Content-Type", ""))
        raise AssertionError("unreachable")

    def _connect(self) -> tuple[http.client.HTTPConnection, bool, str]:
        """The open connection (reused=True) or a new one, to the transport's current
        service URL, and that URL."""
        url = self._t.base_url
        with self._lock:
            if self._aborted:
                raise exc.AlreadyClosed("the consumer is closed")
            conn = self._conn if self._conn_url == url else None
        if conn is not None and conn.sock is not None:
            return conn, True, url
        self._drop()  # a connection to the service the transport switched away from
        try:  # a bad client certificate file fails here too (OSError)
            conn = self._new_conn(url, self._t.connect_timeout)
            conn.connect()
        except OSError as e:
            raise exc.ConnectError(f"cannot connect to {url}: {e}") from None
        with self._lock:
            if self._aborted:
                conn.close()
                raise exc.AlreadyClosed("the consumer is closed")
            self._conn, self._conn_url = conn, url
        return conn, False, url

    def _drop(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def pause(self, seconds: float) -> None:
        """Wait ``seconds`` before the next ``post`` (after a failure), less if the poll is
        interrupted (the transport switched services: try the new one at once) or aborted,
        during the pause or since the last one."""
        self._woken.wait(seconds)
        with self._lock:
            if not self._aborted:
                self._woken.clear()

    def abort(self) -> None:
        """Make the in-flight and every later ``post`` raise ``AlreadyClosed`` at once (and
        a ``pause`` end)."""
        with self._lock:
            self._aborted = True
            self._shutdown()
        self._woken.set()

    def interrupt(self) -> None:
        """Make the in-flight ``post`` fail now (``ConnectError``, or one retry on a new
        connection) and a ``pause`` end; later posts connect again (the transport switched
        services)."""
        with self._lock:
            self._shutdown()
        self._woken.set()

    def _shutdown(self) -> None:
        conn = self._conn
        if conn is not None and conn.sock is not None:
            with contextlib.suppress(OSError):
                conn.sock.shutdown(socket.SHUT_RDWR)
