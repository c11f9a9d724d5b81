"""The delivery contract of triggers, pure: the records JSON a target receives, the webhook
signature, and what a target's answer says about each message.

A batch is ``{"records": [{"messageId", "topic", "key", "orderingKey", "payload",
"properties", "publishTime", "eventTime", "redeliveryCount"}]}`` (payload and orderingKey in
base64; key and orderingKey null when absent; ``"encrypted": true`` for an end-to-end
encrypted entry, whose payload stays encrypted). An answer may carry
``{"batchItemFailures": [{"itemIdentifier": "<messageId>"}]}``: those are retried, the rest
acknowledged.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

SIGNATURE_HEADER = "X-Magnetar-Signature"
"""``sha256=<hex HMAC-SHA256 of "<timestamp>.<body>" with the webhook's secret>``."""
TIMESTAMP_HEADER = "X-Magnetar-Timestamp"
"""Epoch milliseconds when the request was signed (receivers refuse old ones: replay)."""


class TargetFailed(Exception):
    """A target could not take a batch: unreachable, timed out, or it raised (the whole
    batch is retried)."""


@dataclass(frozen=True)
class TriggerRecord:
    """One message as a target sees it (times in epoch ms; eventTime 0 when unset)."""

    message_id: str
    topic: str
    key: str | None
    ordering_key: bytes | None
    payload: bytes
    properties: Mapping[str, str]
    publish_time_ms: int
    event_time_ms: int
    redelivery_count: int
    encrypted: bool = False
    """An end-to-end encrypted entry: ``payload`` is its stored, encrypted section (the
    service has no key); the record stands for the whole entry (``"encrypted": true``)."""

    def to_json(self) -> dict[str, object]:
        extra: dict[str, object] = {"encrypted": True} if self.encrypted else {}
        return extra | {
            "messageId": self.message_id,
            "topic": self.topic,
            "key": self.key,
            "orderingKey": (
                base64.b64encode(self.ordering_key).decode() if self.ordering_key else None
            ),
            "payload": base64.b64encode(self.payload).decode(),
            "properties": dict(self.properties),
            "publishTime": self.publish_time_ms,
            "eventTime": self.event_time_ms,
            "redeliveryCount": self.redelivery_count,
        }


def batch_body(records: Sequence[TriggerRecord]) -> bytes:
    """The request body (UTF-8 JSON) of one batch."""
    return json.dumps({"records": [r.to_json() for r in records]}, separators=(",", ":")).encode()


def signature(secret: str, timestamp_ms: int, body: bytes) -> str:
    """The ``X-Magnetar-Signature`` value: ``sha256=`` and the hex HMAC-SHA256, keyed by
    ``secret``, of ``<timestamp_ms>.`` followed by the body bytes."""
    mac = hmac.new(secret.encode(), f"{timestamp_ms}.".encode() + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def verify(secret: str, timestamp_ms: int, body: bytes, header: str) -> bool:
    """Whether ``header`` is the signature of ``body`` at ``timestamp_ms`` (constant time)."""
    return hmac.compare_digest(signature(secret, timestamp_ms, body), header)


@dataclass(frozen=True)
class TargetAnswer:
    """What a target answered: an HTTP status (a function's normal return: 200) and body."""

    status: int
    body: bytes = b""

    @property
    def succeeded(self) -> bool:
        return 200 <= self.status < 300


def failed_items(answer: TargetAnswer, delivered: Sequence[str]) -> set[str] | None:
    """The message ids a successful answer reports as failed (``batchItemFailures``),
    among ``delivered``; None when the whole batch failed: a non-2xx status, or a
    ``batchItemFailures`` naming an id that was not in the batch or malformed (as Lambda
    treats a malformed report: the whole batch is retried). A body that is not JSON, or
    JSON without ``batchItemFailures``, is a full success."""
    if not answer.succeeded:
        return None
    try:
        document = json.loads(answer.body) if answer.body.strip() else None
    except ValueError:
        return set()
    if not isinstance(document, Mapping) or document.get("batchItemFailures") is None:
        return set()
    failures = document["batchItemFailures"]
    if not isinstance(failures, list):
        return None
    ids: set[str] = set()
    known = set(delivered)
    for item in failures:
        ident = item.get("itemIdentifier") if isinstance(item, Mapping) else None
        if not isinstance(ident, str) or ident not in known:
            return None
        ids.add(ident)
    return ids
