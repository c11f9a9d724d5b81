"""JSON shapes of the HTTP API: produce results, delivered entries, messages for people."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from magnetar_core.api.limits import INT64_MAX, MAX_PRODUCER_NAME_BYTES
from magnetar_core.domain.errors import InvalidMessage
from magnetar_core.services.entries import PublishResult, delivered_messages
from magnetar_core.services.produce.many import EntryFailure, ManyResult
from magnetar_core.services.subscriptions import ConsumerHandle, DeliveredEntry
from magnetar_core.services.uploads import Upload
from magnetar_wire import EntryFormatError, EntryMessage, encode_entry
from magnetar_wire.ids import format_message_id, parse_message_id


def publish_result(result: PublishResult) -> dict:
    return {
        "messageIds": list(result.message_ids),
        "ledgerId": result.ledger_id,
        "entryId": result.entry_id,
        "partition": result.partition,
        "topic": str(result.topic),
        "duplicate": result.duplicate,
    }


def publish_many_result(result: ManyResult) -> dict:
    """A multi-entry produce's answer: ``results`` in the body's order, each a produce
    result (``publish_result``) or ``{"error", "message", "status", "attempted"}`` (plus
    ``retryAfterMs`` when throttled), and ``committed``, how many entries were stored."""
    return {
        "results": [_entry_result(r) for r in result.results],
        "committed": result.committed,
    }


def _entry_result(result: PublishResult | EntryFailure) -> dict:
    if isinstance(result, PublishResult):
        return publish_result(result)
    doc: dict[str, Any] = {
        "error": result.code,
        "message": result.message,
        "status": result.status,
        "attempted": result.attempted,
    }
    if result.retry_after_ms is not None:
        doc["retryAfterMs"] = result.retry_after_ms
    return doc


def upload(started: Upload) -> dict:
    """The uploads route's answer: where to PUT the entry and what to produce with."""
    return {
        "uploadUrl": started.url,
        "entryRef": started.entry_ref,
        "expiresInSeconds": started.expires_s,
    }


def last_message_id(text: str | None) -> dict:
    """Pulsar's MessageIdData fields plus the text form; -1s for an empty topic."""
    ledger, entry, partition, batch = parse_message_id(text) if text else (-1, -1, -1, -1)
    return {
        "messageId": format_message_id(ledger, entry, partition, batch),
        "ledgerId": ledger,
        "entryId": entry,
        "partitionIndex": partition,
        "batchIndex": batch,
    }


def registration(reg) -> dict:
    return {
        "producerName": reg.producer_name,
        "epoch": reg.epoch,
        "lastSequenceId": reg.last_sequence_id,
        "maxMessageSize": reg.max_message_size_bytes,
        "deduplication": reg.deduplication,
        "leaseMs": reg.lease_ms,
        "topic": str(reg.topic),
    }


def consumer_handle(handle: ConsumerHandle) -> dict:
    return {
        "consumerId": handle.consumer_id,
        "consumerName": handle.consumer_name,
        "subscription": handle.subscription,
        "topic": str(handle.topic),
    }


def partitioned_stats(summed: dict, per_partition: bool) -> dict:
    """Pulsar's PartitionedTopicStats: each partition's stats under ``partitions`` only
    when ``perPartition`` is true (Pulsar's default)."""
    if per_partition:
        return summed
    return {name: value for name, value in summed.items() if name != "partitions"}


def entries(delivered: list[DeliveredEntry]) -> dict:
    """The SDK's shape: entries exactly as produced, with delivery masks."""
    return {
        "entries": [
            {
                "ledgerId": d.ledger_id,
                "entryId": d.entry_id,
                "partition": d.partition,
                "redeliveryCount": d.redelivery_count,
                "batchIndexes": list(d.batch_indexes) if d.batch_indexes is not None else None,
                "data": base64.b64encode(d.data).decode() if d.data is not None else None,
                "url": d.url,
                **_url_range(d),
                "topic": str(d.topic),
            }
            for d in delivered
        ]
    }


def _url_range(d: DeliveredEntry) -> dict:
    """``offset`` / ``length`` of an entry fetched by URL: the bytes to ask for with a
    ``Range`` header (a segment object holds many entries)."""
    if d.url is None or d.url_range is None:
        return {}
    return {"offset": d.url_range[0], "length": d.url_range[1]}


def message_fields(m: EntryMessage) -> dict[str, Any]:
    """A message's own fields in the people's JSON shape (payload in base64; ``key`` only
    when it has one): what a receive and a peek both show of it."""
    fields: dict[str, Any] = {
        "payload": base64.b64encode(m.payload).decode(),
        "properties": dict(m.properties),
        "publishTime": m.publish_time_ms,
        "eventTime": m.event_time_ms,
        "sequenceId": m.sequence_id,
        "nullValue": m.null_value,
    }
    if m.key is not None:
        fields["key"] = m.key
    return fields


def messages(delivered: list[DeliveredEntry]) -> dict:
    """People's shape: one JSON object per message, payloads in base64."""
    out = []
    # JSON receives ask for entries inline (by_reference=False): data is always loaded
    for d, entry, batch, m in delivered_messages(delivered):
        item: dict[str, Any] = {
            "messageId": format_message_id(d.ledger_id, d.entry_id, d.partition, batch),
            **message_fields(m),
            "redeliveryCount": d.redelivery_count,
            "producerName": entry.producer_name,
            "topic": str(d.topic),
        }
        if m.ordering_key is not None:
            item["orderingKey"] = base64.b64encode(m.ordering_key).decode()
        if entry.encryption is not None:  # the whole entry, still encrypted (no key here)
            item["encrypted"] = True
            item["batchSize"] = entry.header.count if entry.header.batched else -1
        out.append(item)
    return {"messages": out}


def _b64(value: Any, name: str) -> bytes:
    """Canonical base64 (RFC 4648: padded, no excess padding, zero pad bits)."""
    if not isinstance(value, str):
        raise InvalidMessage(f"'{name}' must be a base64 string")
    try:
        decoded = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidMessage(f"'{name}' is not valid base64: {exc}") from exc
    if base64.b64encode(decoded).decode("ascii") != value:
        raise InvalidMessage(
            f"'{name}' is not canonical base64: padded to a multiple of 4 characters, "
            "no excess '=', unused bits zero"
        )
    return decoded


def _int(message: dict, name: str) -> int:
    """A non-negative Java long (Pulsar's sequence ids and epoch-ms times)."""
    value = message.get(name, 0) or 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= INT64_MAX:
        raise InvalidMessage(
            f"'{name}' must be a non-negative integer up to {INT64_MAX} "
            "(epoch ms or id: a Java long)"
        )
    return value


def _message(raw: Any, now_ms: int) -> EntryMessage:
    if not isinstance(raw, dict):
        raise InvalidMessage("Each message must be a JSON object")
    null = raw.get("nullValue", False) is True
    payload = b"" if null else _b64(raw.get("payload", ""), "payload")
    properties = raw.get("properties") or {}
    if not isinstance(properties, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in properties.items()
    ):
        raise InvalidMessage("'properties' must be an object of string values")
    key = raw.get("key")
    if key is not None and not isinstance(key, str):
        raise InvalidMessage("'key' must be a string")
    ordering = raw.get("orderingKey")
    return EntryMessage(
        payload=payload,
        sequence_id=_int(raw, "sequenceId"),
        publish_time_ms=now_ms,
        key=key,
        ordering_key=_b64(ordering, "orderingKey") if ordering is not None else None,
        properties=properties,
        event_time_ms=_int(raw, "eventTime"),
        deliver_at_ms=_int(raw, "deliverAt"),
        null_value=null,
    )


def entry_from_json(body: dict, now_ms: int, default_producer: str) -> bytes:
    """Build an entry (codec NONE) from a JSON produce body; raises InvalidMessage."""
    raw = body.get("messages")
    if not isinstance(raw, list) or not raw:
        raise InvalidMessage("The body needs 'messages': a non-empty list of message objects")
    if len(raw) > 1000:
        raise InvalidMessage(f"At most 1000 messages per request, not {len(raw)}")
    producer = body.get("producerName") or default_producer
    if not isinstance(producer, str):
        raise InvalidMessage("'producerName' must be a string")
    if len(producer.encode("utf-8", "surrogatepass")) > MAX_PRODUCER_NAME_BYTES:
        raise InvalidMessage(f"'producerName' is longer than {MAX_PRODUCER_NAME_BYTES} bytes")
    try:
        return encode_entry([_message(m, now_ms) for m in raw], producer_name=producer)
    except EntryFormatError as exc:
        raise InvalidMessage(str(exc)) from exc
