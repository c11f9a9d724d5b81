"""HTTP transport: a ``requests.Session`` wrapper (timeouts, auth, error mapping, switching
deployments); the consumer's long polls are ``magnetar._transport.long_poll``."""

from __future__ import annotations

import json
import logging
import threading
import weakref
from collections.abc import Mapping
from typing import Any, Protocol

import requests
from requests.adapters import HTTPAdapter

from magnetar import exceptions as exc

__all__ = ["Interruptible", "Transport", "decode_body", "error_from_response"]


class Interruptible(Protocol):
    """What ``switch`` interrupts: an in-flight long poll (``long_poll.LongPoll``), which
    builds on this module and so is not imported by it."""

    def interrupt(self) -> None: ...


_BY_STATUS: dict[int, type[exc.PulsarException]] = {
    401: exc.AuthenticationError,
    403: exc.AuthorizationError,
    413: exc.MessageTooBig,
    429: exc.TooManyRequests,
    503: exc.ServiceUnitNotReady,
    504: exc.Timeout,
}


def error_from_response(
    status: int, body: bytes, method: str, path: str, retry_after: str | None = None
) -> exc.PulsarException:
    """Map an error response: ``{"error": name, "message": ...}`` names the exception class;
    other bodies are mapped by status (unknown -> ``UnknownError``). The wait the service
    asks for (``retryAfterMs`` in the body, else the ``retry_after`` header's seconds) is the
    exception's ``retry_after``."""
    try:
        doc = json.loads(body)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and isinstance(doc.get("error"), str):
        error = exc.exception_for(
            doc["error"], str(doc.get("message", "")), doc.get("retryAfterMs")
        )
    else:
        text = body[:300].decode("utf-8", "replace").strip()
        cls = _BY_STATUS.get(status, exc.UnknownError)
        error = cls(f"HTTP {status} from {method} {path}: {text}")
    if error.retry_after is None and retry_after is not None:
        error.retry_after = _seconds(retry_after)
    return error


def _seconds(header: str) -> float | None:
    """A Retry-After header's delay in seconds (the HTTP-date form is not used by the
    service: None)."""
    try:
        return max(0.0, float(header.strip()))
    except ValueError:
        return None


def decode_body(body: bytes, content_type: str) -> Any:
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

    ``switch`` points it at another deployment (cluster failover, ``magnetar._transport.failover``):
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
        self.provider: Any = None
        """The client's ``ServiceInfoProvider``, if any: kept alive as long as the transport
        (it follows the deployments while producers or consumers live, even without the
        client), closed with it."""
        self._polls: weakref.WeakSet[Interruptible] = weakref.WeakSet()
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

    def register_poll(self, poll: Interruptible) -> None:
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
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        """Send one request to ``path`` (relative to the service URL); return the decoded body.

        Raises:
            ConnectError: the service cannot be reached.
            Timeout: no response within ``timeout`` (default: the operation timeout).
            PulsarException: the server's error, mapped by name.
        """
        resp = self._send(method, path, json_body, data, content_type, timeout, headers)
        return decode_body(resp.content, resp.headers.get("Content-Type", ""))

    def call_raw(self, method: str, path: str) -> tuple[bytes, dict[str, str]]:
        """Send one request without a body; return the body's bytes and the response
        headers (names lower-case), for answers that are not JSON (a peeked message).
        Raises as ``call``."""
        resp = self._send(method, path, None, None, None, None, None)
        return resp.content, {k.lower(): v for k, v in resp.headers.items()}

    def _send(
        self,
        method: str,
        path: str,
        json_body: Any,
        data: bytes | None,
        content_type: str | None,
        timeout: float | None,
        extra_headers: Mapping[str, str] | None,
    ) -> requests.Response:
        if self._closed:
            raise exc.AlreadyClosed("the client is closed")
        with self._switch_lock:  # one deployment's URL, credentials and CA together
            base_url, auth, verify = self.base_url, self.authentication, self.verify
        headers = {} if auth is None else auth._headers()
        headers.update(extra_headers or {})
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
            retry_after = resp.headers.get("Retry-After")
            raise error_from_response(resp.status_code, resp.content, method, path, retry_after)
        return resp

    def close(self) -> None:
        """Close pooled connections and the provider; later calls raise ``AlreadyClosed``."""
        self._closed = True
        self._session.close()
        if self.provider is not None:
            self.provider.close()
