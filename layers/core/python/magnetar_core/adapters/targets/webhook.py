"""Webhook target: one signed HTTP POST per batch (``urllib``, no extra dependency).

Headers: ``Content-Type: application/json``, ``X-Magnetar-Timestamp`` (epoch ms) and
``X-Magnetar-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">`` with the
trigger's secret. Any HTTP answer is returned (non-2xx included: the delivery service
retries the batch); no answer within ``timeout_ms`` or no connection raises TargetFailed.
Unless ``allow_private``, a host that resolves to a non-public address is refused before
any byte is sent (``domain.triggers.webhooks``; redirects are not followed).
"""

from __future__ import annotations

import socket
import urllib.error
import urllib.request
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


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect is an answer (3xx: the batch is retried), never followed: it could lead
    to a private address."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirects)


class WebhookTarget:
    """POSTs batches to webhook URLs, waiting at most ``timeout_ms`` for an answer;
    private addresses only when ``allow_private``."""

    def __init__(self, timeout_ms: int = 30_000, allow_private: bool = False) -> None:
        self.timeout_ms = timeout_ms
        self.allow_private = allow_private

    def _check_host(self, url: str) -> None:
        host = urlsplit(url).hostname or ""
        try:
            addresses = {info[4][0] for info in socket.getaddrinfo(host, None)}
        except OSError as error:
            raise TargetFailed(f"Webhook host {host} does not resolve: {error}") from error
        private = sorted(str(a) for a in addresses if not public_address(str(a)))
        if private:
            raise TargetFailed(f"Webhook host {host} resolves to private addresses {private}")

    def invoke(self, target: Target, body: bytes, timestamp_ms: int) -> TargetAnswer:
        """POST ``body`` to ``target.url`` signed at ``timestamp_ms``; raises TargetFailed."""
        if target.url is None or target.secret is None:
            raise TargetFailed("A webhook target needs a url and a secret")
        if not self.allow_private:
            self._check_host(target.url)
        request = urllib.request.Request(
            target.url,
            data=body,
            method="POST",
            headers={
                "Content-Type": "application/json",
                TIMESTAMP_HEADER: str(timestamp_ms),
                SIGNATURE_HEADER: signature(target.secret, timestamp_ms, body),
            },
        )
        try:
            with _OPENER.open(request, timeout=self.timeout_ms / 1000) as response:
                return TargetAnswer(response.status, response.read(MAX_ANSWER_BYTES))
        except urllib.error.HTTPError as error:
            return TargetAnswer(error.code, error.read(MAX_ANSWER_BYTES))
        except (OSError, ValueError) as error:  # URLError, timeouts, refused connections
            raise TargetFailed(f"Webhook {target.url} did not answer: {error}") from error
