"""Turning receive responses into messages: entries inline or fetched by presigned URL,
decoded with the shared codec, delivery masks applied, chunked messages reassembled."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

import requests

from magnetar import exceptions as exc
from magnetar.encryption import EncryptionContext
from magnetar.message import Message, MessageId
from magnetar.schema.schema import SchemaInfo
from magnetar.schema.schema_auto import AutoConsumeSchema
from magnetar.schema.schema_avro import AvroSchema
from magnetar_wire import EncryptedEntry, EntryFormatError, decode_entry

from .encrypted import undecryptable

if TYPE_CHECKING:
    from .core import Core
    from .sub import Sub


def fetch_entry_bytes(core: Core, sub: Sub, e: dict) -> bytes | None:
    """The entry's bytes: inline, or fetched from its presigned ``url`` (None: failed; the
    entry is nacked so it comes back)."""
    if e.get("data") is not None:
        return base64.b64decode(e["data"])
    error: Any = "no data and no url"
    headers = {}
    if e.get("length") is not None:  # the entry is a byte range of a segment object
        start = int(e.get("offset") or 0)
        headers["Range"] = f"bytes={start}-{start + int(e['length']) - 1}"
    for _ in range(3 if e.get("url") else 0):
        try:
            r = requests.get(e["url"], verify=core.t.verify, headers=headers,
                             timeout=(core.t.connect_timeout, core.t.operation_timeout))  # fmt: skip
            if r.status_code in (200, 206):
                return r.content
            error = f"HTTP {r.status_code}"
        except requests.exceptions.RequestException as err:
            error = err
    core.log.error("cannot fetch entry %s:%s on %s (%s); asking for redelivery",
                   e.get("ledgerId"), e.get("entryId"), sub.topic, error)  # fmt: skip
    text = f"{e.get('ledgerId')}:{e.get('entryId')}:{e.get('partition', sub.partition)}:-1"
    core.ack_tracker.redeliver_now(sub, [text], e.get("redeliveryCount"))
    return None


def _writer(core: Core, topic: str, version: int | None) -> SchemaInfo | None:
    """The writer's schema of a message for an ``AUTO_CONSUME`` or Avro consumer (else None)."""
    if version is None or not isinstance(core.schema, (AutoConsumeSchema, AvroSchema)):
        return None
    return core.writer_schemas.info(topic, version)


def decode_response(core: Core, sub: Sub, resp: Any) -> list[Message]:
    """The messages of one receive response (``format: entry``): entries decoded, delivery
    masks applied, chunks reassembled. Raises UnknownError for a malformed response."""
    entries = resp.get("entries") if isinstance(resp, dict) else None
    if not isinstance(entries, list):
        raise exc.UnknownError(f"unexpected receive response: {resp!r}")
    sub.chunks.expire()
    out: list[Message] = []
    for e in entries:
        try:
            raw = fetch_entry_bytes(core, sub, e)
            if raw is None:
                continue
            try:
                decoded = decode_entry(raw, decrypt=core.crypto.decrypt)
            except (EncryptedEntry, exc.CryptoError) as why:
                out += undecryptable(core, sub, e, raw, why)
                continue
        except (EntryFormatError, KeyError, ValueError) as err:
            core.log.error("dropping an undecodable entry %s:%s on %s: %s",
                           e.get("ledgerId"), e.get("entryId"), sub.topic, err)  # fmt: skip
            continue
        mask = e.get("batchIndexes")
        keep = None if mask is None else set(mask)
        topic = e.get("topic") or sub.topic
        partition = e.get("partition", sub.partition)
        context = None if decoded.encryption is None else EncryptionContext(
            decoded.encryption, decoded.header, failed=False)  # fmt: skip
        for i, m in enumerate(decoded.messages):
            if keep is not None and i not in keep:
                continue
            mid: MessageId = MessageId(partition, e["ledgerId"], e["entryId"],
                                       i if decoded.header.batched else -1)  # fmt: skip
            mid._topic = topic
            payload = m.payload
            if m.chunk is not None:
                whole = sub.chunks.add(decoded.producer_name, m, mid)
                if whole is None:
                    continue
                m, payload, mid = whole
            out.append(Message(
                payload, mid, topic=topic, properties=dict(m.properties),
                partition_key=m.key, ordering_key=m.ordering_key,
                publish_timestamp=m.publish_time_ms, event_timestamp=m.event_time_ms,
                redelivery_count=e.get("redeliveryCount", 0),
                producer_name=decoded.producer_name, sequence_id=m.sequence_id,
                null_value=m.null_value, schema=core.schema,
                schema_version=m.schema_version,
                writer_schema=_writer(core, topic, m.schema_version), encryption=context,
            ))  # fmt: skip
    return out
