"""Entry codec: the one implementation of docs/entry-format.md (version 1).

Pure (no I/O). The SDK builds entries with ``encode_entry``; the service reads headers and
per-message metadata with ``read_header``/``read_metadata`` (never decompressing payloads);
consumers and Spark jobs use ``decode_entry``. All integers are big-endian.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Sequence
from typing import Any

from .compression import Codec, EntryFormatError, UnsupportedCodec, codec_from_id
from .compression import compress as _compress
from .compression import decompress as _decompress
from .encryption import encryption_json
from .metadata import message_json, parse_metadata
from .model import (
    HEADER_SIZE,
    ChunkInfo,
    DecodedEntry,
    EntryEncryption,
    EntryHeader,
    EntryMessage,
    EntryMetadata,
    MessageMeta,
)

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
    "EncryptedEntry",
    "EntryMessage",
    "EntryMetadata",
    "MessageMeta",
    "UnsupportedCodec",
    "decode_entry",
    "encode_entry",
    "read_header",
    "read_metadata",
    "stored_payload",
]

MAGIC = b"MGE1"
VERSION = 1
_HEADER = struct.Struct(">4sBBBBIIIII")

assert _HEADER.size == HEADER_SIZE
_FLAG_BATCHED = 0x01
_FLAG_ENCRYPTED = 0x02
_FLAGS = _FLAG_BATCHED | _FLAG_ENCRYPTED
_U32_MAX = 0xFFFFFFFF


class ChecksumMismatch(EntryFormatError):
    """The CRC32C in the header does not match the metadata + payload sections."""


class EncryptedEntry(EntryFormatError):
    """The entry's payload section is encrypted and no ``decrypt`` function was given (its
    metadata still reads: ``read_metadata``)."""


Encrypt = Callable[[bytes], tuple[EntryEncryption, bytes]]
"""Compressed payload section -> (how it is encrypted, the encrypted section)."""
Decrypt = Callable[[EntryEncryption, bytes], bytes]
"""(how it is encrypted, the encrypted section) -> the compressed payload section; raises
what it likes (e.g. ``cryptography.exceptions.InvalidTag``) when it cannot."""


# ---------------------------------------------------------------------------------- encoding


def encode_entry(
    messages: Sequence[EntryMessage],
    *,
    producer_name: str,
    codec: Codec = Codec.NONE,
    batched: bool | None = None,
    encrypt: Encrypt | None = None,
) -> bytes:
    """Build one entry (header + JSON metadata + compressed payload section) from ``messages``.

    ``batched=None`` means batched when there is more than one message; a non-batched entry
    must hold exactly one message (its id has batch_index -1). ``encrypt`` (end-to-end
    encryption) turns the compressed payload section into the stored one; its
    ``EntryEncryption`` goes into the metadata and the header's encrypted flag is set.

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
        raw = b"".join(payloads)
        stored = _compress(codec, raw)
        body: dict[str, Any] = {
            "producer": producer_name,
            "messages": [message_json(m) for m in messages],
        }
        if encrypt is not None:
            encryption, stored = encrypt(stored)
            body["encryption"] = encryption_json(encryption)
        meta = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError) as exc:
        raise EntryFormatError(f"messages cannot be encoded: {exc}") from exc
    # Validate exactly what a reader checks, so an entry that encodes always decodes.
    parse_metadata(meta, len(messages))
    for name, n in (("metadata", len(meta)), ("payload", len(stored)), ("payload", len(raw))):
        if n > _U32_MAX:
            raise EntryFormatError(f"{name} section is {n} bytes, the format allows 2**32-1")
    flags = (_FLAG_BATCHED if batched else 0) | (_FLAG_ENCRYPTED if encrypt else 0)
    crc = _crc32c(stored, _crc32c(meta))
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
    if flags & ~_FLAGS or reserved:
        raise EntryFormatError(
            f"reserved header bits set (flags={flags:#04x}, reserved={reserved})"
        )
    batched = bool(flags & _FLAG_BATCHED)
    if count == 0:
        raise EntryFormatError("header message count is 0; an entry holds at least one message")
    if not batched and count != 1:
        raise EntryFormatError(f"non-batched entry with message count {count} (must be 1)")
    encrypted = bool(flags & _FLAG_ENCRYPTED)
    if codec is Codec.NONE and p_len != u_len and not encrypted:
        raise EntryFormatError(
            f"codec NONE but stored payload length {p_len} != uncompressed length {u_len}"
        )
    return EntryHeader(VERSION, codec, batched, count, m_len, p_len, u_len, crc, encrypted)


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


def _crc32c(data: bytes | memoryview, value: int = 0) -> int:
    """CRC32C of ``data``, continuing ``value``; ``crc32c`` imported on first use (its import
    reads its version from the installed distributions: ~35 ms of CPU a CLI call spared)."""
    import crc32c

    return int(crc32c.crc32c(data, value))


def _verify_crc(data: bytes, header: EntryHeader) -> None:
    actual = _crc32c(memoryview(data)[HEADER_SIZE : header.entry_size])
    if actual != header.crc32c:
        raise ChecksumMismatch(f"CRC32C mismatch: header says {header.crc32c:#010x}, metadata"
                               f" + payload hash to {actual:#010x} (entry corrupted)")  # fmt: skip


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
    producer, messages, encryption = parse_metadata(meta, header.count)
    if header.encrypted != (encryption is not None):
        raise EntryFormatError(
            "the header's encrypted flag and the metadata's 'encryption' disagree "
            f"(flag {header.encrypted}, encryption {'set' if encryption else 'absent'})"
        )
    total = sum(m.size for m in messages)
    if total != header.uncompressed_len:
        raise EntryFormatError(
            f"message sizes sum to {total} bytes but the header's uncompressed payload "
            f"length is {header.uncompressed_len}"
        )
    return EntryMetadata(header, producer, messages, encryption)


def stored_payload(data: bytes) -> bytes:
    """The payload section as stored (compressed; encrypted for an encrypted entry): what
    a consumer with ``ConsumerCryptoFailureAction.CONSUME`` gets. Raises EntryFormatError."""
    h = read_header(data)
    start = HEADER_SIZE + h.metadata_len
    return bytes(data[start : start + h.payload_len])


def decode_entry(data: bytes, *, decrypt: Decrypt | None = None) -> DecodedEntry:
    """Fully decode an entry: verify the CRC, decrypt (an encrypted entry, with
    ``decrypt``), decompress, and split the payloads.

    Raises:
        EntryFormatError: any structural problem (see ``read_metadata``) or a corrupt payload.
        EncryptedEntry: the entry is encrypted and ``decrypt`` is None.
        ChecksumMismatch: the CRC32C does not match.
        UnsupportedCodec: the codec is unknown.
        Whatever ``decrypt`` raises (a wrong key, a tampered section).
    """
    md = read_metadata(data, verify_crc=True)
    h = md.header
    start = HEADER_SIZE + h.metadata_len
    section = data[start : start + h.payload_len]
    if md.encryption is not None:
        if decrypt is None:
            raise EncryptedEntry(
                f"the entry's payload is encrypted ({md.encryption.algorithm}, keys "
                f"{[k.name for k in md.encryption.keys]}); decoding it needs a private key"
            )
        section = decrypt(md.encryption, bytes(section))
    raw = _decompress(h.codec, section, h.uncompressed_len)
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
                schema_version=m.schema_version,
            )
        )
        pos += m.size
    return DecodedEntry(h, md.producer_name, tuple(out), md.encryption)


# ------------------------------------------------------------------------- metadata parsing
