"""Entry codec: the one implementation of docs/entry-format.md (version 1).

Pure (no I/O). The SDK builds entries with ``encode_entry``; the service reads headers and
per-message metadata with ``read_header``/``read_metadata`` (never decompressing payloads);
consumers and Spark jobs use ``decode_entry``. All integers are big-endian.
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import crc32c

from .compression import Codec, EntryFormatError, UnsupportedCodec, codec_from_id
from .compression import compress as _compress
from .compression import decompress as _decompress

__all__ = [
    "HEADER_SIZE",
    "MAGIC",
    "VERSION",
    "ChecksumMismatch",
    "ChunkInfo",
    "Codec",
    "DecodedEntry",
    "EntryFormatError",
    "EntryHeader",
    "EntryMessage",
    "EntryMetadata",
    "MessageMeta",
    "UnsupportedCodec",
    "decode_entry",
    "encode_entry",
    "read_header",
    "read_metadata",
]

MAGIC = b"MGE1"
VERSION = 1
_HEADER = struct.Struct(">4sBBBBIIIII")
HEADER_SIZE = 28
assert _HEADER.size == HEADER_SIZE
_FLAG_BATCHED = 0x01
_U32_MAX = 0xFFFFFFFF


class ChecksumMismatch(EntryFormatError):
    """The CRC32C in the header does not match the metadata + payload sections."""


@dataclass(frozen=True)
class ChunkInfo:
    """One chunk of a large message split over several entries (Pulsar chunking)."""

    uuid: str
    chunk_id: int
    total_chunks: int
    total_size: int


@dataclass(frozen=True)
class EntryMessage:
    """One message as the producer built it; ``payload`` is ``b""`` for a null value."""

    payload: bytes = b""
    sequence_id: int = 0
    publish_time_ms: int = 0
    key: str | None = None
    ordering_key: bytes | None = None
    properties: Mapping[str, str] = field(default_factory=dict)
    event_time_ms: int = 0
    deliver_at_ms: int = 0
    null_value: bool = False
    chunk: ChunkInfo | None = None


@dataclass(frozen=True)
class EntryHeader:
    """The fixed 28-byte header. Lengths are in bytes; ``crc32c`` is the stored checksum."""

    version: int
    codec: Codec
    batched: bool
    count: int
    metadata_len: int
    payload_len: int
    uncompressed_len: int
    crc32c: int

    @property
    def entry_size(self) -> int:
        """Total entry length in bytes: header + metadata + stored payload section."""
        return HEADER_SIZE + self.metadata_len + self.payload_len


@dataclass(frozen=True)
class MessageMeta:
    """One message's metadata without its payload; ``size`` is its uncompressed payload length."""

    size: int
    sequence_id: int
    publish_time_ms: int
    key: str | None
    ordering_key: bytes | None
    properties: Mapping[str, str]
    event_time_ms: int
    deliver_at_ms: int
    null_value: bool
    chunk: ChunkInfo | None


@dataclass(frozen=True)
class EntryMetadata:
    """Header plus per-message metadata, read without decompressing payloads."""

    header: EntryHeader
    producer_name: str
    messages: tuple[MessageMeta, ...]


@dataclass(frozen=True)
class DecodedEntry:
    """A fully decoded entry; ``messages[i]`` has batch index ``i`` when ``header.batched``."""

    header: EntryHeader
    producer_name: str
    messages: tuple[EntryMessage, ...]


# ---------------------------------------------------------------------------------- encoding


def _message_json(m: EntryMessage) -> dict[str, Any]:
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
    return obj


def encode_entry(
    messages: Sequence[EntryMessage],
    *,
    producer_name: str,
    codec: Codec = Codec.NONE,
    batched: bool | None = None,
) -> bytes:
    """Build one entry (header + JSON metadata + compressed payload section) from ``messages``.

    ``batched=None`` means batched when there is more than one message; a non-batched entry
    must hold exactly one message (its id has batch_index -1).

    Raises:
        EntryFormatError: no messages, ``batched=False`` with several messages, a null value
            with a payload, invalid message fields, strings that are not valid UTF-8, or a
            section longer than 2**32-1 bytes.
        UnsupportedCodec: ``codec`` is unknown.
    """
    if not messages:
        raise EntryFormatError("an entry needs at least one message, got none")
    if batched is None:
        batched = len(messages) > 1
    if not batched and len(messages) != 1:
        raise EntryFormatError(
            f"a non-batched entry holds exactly one message, got {len(messages)}; "
            "pass batched=True (or leave batched=None)"
        )
    codec = codec_from_id(int(codec))
    try:
        payloads = [bytes(m.payload) for m in messages]
        body = {"producer": producer_name, "messages": [_message_json(m) for m in messages]}
        meta = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError) as exc:
        raise EntryFormatError(f"messages cannot be encoded: {exc}") from exc
    # Validate exactly what a reader checks, so an entry that encodes always decodes.
    _parse_metadata(meta, len(messages))
    raw = b"".join(payloads)
    stored = _compress(codec, raw)
    for name, n in (("metadata", len(meta)), ("payload", len(stored)), ("payload", len(raw))):
        if n > _U32_MAX:
            raise EntryFormatError(f"{name} section is {n} bytes, the format allows 2**32-1")
    flags = _FLAG_BATCHED if batched else 0
    crc = crc32c.crc32c(stored, crc32c.crc32c(meta))
    header = _HEADER.pack(
        MAGIC, VERSION, codec, flags, 0, len(messages), len(meta), len(stored), len(raw), crc
    )
    return b"".join((header, meta, stored))


# ---------------------------------------------------------------------------------- decoding


def read_header(data: bytes) -> EntryHeader:
    """Parse and validate the 28-byte header at the start of ``data``.

    Only the first ``HEADER_SIZE`` bytes are needed (e.g. a ranged read); bytes after them are
    not checked here and the CRC is not verified.

    Raises:
        EntryFormatError: fewer than 28 bytes, wrong magic, reserved bits set, count 0,
            a non-batched entry with count != 1, or inconsistent lengths.
        UnsupportedCodec: the codec byte is not a known codec id (0..4).
    """
    if len(data) < HEADER_SIZE:
        raise EntryFormatError(
            f"truncated entry: {len(data)} bytes, the header alone needs {HEADER_SIZE}"
        )
    magic, version, codec_id, flags, reserved, count, m_len, p_len, u_len, crc = _HEADER.unpack(
        bytes(data[:HEADER_SIZE])
    )
    if magic != MAGIC:
        raise EntryFormatError(f"not a Magnetar entry: magic is {magic!r}, expected {MAGIC!r}")
    if version != VERSION:
        raise EntryFormatError(
            f"unsupported entry format version {version} (this reader knows {VERSION})"
        )
    codec = codec_from_id(codec_id)
    if flags & ~_FLAG_BATCHED or reserved:
        raise EntryFormatError(
            f"reserved header bits set (flags={flags:#04x}, reserved={reserved})"
        )
    batched = bool(flags & _FLAG_BATCHED)
    if count == 0:
        raise EntryFormatError("header message count is 0; an entry holds at least one message")
    if not batched and count != 1:
        raise EntryFormatError(f"non-batched entry with message count {count} (must be 1)")
    if codec is Codec.NONE and p_len != u_len:
        raise EntryFormatError(
            f"codec NONE but stored payload length {p_len} != uncompressed length {u_len}"
        )
    return EntryHeader(VERSION, codec, batched, count, m_len, p_len, u_len, crc)


def _check_length(data: bytes, header: EntryHeader, *, metadata_only: bool) -> None:
    need = HEADER_SIZE + header.metadata_len if metadata_only else header.entry_size
    if len(data) < need:
        what = "header + metadata" if metadata_only else "the whole entry"
        raise EntryFormatError(f"truncated entry: {len(data)} bytes, {what} needs {need}")
    if len(data) > header.entry_size:
        raise EntryFormatError(
            f"{len(data) - header.entry_size} unexpected trailing bytes after the entry "
            f"(entry is {header.entry_size} bytes)"
        )


def _verify_crc(data: bytes, header: EntryHeader) -> None:
    actual = crc32c.crc32c(memoryview(data)[HEADER_SIZE : header.entry_size])
    if actual != header.crc32c:
        raise ChecksumMismatch(
            f"CRC32C mismatch: header says {header.crc32c:#010x}, "
            f"metadata + payload hash to {actual:#010x} (entry corrupted)"
        )


def read_metadata(data: bytes, *, verify_crc: bool = True) -> EntryMetadata:
    """Read the header and per-message metadata; never decompresses the payload section.

    With ``verify_crc=True`` (default) ``data`` must be the whole entry. With
    ``verify_crc=False`` the first ``HEADER_SIZE + metadata_len`` bytes are enough (a ranged
    read); more is allowed up to the entry size. Never decompresses, whatever the codec.

    Raises:
        EntryFormatError: see ``read_header``; truncated or trailing bytes; metadata that is not
            valid JSON or does not match the schema, the header count, or the uncompressed
            length.
        ChecksumMismatch: ``verify_crc`` and the CRC32C does not match.
        UnsupportedCodec: unknown codec id.
    """
    header = read_header(data)
    _check_length(data, header, metadata_only=not verify_crc)
    if verify_crc:
        _verify_crc(data, header)
    meta = bytes(data[HEADER_SIZE : HEADER_SIZE + header.metadata_len])
    producer, messages = _parse_metadata(meta, header.count)
    total = sum(m.size for m in messages)
    if total != header.uncompressed_len:
        raise EntryFormatError(
            f"message sizes sum to {total} bytes but the header's uncompressed payload "
            f"length is {header.uncompressed_len}"
        )
    return EntryMetadata(header, producer, messages)


def decode_entry(data: bytes) -> DecodedEntry:
    """Fully decode an entry: verify the CRC, decompress, and split the payloads.

    Raises:
        EntryFormatError: any structural problem (see ``read_metadata``) or a corrupt payload.
        ChecksumMismatch: the CRC32C does not match.
        UnsupportedCodec: the codec is unknown.
    """
    md = read_metadata(data, verify_crc=True)
    h = md.header
    start = HEADER_SIZE + h.metadata_len
    raw = _decompress(h.codec, data[start : start + h.payload_len], h.uncompressed_len)
    out = []
    pos = 0
    for m in md.messages:
        out.append(
            EntryMessage(
                payload=raw[pos : pos + m.size],
                sequence_id=m.sequence_id,
                publish_time_ms=m.publish_time_ms,
                key=m.key,
                ordering_key=m.ordering_key,
                properties=m.properties,
                event_time_ms=m.event_time_ms,
                deliver_at_ms=m.deliver_at_ms,
                null_value=m.null_value,
                chunk=m.chunk,
            )
        )
        pos += m.size
    return DecodedEntry(h, md.producer_name, tuple(out))


# ------------------------------------------------------------------------- metadata parsing


def _int(obj: dict[str, Any], name: str, where: str, *, default: int | None = None) -> int:
    if name not in obj:
        if default is None:
            raise EntryFormatError(f"{where}: missing required key {name!r}")
        return default
    v = obj[name]
    if type(v) is not int:
        raise EntryFormatError(f"{where}: {name!r} must be an integer, got {v!r}")
    return v


def _parse_message(i: int, obj: Any) -> MessageMeta:
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
    )


def _parse_metadata(meta: bytes, count: int) -> tuple[str, tuple[MessageMeta, ...]]:
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
    return producer, tuple(_parse_message(i, m) for i, m in enumerate(msgs))
