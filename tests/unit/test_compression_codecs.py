"""Payload codecs of magnetar_wire.compression: round trips, bounds and corrupt input."""

from __future__ import annotations

import os
import zlib

import cramjam
import pytest
import zstandard

from magnetar_wire import Codec, EntryFormatError, EntryMessage, decode_entry, encode_entry
from magnetar_wire.compression import compress, decompress, is_supported

ALL = list(Codec)
PAYLOADS = [b"", b"x", b"hello " * 1000, os.urandom(4096)]


@pytest.mark.parametrize("codec", ALL, ids=lambda c: c.name)
@pytest.mark.parametrize("data", PAYLOADS, ids=["empty", "one", "text", "random"])
def test_every_codec_round_trips_the_payload_section(codec, data):
    assert decompress(codec, compress(codec, data), len(data)) == data
    assert is_supported(codec)


@pytest.mark.parametrize("codec", ALL, ids=lambda c: c.name)
def test_an_entry_of_every_codec_decodes_to_the_messages_it_was_built_from(codec):
    msgs = [EntryMessage(payload=b"a" * 500, sequence_id=1, key="k"),
            EntryMessage(payload=b"b" * 300, sequence_id=2)]  # fmt: skip
    decoded = decode_entry(encode_entry(msgs, producer_name="p", codec=codec))
    assert decoded.header.codec is codec
    assert [m.payload for m in decoded.messages] == [b"a" * 500, b"b" * 300]


def test_snappy_is_the_raw_block_format_pulsar_writes():
    data = b"snappy " * 100
    stored = compress(Codec.SNAPPY, data)
    assert stored == bytes(cramjam.snappy.compress_raw(data))
    assert not stored.startswith(b"\xff\x06\x00\x00sNaPpY")  # not the framing format
    assert stored[:2] == bytes([len(data) & 0x7F | 0x80, len(data) >> 7])  # varint length


def test_zstd_is_one_zstandard_frame_with_its_content_size():
    stored = compress(Codec.ZSTD, b"z" * 1000)
    assert stored[:4] == b"\x28\xb5\x2f\xfd"
    assert zstandard.frame_content_size(stored) == 1000


@pytest.mark.parametrize("codec", [Codec.ZSTD, Codec.SNAPPY], ids=lambda c: c.name)
def test_a_section_declaring_another_length_than_the_header_is_refused_before_inflating(codec):
    stored = compress(codec, b"q" * 10_000)
    with pytest.raises(EntryFormatError, match="declares 10000 bytes, header says 10"):
        decompress(codec, stored, 10)


def test_a_zstd_frame_without_content_size_is_bounded_by_the_header_length():
    stored = zstandard.ZstdCompressor(write_content_size=False).compress(b"w" * 10_000)
    assert decompress(Codec.ZSTD, stored, 10_000) == b"w" * 10_000
    with pytest.raises(EntryFormatError, match="ZSTD"):
        decompress(Codec.ZSTD, stored, 100)


@pytest.mark.parametrize("codec", [Codec.LZ4, Codec.ZLIB, Codec.ZSTD, Codec.SNAPPY],
                         ids=lambda c: c.name)  # fmt: skip
def test_truncated_or_trailing_bytes_are_entry_format_errors_naming_the_codec(codec):
    data = os.urandom(2000) + b"tail" * 200
    stored = compress(codec, data)
    with pytest.raises(EntryFormatError, match=codec.name):
        decompress(codec, stored[:-7], len(data))
    if codec is not Codec.SNAPPY:  # a raw snappy block has no end marker to check
        with pytest.raises(EntryFormatError, match=codec.name):
            decompress(codec, stored + b"junk", len(data))


def test_garbage_is_refused_by_every_compressing_codec():
    for codec in (Codec.LZ4, Codec.ZLIB, Codec.ZSTD, Codec.SNAPPY):
        with pytest.raises(EntryFormatError):
            decompress(codec, b"\x05garbage!", 5)


def test_an_empty_snappy_section_is_malformed():
    with pytest.raises(EntryFormatError, match="SNAPPY block length prefix is malformed"):
        decompress(Codec.SNAPPY, b"", 0)


def test_zlib_is_still_a_plain_zlib_stream():
    assert zlib.decompress(compress(Codec.ZLIB, b"abc")) == b"abc"
