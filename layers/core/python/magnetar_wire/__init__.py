"""Magnetar wire codec: entry format (docs/entry-format.md) and message id text form.

Pure functions, no I/O. Shared by the SDK, the service and Spark jobs.

The names load on first use (PEP 562's module ``__getattr__``): ``from magnetar_wire import
names`` (topic names, wanted by every ``magnetar admin`` call) does not import the entry codec,
its dataclasses and compression.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lazy import lazy_names

if TYPE_CHECKING:
    from .compression import is_supported
    from .entry import (
        HEADER_SIZE,
        ChecksumMismatch,
        ChunkInfo,
        Codec,
        DecodedEntry,
        EncryptedEntry,
        EntryFormatError,
        EntryHeader,
        EntryMessage,
        EntryMetadata,
        MessageMeta,
        UnsupportedCodec,
        decode_entry,
        encode_entry,
        read_header,
        read_metadata,
        stored_payload,
    )
    from .ids import format_message_id, parse_message_id
    from .model import DataKey, EntryEncryption

__all__ = [
    "HEADER_SIZE",
    "ChecksumMismatch",
    "ChunkInfo",
    "Codec",
    "DataKey",
    "DecodedEntry",
    "EncryptedEntry",
    "EntryEncryption",
    "EntryFormatError",
    "EntryHeader",
    "EntryMessage",
    "EntryMetadata",
    "MessageMeta",
    "UnsupportedCodec",
    "decode_entry",
    "encode_entry",
    "format_message_id",
    "is_supported",
    "parse_message_id",
    "read_header",
    "read_metadata",
    "stored_payload",
]

# defining module -> the names it gives
_LAZY_NAMES: dict[str, tuple[str, ...]] = {
    ".compression": ("is_supported",),
    ".entry": (
        "HEADER_SIZE", "ChecksumMismatch", "ChunkInfo", "Codec", "DecodedEntry", "EncryptedEntry",
        "EntryFormatError", "EntryHeader", "EntryMessage", "EntryMetadata", "MessageMeta",
        "UnsupportedCodec", "decode_entry", "encode_entry", "read_header", "read_metadata",
        "stored_payload",
    ),
    ".ids": ("format_message_id", "parse_message_id"),
    ".model": ("DataKey", "EntryEncryption"),
}  # fmt: skip
_LAZY = {name: module for module, names in _LAZY_NAMES.items() for name in names}


__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
