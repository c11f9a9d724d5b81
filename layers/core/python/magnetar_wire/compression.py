"""Payload-section codecs for the entry format (docs/entry-format.md).

Pure functions over bytes. ``Codec`` and the base errors live here (not in ``entry``) so this
module does not import ``entry``; ``magnetar_wire.entry`` re-exports them, and the objects are
the same either way.

Implemented: NONE, LZ4 (``lz4.frame``, the LZ4 *frame* format with content size), ZLIB (stdlib
``zlib``, zlib container). ZSTD and SNAPPY are reserved and raise ``UnsupportedCodec``.
"""

from __future__ import annotations

import enum
import zlib

import lz4.frame

__all__ = [
    "Codec",
    "EntryFormatError",
    "UnsupportedCodec",
    "codec_from_id",
    "compress",
    "decompress",
    "is_supported",
]


class Codec(enum.IntEnum):
    """Payload codec id, numbered like Pulsar's ``CompressionType``."""

    NONE = 0
    LZ4 = 1
    ZLIB = 2
    ZSTD = 3
    SNAPPY = 4


class EntryFormatError(ValueError):
    """The bytes are not a valid entry (or the messages cannot be encoded as one)."""


class UnsupportedCodec(EntryFormatError):
    """The codec id is unknown, or known but not implemented by this version."""


_NOT_YET = {
    Codec.ZSTD: "ZSTD (codec 3) is not supported yet by magnetar_wire; use NONE, LZ4 or ZLIB",
    Codec.SNAPPY: "SNAPPY (codec 4) is not supported yet by magnetar_wire; use NONE, LZ4 or ZLIB",
}


def codec_from_id(codec_id: int) -> Codec:
    """Map a header codec byte to ``Codec``.

    Raises:
        UnsupportedCodec: the id is not one of the known codec numbers 0..4.
    """
    try:
        return Codec(codec_id)
    except ValueError:
        known = ", ".join(f"{c.value} {c.name}" for c in Codec)
        raise UnsupportedCodec(f"unknown codec id {codec_id} (known: {known})") from None


def is_supported(codec: Codec) -> bool:
    """True when ``compress``/``decompress`` implement ``codec``."""
    return codec not in _NOT_YET


def _require_supported(codec: Codec) -> None:
    if codec in _NOT_YET:
        raise UnsupportedCodec(_NOT_YET[codec])


def compress(codec: Codec, data: bytes) -> bytes:
    """Compress the concatenated payload section ``data`` with ``codec``.

    Raises:
        UnsupportedCodec: ``codec`` is ZSTD or SNAPPY (not implemented yet).
    """
    codec = codec_from_id(int(codec))
    _require_supported(codec)
    if codec is Codec.NONE:
        return bytes(data)
    if codec is Codec.LZ4:
        return lz4.frame.compress(bytes(data), store_size=True)
    return zlib.compress(bytes(data))


def decompress(codec: Codec, data: bytes, uncompressed_len: int) -> bytes:
    """Decompress a stored payload section that must inflate to exactly ``uncompressed_len`` bytes.

    Never inflates more than ``uncompressed_len + 1`` bytes, so a corrupt or hostile section
    cannot blow up memory.

    Raises:
        UnsupportedCodec: ``codec`` is ZSTD or SNAPPY (not implemented yet).
        EntryFormatError: the section is corrupt, or inflates to a different length.
    """
    codec = codec_from_id(int(codec))
    _require_supported(codec)
    data = bytes(data)
    limit = uncompressed_len + 1
    try:
        if codec is Codec.NONE:
            out = data
        elif codec is Codec.LZ4:
            dec = lz4.frame.LZ4FrameDecompressor()
            out = dec.decompress(data, max_length=limit)
            if len(out) <= uncompressed_len and not dec.eof:
                raise EntryFormatError("LZ4 payload section is truncated (frame not finished)")
            if dec.eof and dec.unused_data:
                raise EntryFormatError("LZ4 payload section has trailing bytes after the frame")
        else:
            dec = zlib.decompressobj()
            out = dec.decompress(data, limit)
            if len(out) <= uncompressed_len and not dec.eof:
                raise EntryFormatError("ZLIB payload section is truncated (stream not finished)")
            if dec.eof and dec.unused_data:
                raise EntryFormatError("ZLIB payload section has trailing bytes after the stream")
    except EntryFormatError:
        raise
    except (RuntimeError, zlib.error, ValueError) as exc:
        raise EntryFormatError(f"{codec.name} payload section is corrupt: {exc}") from exc
    if len(out) != uncompressed_len:
        shown = f"more than {uncompressed_len}" if len(out) > uncompressed_len else len(out)
        raise EntryFormatError(
            f"{codec.name} payload section inflates to {shown} bytes, "
            f"header says {uncompressed_len}"
        )
    return out
