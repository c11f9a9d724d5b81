"""Payload-section codecs for the entry format (docs/entry-format.md).

Pure functions over bytes. ``Codec`` and the base errors live here (not in ``entry``) so this
module does not import ``entry``; ``magnetar_wire.entry`` re-exports them, and the objects are
the same either way.

Codecs, numbered like Pulsar's ``CompressionType``:

- NONE: the section as is;
- LZ4: ``lz4.frame``, the LZ4 *frame* format with the content size stored;
- ZLIB: stdlib ``zlib``, a zlib container (RFC 1950);
- ZSTD: one Zstandard frame (``zstandard``), content size stored;
- SNAPPY: the raw Snappy *block* format (no framing), as Pulsar writes it
  (``cramjam.snappy.compress_raw``); the block starts with the uncompressed length as a varint.

Every decompression is bounded by the header's uncompressed length, so a corrupt or hostile
section cannot blow up memory.

The codec libraries (``lz4``, ``zstandard``, ``cramjam``) are imported by the codec that needs
them, on first use: importing the entry format (every SDK program, every ``magnetar`` CLI call)
does not pay for three native libraries most entries (NONE, ZLIB) never touch.
"""

from __future__ import annotations

import enum
import zlib

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


ZSTD_LEVEL = 3  # zstd's default level (Pulsar's Java client uses the library default too)


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
    """True when ``compress``/``decompress`` implement ``codec`` (every known codec now)."""
    try:
        codec_from_id(int(codec))
    except UnsupportedCodec:
        return False
    return True


def compress(codec: Codec, data: bytes) -> bytes:
    """Compress the concatenated payload section ``data`` with ``codec``.

    Raises:
        UnsupportedCodec: ``codec`` is not a known codec id.
    """
    codec = codec_from_id(int(codec))
    data = bytes(data)
    if codec is Codec.NONE:
        return data
    if codec is Codec.LZ4:
        import lz4.frame

        return lz4.frame.compress(data, store_size=True)
    if codec is Codec.ZLIB:
        return zlib.compress(data)
    if codec is Codec.ZSTD:
        import zstandard

        return zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_content_size=True).compress(data)
    import cramjam

    return bytes(cramjam.snappy.compress_raw(data))


def decompress(codec: Codec, data: bytes, uncompressed_len: int) -> bytes:
    """Decompress a stored payload section that must inflate to exactly ``uncompressed_len`` bytes.

    Never inflates more than ``uncompressed_len + 1`` bytes (ZSTD and SNAPPY check the length
    their header declares before inflating).

    Raises:
        UnsupportedCodec: ``codec`` is not a known codec id.
        EntryFormatError: the section is corrupt, or inflates to a different length.
    """
    codec = codec_from_id(int(codec))
    data = bytes(data)
    try:
        if codec is Codec.NONE:
            out = data
        elif codec is Codec.LZ4:
            out = _lz4(data, uncompressed_len)
        elif codec is Codec.ZLIB:
            out = _zlib(data, uncompressed_len)
        elif codec is Codec.ZSTD:
            out = _zstd(data, uncompressed_len)
        else:
            out = _snappy(data, uncompressed_len)
    except EntryFormatError:
        raise
    except Exception as exc:
        corrupt: tuple[type[Exception], ...] = (RuntimeError, zlib.error, ValueError)
        if not isinstance(exc, corrupt + _codec_errors(codec)):
            raise
        raise EntryFormatError(f"{codec.name} payload section is corrupt: {exc}") from exc
    if len(out) != uncompressed_len:
        shown = f"more than {uncompressed_len}" if len(out) > uncompressed_len else len(out)
        raise EntryFormatError(
            f"{codec.name} payload section inflates to {shown} bytes, "
            f"header says {uncompressed_len}"
        )
    return out


def _codec_errors(codec: Codec) -> tuple[type[Exception], ...]:
    """The errors of ``codec``'s library beyond RuntimeError/ValueError (its module is loaded
    by then: the codec's decompressor imported it)."""
    if codec is Codec.ZSTD:
        import zstandard

        return (zstandard.ZstdError,)
    if codec is Codec.SNAPPY:
        import cramjam

        return (cramjam.DecompressionError,)
    return ()


def _lz4(data: bytes, n: int) -> bytes:
    import lz4.frame

    dec = lz4.frame.LZ4FrameDecompressor()
    out = dec.decompress(data, max_length=n + 1)
    if len(out) <= n and not dec.eof:
        raise EntryFormatError("LZ4 payload section is truncated (frame not finished)")
    if dec.eof and dec.unused_data:
        raise EntryFormatError("LZ4 payload section has trailing bytes after the frame")
    return out


def _zlib(data: bytes, n: int) -> bytes:
    dec = zlib.decompressobj()
    out = dec.decompress(data, n + 1)
    if len(out) <= n and not dec.eof:
        raise EntryFormatError("ZLIB payload section is truncated (stream not finished)")
    if dec.eof and dec.unused_data:
        raise EntryFormatError("ZLIB payload section has trailing bytes after the stream")
    return out


def _zstd(data: bytes, n: int) -> bytes:
    import zstandard

    declared = zstandard.frame_content_size(data)
    if declared >= 0 and declared != n:
        raise EntryFormatError(f"ZSTD frame declares {declared} bytes, header says {n}")
    # max_output_size bounds frames without a content size; extra data after the frame fails.
    return zstandard.ZstdDecompressor().decompress(
        data, max_output_size=n + 1, allow_extra_data=False
    )


def _snappy(data: bytes, n: int) -> bytes:
    declared, shift = 0, 0
    for byte in data[:5]:  # the length is a varint of at most 5 bytes (u32)
        declared |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            break
    else:
        raise EntryFormatError(f"SNAPPY block length prefix is malformed ({len(data)} bytes)")
    if declared != n:
        raise EntryFormatError(f"SNAPPY block declares {declared} bytes, header says {n}")
    import cramjam

    return bytes(cramjam.snappy.decompress_raw(data))
