"""The metadata section of an entry: compact JSON, one object per message, never compressed."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from .compression import EntryFormatError
from .encryption import parse_encryption
from .model import ChunkInfo, EntryEncryption, EntryMessage, MessageMeta


def message_json(m: EntryMessage) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "size": len(bytes(m.payload)),
        "seq": m.sequence_id,
        "publish": m.publish_time_ms,
    }
    if m.key is not None:
        obj["key"] = m.key
    if m.ordering_key is not None:
        obj["orderingKey"] = base64.b64encode(m.ordering_key).decode("ascii")
    if m.properties:
        obj["properties"] = dict(m.properties)
    if m.event_time_ms:
        obj["event"] = m.event_time_ms
    if m.deliver_at_ms:
        obj["deliverAt"] = m.deliver_at_ms
    if m.null_value:
        obj["null"] = True
    if m.chunk is not None:
        c = m.chunk
        obj["chunk"] = {
            "uuid": c.uuid,
            "id": c.chunk_id,
            "total": c.total_chunks,
            "totalSize": c.total_size,
        }
    if m.schema_version is not None:
        obj["schemaVersion"] = m.schema_version
    return obj


def _int(obj: dict[str, Any], name: str, where: str, *, default: int | None = None) -> int:
    if name not in obj:
        if default is None:
            raise EntryFormatError(f"{where}: missing required key {name!r}")
        return default
    v = obj[name]
    if type(v) is not int:
        raise EntryFormatError(f"{where}: {name!r} must be an integer, got {v!r}")
    return v


def parse_message(i: int, obj: Any) -> MessageMeta:
    where = f"metadata message {i}"
    if not isinstance(obj, dict):
        raise EntryFormatError(f"{where}: expected an object, got {type(obj).__name__}")
    size = _int(obj, "size", where)
    if size < 0:
        raise EntryFormatError(f"{where}: negative size {size}")
    key = obj.get("key")
    if key is not None and not isinstance(key, str):
        raise EntryFormatError(f"{where}: 'key' must be a string, got {key!r}")
    okey = obj.get("orderingKey")
    if okey is not None:
        if not isinstance(okey, str):
            raise EntryFormatError(f"{where}: 'orderingKey' must be base64 text, got {okey!r}")
        try:
            okey = base64.b64decode(okey, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise EntryFormatError(f"{where}: 'orderingKey' is not valid base64: {exc}") from None
    props = obj.get("properties", {})
    if not isinstance(props, dict) or not all(isinstance(v, str) for v in props.values()):
        raise EntryFormatError(f"{where}: 'properties' must map strings to strings")
    null = obj.get("null", False)
    if not isinstance(null, bool):
        raise EntryFormatError(f"{where}: 'null' must be true or false, got {null!r}")
    if null and size:
        raise EntryFormatError(f"{where}: a null value must have size 0, got {size}")
    chunk = obj.get("chunk")
    if chunk is not None:
        cw = f"{where} chunk"
        if not isinstance(chunk, dict) or not isinstance(chunk.get("uuid"), str):
            raise EntryFormatError(f"{cw}: expected {{uuid: str, id, total, totalSize}}")
        chunk = ChunkInfo(
            chunk["uuid"], _int(chunk, "id", cw), _int(chunk, "total", cw),
            _int(chunk, "totalSize", cw),
        )  # fmt: skip
        if not 0 <= chunk.chunk_id < chunk.total_chunks or chunk.total_size < 0:
            raise EntryFormatError(f"{cw}: inconsistent chunk info {chunk}")
    version = obj.get("schemaVersion")
    if version is not None and (type(version) is not int or version < 0):
        raise EntryFormatError(f"{where}: 'schemaVersion' must be an integer >= 0, got {version!r}")  # fmt: skip
    return MessageMeta(
        size=size,
        sequence_id=_int(obj, "seq", where),
        publish_time_ms=_int(obj, "publish", where),
        key=key,
        ordering_key=okey,
        properties=dict(props),
        event_time_ms=_int(obj, "event", where, default=0),
        deliver_at_ms=_int(obj, "deliverAt", where, default=0),
        null_value=null,
        chunk=chunk,
        schema_version=version,
    )


def parse_metadata(
    meta: bytes, count: int
) -> tuple[str, tuple[MessageMeta, ...], EntryEncryption | None]:
    """The producer name, per-message metadata and encryption (None: clear) of a metadata
    section. Raises EntryFormatError."""
    try:
        body = json.loads(meta.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise EntryFormatError(f"metadata section is not valid UTF-8 JSON: {exc}") from None
    if not isinstance(body, dict):
        raise EntryFormatError("metadata section must be a JSON object")
    producer = body.get("producer")
    if not isinstance(producer, str):
        raise EntryFormatError(f"metadata 'producer' must be a string, got {producer!r}")
    msgs = body.get("messages")
    if not isinstance(msgs, list):
        raise EntryFormatError("metadata 'messages' must be a list")
    if len(msgs) != count:
        raise EntryFormatError(
            f"metadata lists {len(msgs)} messages but the header count is {count}"
        )
    encryption = body.get("encryption")
    parsed = None if encryption is None else parse_encryption(encryption)
    return producer, tuple(parse_message(i, m) for i, m in enumerate(msgs)), parsed
