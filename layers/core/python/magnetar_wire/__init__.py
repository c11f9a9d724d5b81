"""Magnetar wire codec: entry format (docs/entry-format.md) and message id text form.

Pure functions, no I/O. Shared by the SDK, the service and Spark jobs.

The names load on first use (PEP 562's module ``__getattr__``): ``from magnetar_wire import
names`` (topic names, wanted by every ``magnetar admin`` call) does not import the entry codec,
its dataclasses and compression.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

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


def __getattr__(name: str) -> object:
    """A name of ``__all__`` on first use, or a submodule (``magnetar_wire.names``, ...)."""
    module = _LAZY.get(name)
    if module is not None:
        value: object = getattr(importlib.import_module(module, __name__), name)
    elif name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    else:
        try:
            value = importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":  # the submodule exists; one of its imports not
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
