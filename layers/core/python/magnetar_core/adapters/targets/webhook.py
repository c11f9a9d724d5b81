"""Webhook target: one signed HTTP POST per batch (``urllib``, no extra dependency).

Headers: ``Content-Type: application/json``, ``X-Magnetar-Timestamp`` (epoch ms) and
``X-Magnetar-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">`` with the
trigger's secret. Any HTTP answer is returned (non-2xx included: the delivery service
retries the batch); no answer within ``timeout_ms`` or no connection raises TargetFailed.
"""

from __future__ import annotations

import urllib.error
import urllib.request

from magnetar_core.domain.triggers.records import (
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    TargetAnswer,
    TargetFailed,
    signature,
)
from magnetar_core.domain.triggers.spec import Target

MAX_ANSWER_BYTES = 1024 * 1024
"""At most this much of an answer is read (a batchItemFailures report is far smaller)."""


class WebhookTarget:
    """POSTs batches to webhook URLs, waiting at most ``timeout_ms`` for an answer."""

    def __init__(self, timeout_ms: int = 30_000) -> None:
        self.timeout_ms = timeout_ms

    def invoke(self, target: Target, body: bytes, timestamp_ms: int) -> TargetAnswer:
        """POST ``body`` to ``target.url`` signed at ``timestamp_ms``; raises TargetFailed."""
        if target.url is None or target.secret is None:
            raise TargetFailed("A webhook target needs a url and a secret")
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
            with urllib.request.urlopen(request, timeout=self.timeout_ms / 1000) as response:
                return TargetAnswer(response.status, response.read(MAX_ANSWER_BYTES))
        except urllib.error.HTTPError as error:
            return TargetAnswer(error.code, error.read(MAX_ANSWER_BYTES))
        except (OSError, ValueError) as error:  # URLError, timeouts, refused connections
            raise TargetFailed(f"Webhook {target.url} did not answer: {error}") from error
