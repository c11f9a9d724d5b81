"""Webhook target: one signed HTTP POST per batch (``http.client``, no extra dependency).

Headers: ``Content-Type: application/json``, ``X-Magnetar-Timestamp`` (epoch ms) and
``X-Magnetar-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">`` with the
trigger's secret. Any HTTP answer is returned (non-2xx included: the delivery service
retries the batch); no answer within ``timeout_ms`` or no connection raises TargetFailed.
Unless ``allow_private``, a host that resolves to a non-public address is refused before
any byte is sent (``domain.triggers.webhooks``), and the connection goes to the address that
was checked; redirects are not followed.
"""

from __future__ import annotations

import http.client
import socket
import ssl
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from magnetar_core.domain.triggers.records import (
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    TargetAnswer,
    TargetFailed,
    signature,
)
from magnetar_core.domain.triggers.spec import Target
from magnetar_core.domain.triggers.webhooks import public_address

MAX_ANSWER_BYTES = 1024 * 1024
"""At most this much of an answer is read (a batchItemFailures report is far smaller)."""

Resolve = Callable[..., list[Any]]
"""``socket.getaddrinfo``'s shape: (host, port, ...) -> [(family, type, proto, name, addr)]."""


class WebhookTarget:
    """POSTs batches to webhook URLs, waiting at most ``timeout_ms`` for an answer;
    private addresses only when ``allow_private``. The host is looked up once, by
    ``resolve``: the address checked is the address connected to (TLS still verifies the
    certificate for the URL's host name), so a DNS answer that changes between the check
    and the connection (rebinding) cannot reach a private address. Redirects are answers
    (3xx: the batch is retried), never followed."""

    def __init__(
        self, timeout_ms: int = 30_000, allow_private: bool = False,
        resolve: Resolve = socket.getaddrinfo,
    ) -> None:  # fmt: skip
        self.timeout_ms = timeout_ms
        self.allow_private = allow_private
        self._resolve = resolve

    def _address(self, host: str, port: int) -> str:
        """The one address to connect to; raises TargetFailed (no address, or a private one
        when private webhooks are not allowed)."""
        try:
            infos = self._resolve(host, port, 0, socket.SOCK_STREAM)
        except OSError as error:
            raise TargetFailed(f"Webhook host {host} does not resolve: {error}") from error
        addresses = [str(info[4][0]) for info in infos]
        if not addresses:
            raise TargetFailed(f"Webhook host {host} does not resolve to any address")
        if not self.allow_private:
            private = sorted({a for a in addresses if not public_address(a)})
            if private:
                raise TargetFailed(f"Webhook host {host} resolves to private addresses {private}")
        return addresses[0]

    def _connection(self, url: str) -> tuple[http.client.HTTPConnection, str]:
        """A connection pinned to the checked address, and the request's path and query."""
        parts = urlsplit(url)
        host = parts.hostname or ""
        secure = parts.scheme == "https"
        if parts.scheme not in ("http", "https") or not host:
            raise TargetFailed(f"Webhook URL {url} is not an http(s) URL")
        port = parts.port or (443 if secure else 80)
        address = self._address(host, port)
        timeout_s = self.timeout_ms / 1000
        connection: http.client.HTTPConnection
        if secure:
            context = ssl.create_default_context()
            connection = http.client.HTTPSConnection(host, port, timeout=timeout_s, context=context)
        else:
            connection = http.client.HTTPConnection(host, port, timeout=timeout_s)

        def pinned(_where: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
            return socket.create_connection((address, port), *args, **kwargs)

        connection._create_connection = pinned  # type: ignore[attr-defined]
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return connection, path

    def invoke(self, target: Target, body: bytes, timestamp_ms: int) -> TargetAnswer:
        """POST ``body`` to ``target.url`` signed at ``timestamp_ms``; raises TargetFailed."""
        if target.url is None or target.secret is None:
            raise TargetFailed("A webhook target needs a url and a secret")
        connection, path = self._connection(target.url)
        headers = {
            "Content-Type": "application/json",
            TIMESTAMP_HEADER: str(timestamp_ms),
            SIGNATURE_HEADER: signature(target.secret, timestamp_ms, body),
        }
        try:
            connection.request("POST", path, body=body, headers=headers)
            response = connection.getresponse()
            return TargetAnswer(response.status, response.read(MAX_ANSWER_BYTES))
        except (OSError, ValueError, http.client.HTTPException) as error:
            raise TargetFailed(f"Webhook {target.url} did not answer: {error}") from error
        finally:
            connection.close()
