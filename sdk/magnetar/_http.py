"""HTTP transport: a ``requests.Session`` wrapper (timeouts, auth, error mapping) and
``LongPoll``, an abortable long-poll POST for the consumer's receive loop."""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import socket
import ssl
import threading
import weakref
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter

from . import exceptions as exc

__all__ = ["LongPoll", "Transport", "error_from_response"]

_BY_STATUS: dict[int, type[exc.PulsarException]] = {
    401: exc.AuthenticationError,
    403: exc.AuthorizationError,
    413: exc.MessageTooBig,
    429: exc.TooManyRequests,
    503: exc.ServiceUnitNotReady,
    504: exc.Timeout,
}


def error_from_response(status: int, body: bytes, method: str, path: str) -> exc.PulsarException:
    """Map an error response: ``{"error": name, "message": ...}`` names the exception class;
    other bodies are mapped by status (unknown -> ``UnknownError``)."""
    try:
        doc = json.loads(body)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and isinstance(doc.get("error"), str):
        return exc.exception_for(doc["error"], str(doc.get("message", "")))
    text = body[:300].decode("utf-8", "replace").strip()
    cls = _BY_STATUS.get(status, exc.UnknownError)
    return cls(f"HTTP {status} from {method} {path}: {text}")


def _decode(body: bytes, content_type: str) -> Any:
    if not body:
        return None
    if "json" in content_type:
        try:
            return json.loads(body)
        except ValueError as e:
            raise exc.UnknownError(f"the server sent invalid JSON: {e}") from None
    return body.decode("utf-8", "replace")


class Transport:
    """Calls the Magnetar HTTP API. Thread-safe; shared by a client and its producers and
    consumers (so those keep working after the ``Client`` object is dropped).

    ``switch`` points it at another deployment (cluster failover, ``magnetar._failover``):
    later requests go there, in-flight long polls are interrupted, and ``generation`` counts
    the switches so producers and consumers know to register again there."""

    def __init__(
        self,
        base_url: str,
        *,
        authentication: Any = None,
        operation_timeout: float = 30.0,
        connect_timeout: float = 10.0,
        verify: bool | str = True,
        cert: str | tuple[str, str] | None = None,
        logger: logging.Logger | None = None,
    ) -> None:
        """Timeouts in seconds; ``verify`` and ``cert`` as requests' (CA bundle or on/off,
        client certificate ``path`` or ``(cert_path, key_path)``), also used by ``LongPoll``."""
        self.base_url = base_url.rstrip("/")
        self.authentication = authentication
        self.operation_timeout = operation_timeout
        self.connect_timeout = connect_timeout
        self.verify = verify
        self.cert = cert
        self.log = logger or logging.getLogger("magnetar")
        self._session = requests.Session()
        adapter = HTTPAdapter(pool_connections=4, pool_maxsize=64)
        self._session.mount("http://", adapter)
        self._session.mount("https://", adapter)
        self._closed = False
        self.generation = 0
        """How many times ``switch`` moved this transport to another deployment."""
        self.keep: Any = None
        """An object kept alive as long as the transport (the client's ServiceInfoProvider:
        it follows the clusters while producers or consumers live, even without the client)."""
        self._polls: weakref.WeakSet[LongPoll] = weakref.WeakSet()
        self._switch_lock = threading.Lock()

    def switch(self, base_url: str, authentication: Any, verify: bool | str) -> None:
        """Send later requests to ``base_url`` with ``authentication`` and ``verify`` (as in
        ``__init__``), bump ``generation``, and interrupt in-flight long polls (they fail
        with ConnectError, retried on the new URL)."""
        with self._switch_lock:
            self.base_url = base_url.rstrip("/")
            self.authentication = authentication
            self.verify = verify
            self.generation += 1
            polls = list(self._polls)
        self.log.warning("switched to the service at %s", self.base_url)
        for poll in polls:
            poll.interrupt()

    def register_poll(self, poll: LongPoll) -> None:
        """Interrupt ``poll`` on each ``switch`` (while it lives)."""
        with self._switch_lock:
            self._polls.add(poll)

    def headers(self) -> dict[str, str]:
        """Headers for every request (authentication)."""
        if self.authentication is None:
            return {}
        return self.authentication._headers()

    def call(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        data: bytes | None = None,
        content_type: str | None = None,
        timeout: float | None = None,
    ) -> Any:
        """Send one request to ``path`` (relative to the service URL); return the decoded body.

        Raises:
            ConnectError: the service cannot be reached.
            Timeout: no response within ``timeout`` (default: the operation timeout).
            PulsarException: the server's error, mapped by name.
        """
        resp = self._send(method, path, json_body, data, content_type, timeout)
        return _decode(resp.content, resp.headers.get("Content-Type", ""))

    def call_raw(self, method: str, path: str) -> tuple[bytes, dict[str, str]]:
        """Send one request without a body; return the body's bytes and the response
        headers (names lower-case), for answers that are not JSON (a peeked message).
        Raises as ``call``."""
        resp = self._send(method, path, None, None, None, None)
        return resp.content, {k.lower(): v for k, v in resp.headers.items()}

    def _send(
        self,
        method: str,
        path: str,
        json_body: Any,
        data: bytes | None,
        content_type: str | None,
        timeout: float | None,
    ) -> requests.Response:
        if self._closed:
            raise exc.AlreadyClosed("the client is closed")
        with self._switch_lock:  # one deployment's URL, credentials and CA together
            base_url, auth, verify = self.base_url, self.authentication, self.verify
        headers = {} if auth is None else auth._headers()
        if content_type:
            headers["Content-Type"] = content_type
        url = base_url + path
        read_timeout = self.operation_timeout if timeout is None else timeout
        try:
            resp = self._session.request(
                method,
                url,
                json=json_body,
                data=data,
                headers=headers,
                timeout=(self.connect_timeout, read_timeout or None),
                verify=verify,
                cert=self.cert,
            )
        except requests.exceptions.ConnectTimeout as e:
            raise exc.ConnectError(f"cannot connect to {base_url}: {e}") from None
        except requests.exceptions.Timeout:
            raise exc.Timeout(f"{method} {path} timed out after {read_timeout} s") from None
        except requests.exceptions.RequestException as e:
            raise exc.ConnectError(f"cannot reach {base_url}: {e}") from None
        if resp.status_code >= 400:
            raise error_from_response(resp.status_code, resp.content, method, path)
        return resp

    def close(self) -> None:
        """Close pooled connections; later calls raise ``AlreadyClosed``."""
        self._closed = True
        self._session.close()


class LongPoll:
    """One keep-alive connection for a sequence of long-poll POSTs, abortable from another
    thread: ``abort()`` shuts the socket down so a blocked ``post`` returns at once."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport
        self._lock = threading.Lock()
        self._conn: http.client.HTTPConnection | None = None
        self._conn_url = ""  # the service URL the open connection goes to
        self._aborted = False
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
            return _decode(data, resp.getheader("Content-Type", ""))
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

    def abort(self) -> None:
        """Make the in-flight and every later ``post`` raise ``AlreadyClosed`` at once."""
        with self._lock:
            self._aborted = True
            self._shutdown()

    def interrupt(self) -> None:
        """Make the in-flight ``post`` fail now (``ConnectError``, or one retry on a new
        connection); later posts connect again (the transport switched services)."""
        with self._lock:
            self._shutdown()

    def _shutdown(self) -> None:
        conn = self._conn
        if conn is not None and conn.sock is not None:
            with contextlib.suppress(OSError):
                conn.sock.shutdown(socket.SHUT_RDWR)
