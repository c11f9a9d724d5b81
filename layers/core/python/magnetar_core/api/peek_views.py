"""A peeked entry as Pulsar's admin REST answers it (peek, examinemessage, get by id): the
payload as the body, the message's metadata in ``X-Pulsar-*`` headers.

A single message: the body is its payload (``application/octet-stream``), with
``X-Pulsar-Message-ID`` (``ledger:entry``, as Pulsar's position), ``X-Pulsar-publish-time``
and ``X-Pulsar-event-time`` (ISO 8601 with milliseconds, UTC), ``X-Pulsar-producer-name``,
``X-Pulsar-sequence-id``, ``X-Pulsar-partition-key`` (a plain ASCII key), ``X-Pulsar-null-value``, every
property as ``X-Pulsar-PROPERTY-<name>`` (when name and value are plain ASCII) and all of
them as the JSON object ``X-Pulsar-PROPERTY`` (Pulsar's newer form). A batch: the body is
the whole entry (``application/vnd.magnetar.entry``; ``magnetar_wire.decode_entry`` splits
it, as pulsar-admin splits Pulsar's batch frame), with ``X-Pulsar-num-batch-message`` and
``X-Pulsar-batch-size`` (bytes). An end-to-end encrypted entry adds
``X-Pulsar-Is-Encrypted: true``; a single message's body is then its stored payload section
(compressed, encrypted: the service has no key), its metadata headers as above.

With ``Accept: application/json`` (the console asks so) the answer is the entry decoded for
people instead: ``{"messageId", "batched", "encrypted", "messages": [...]}``, one object
per message with its batch index, payload in base64 (and as ``text`` when it is UTF-8),
key, properties and times; the ``X-Pulsar-*`` headers are the same.
"""

from __future__ import annotations

import contextlib
import json
import re
from datetime import UTC, datetime

from aws_lambda_powertools.event_handler import Response

from magnetar_core.api.http import ENTRY_CONTENT_TYPE
from magnetar_core.api.views import message_fields
from magnetar_core.services.entries import opaque_entry
from magnetar_core.services.peeking import Peeked
from magnetar_wire import decode_entry, read_metadata
from magnetar_wire.model import DecodedEntry

_PLAIN = re.compile(r"^[\x21-\x7e][\x20-\x7e]*$")


def iso_ms(epoch_ms: int) -> str:
    """Epoch milliseconds as Pulsar's DateFormatter writes them: ``2026-11-24T22:59:24.123Z``."""
    moment = datetime.fromtimestamp(epoch_ms / 1000, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{epoch_ms % 1000:03d}Z"


def message_response(peeked: Peeked, as_json: bool = False) -> Response:
    """The 200 answer for one peeked entry (see the module's docstring); ``as_json``: the
    decoded shape for people."""
    meta = read_metadata(peeked.data)
    encrypted = meta.encryption is not None
    entry = opaque_entry(peeked.data, meta) if encrypted else decode_entry(peeked.data)
    item = peeked.item
    first = entry.messages[0]
    headers = {
        "X-Pulsar-Message-ID": f"{peeked.ref.ledger_id}:{item.entry_id}",
        "X-Pulsar-publish-time": iso_ms(first.publish_time_ms),
        "X-Pulsar-producer-name": entry.producer_name,
        "X-Pulsar-sequence-id": str(first.sequence_id),
    }
    if encrypted:
        headers["X-Pulsar-Is-Encrypted"] = "true"
    if as_json:
        return Response(200, "application/json", json.dumps(_decoded(headers, entry)), headers)
    if entry.header.batched:
        headers["X-Pulsar-num-batch-message"] = str(entry.header.count)
        headers["X-Pulsar-batch-size"] = str(len(peeked.data))
        return Response(200, ENTRY_CONTENT_TYPE, peeked.data, headers)
    if first.event_time_ms:
        headers["X-Pulsar-event-time"] = iso_ms(first.event_time_ms)
    if first.key is not None and _PLAIN.fullmatch(first.key):
        headers["X-Pulsar-partition-key"] = first.key
    if first.null_value:
        headers["X-Pulsar-null-value"] = "true"
    for name, value in first.properties.items():
        if _PLAIN.fullmatch(name) and (value == "" or _PLAIN.fullmatch(value)):
            headers[f"X-Pulsar-PROPERTY-{name}"] = value
    headers["X-Pulsar-PROPERTY"] = json.dumps(dict(first.properties), sort_keys=True)
    return Response(200, "application/octet-stream", first.payload, headers)


def wants_json(accept: str | None) -> bool:
    """Whether an ``Accept`` header asks for JSON before any other type (the console)."""
    first = (accept or "").split(",")[0].split(";")[0].strip().lower()
    return first == "application/json"


def _decoded(headers: dict[str, str], entry: DecodedEntry) -> dict:
    encrypted = entry.encryption is not None
    messages = []
    for index, m in enumerate(entry.messages):
        item: dict = {
            "batchIndex": index if entry.header.batched and not encrypted else -1,
            **message_fields(m),
        }
        if not encrypted:
            with contextlib.suppress(UnicodeDecodeError):
                item["text"] = m.payload.decode("utf-8")
        messages.append(item)
    return {
        "messageId": headers["X-Pulsar-Message-ID"],
        "producerName": entry.producer_name,
        "batched": entry.header.batched,
        "encrypted": encrypted,
        "messages": messages,
    }
