"""Magnetar wire codec: entry format (docs/entry-format.md) and message id text form.

Pure functions, no I/O. Shared by the SDK, the service and Spark jobs.
"""

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
