"""Entry codec (docs/entry-format.md): round trips, metadata without decompression, validation."""

import json
import struct
import zlib

import crc32c
import lz4.frame
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from magnetar_wire import compression
from magnetar_wire.entry import (
    HEADER_SIZE,
    ChecksumMismatch,
    ChunkInfo,
    Codec,
    EntryFormatError,
    EntryMessage,
    UnsupportedCodec,
    decode_entry,
    encode_entry,
    read_header,
    read_metadata,
)

SUPPORTED = [Codec.NONE, Codec.LZ4, Codec.ZLIB]


def build(meta, stored, *, codec=0, flags=0, count=1, u_len=None, version=1, magic=b"MGE1"):
    """Independent writer straight from the doc's table, for hand-crafted (bad) entries."""
    if not isinstance(meta, bytes):
        meta = json.dumps(meta, separators=(",", ":")).encode()
    u_len = len(stored) if u_len is None else u_len
    crc = crc32c.crc32c(meta + stored)
    head = struct.pack(
        ">4sBBBBIIIII", magic, version, codec, flags, 0, count, len(meta), len(stored), u_len, crc
    )
    return head + meta + stored


def with_fixed_crc(entry):
    """Recompute the header CRC after tampering with the metadata or payload sections."""
    return entry[:24] + struct.pack(">I", crc32c.crc32c(entry[HEADER_SIZE:])) + entry[HEADER_SIZE:]


def one(payload=b"hello", **kw):
    return EntryMessage(payload=payload, sequence_id=1, publish_time_ms=1_763_700_000_000, **kw)


def full_batch():
    return [
        EntryMessage(b"first", 10, 1000, key="k1", properties={"a": "b", "ü": "✓"}),
        EntryMessage(b"", 11, 1001, key="tomb", null_value=True),
        EntryMessage(b"\x00\xff" * 50, 12, 1002, ordering_key=b"\x00\x01ok", event_time_ms=999),
        EntryMessage(b"later", 13, 1003, deliver_at_ms=5000),
        EntryMessage(b"part", 14, 1004, chunk=ChunkInfo("u-1", 0, 3, 12)),
        EntryMessage(b"", 15, 1005),  # empty but not null
    ]


# ------------------------------------------------------------------------------ round trips


@pytest.mark.parametrize("codec", SUPPORTED)
def test_a_batch_round_trips_with_every_implemented_codec(codec):
    msgs = full_batch()
    entry = encode_entry(msgs, producer_name="standalone-0-3", codec=codec)
    decoded = decode_entry(entry)
    assert decoded.messages == tuple(msgs)
    assert decoded.producer_name == "standalone-0-3"
    assert decoded.header.codec is codec
    assert decoded.header.batched
    assert decoded.header.count == len(msgs)


@pytest.mark.parametrize("codec", SUPPORTED)
def test_a_single_message_round_trips_unbatched_with_every_implemented_codec(codec):
    entry = encode_entry([one()], producer_name="p", codec=codec)
    decoded = decode_entry(entry)
    assert decoded.messages == (one(),)
    assert not decoded.header.batched


def test_a_single_message_can_be_explicitly_batched():
    entry = encode_entry([one()], producer_name="p", batched=True)
    assert read_header(entry).batched
    assert decode_entry(entry).messages == (one(),)


def test_a_null_value_decodes_as_an_empty_null_payload():
    entry = encode_entry([EntryMessage(key="k", null_value=True)], producer_name="p")
    (msg,) = decode_entry(entry).messages
    assert msg.null_value and msg.payload == b"" and msg.key == "k"


@pytest.mark.parametrize("codec", SUPPORTED)
def test_an_entry_of_only_empty_payloads_round_trips(codec):
    msgs = [EntryMessage(null_value=True), EntryMessage()]
    assert decode_entry(encode_entry(msgs, producer_name="", codec=codec)).messages == tuple(msgs)


def test_the_layout_matches_the_doc_byte_for_byte():
    entry = encode_entry([one(b"hello", key="k1")], producer_name="standalone-0-3")
    meta = (
        b'{"producer":"standalone-0-3","messages":'
        b'[{"size":5,"seq":1,"publish":1763700000000,"key":"k1"}]}'
    )
    assert entry == build(meta, b"hello")
    assert read_header(entry).crc32c == crc32c.crc32c(meta + b"hello")


def test_metadata_json_is_compact_and_spells_every_set_field_as_documented():
    msg = EntryMessage(
        b"", 7, 8, key="k", ordering_key=b"\xfa", properties={"p": "v"}, event_time_ms=9,
        deliver_at_ms=10, null_value=True, chunk=ChunkInfo("u", 1, 2, 3),
    )  # fmt: skip
    entry = encode_entry([msg], producer_name="p")
    meta = entry[HEADER_SIZE : HEADER_SIZE + read_header(entry).metadata_len]
    assert b" " not in meta
    assert json.loads(meta)["messages"] == [
        {
            "size": 0, "seq": 7, "publish": 8, "key": "k", "orderingKey": "+g==",
            "properties": {"p": "v"}, "event": 9, "deliverAt": 10, "null": True,
            "chunk": {"uuid": "u", "id": 1, "total": 2, "totalSize": 3},
        }
    ]  # fmt: skip


def test_the_schema_version_round_trips_and_entries_without_it_read_as_none():
    entry = encode_entry([one(schema_version=3)], producer_name="p")
    assert b'"schemaVersion":3' in entry
    assert decode_entry(entry).messages[0].schema_version == 3
    assert read_metadata(entry).messages[0].schema_version == 3
    older = build({"producer": "p", "messages": [{"size": 1, "seq": 1, "publish": 1}]}, b"x")
    assert decode_entry(older).messages[0].schema_version is None
    assert b"schemaVersion" not in encode_entry([one()], producer_name="p")


def test_an_empty_key_and_empty_ordering_key_are_kept_distinct_from_unset():
    msg = one(key="", ordering_key=b"")
    assert decode_entry(encode_entry([msg], producer_name="p")).messages == (msg,)


@pytest.mark.parametrize("codec", [Codec.LZ4, Codec.ZLIB])
def test_compressed_payloads_are_really_compressed_in_the_stored_section(codec):
    entry = encode_entry([one(b"a" * 10_000)], producer_name="p", codec=codec)
    h = read_header(entry)
    assert h.uncompressed_len == 10_000 and h.payload_len < 1000
    assert h.entry_size == len(entry)
    stored = entry[HEADER_SIZE + h.metadata_len :]
    expected = lz4.frame.decompress(stored) if codec is Codec.LZ4 else zlib.decompress(stored)
    assert expected == b"a" * 10_000


_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=20)
_messages = st.builds(
    EntryMessage,
    payload=st.binary(max_size=300),
    sequence_id=st.integers(min_value=0, max_value=2**63 - 1),
    publish_time_ms=st.integers(min_value=0, max_value=2**53),
    key=st.none() | _text,
    ordering_key=st.none() | st.binary(max_size=20),
    properties=st.dictionaries(_text, _text, max_size=4),
    event_time_ms=st.integers(min_value=0, max_value=2**53),
    deliver_at_ms=st.integers(min_value=0, max_value=2**53),
    chunk=st.none()
    | st.builds(ChunkInfo, _text, st.just(0), st.integers(1, 100), st.integers(0, 2**40)),
)


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(_messages, min_size=1, max_size=8), st.sampled_from(SUPPORTED), _text)
def test_any_messages_round_trip_and_read_metadata_agrees(msgs, codec, producer):
    entry = encode_entry(msgs, producer_name=producer, codec=codec)
    decoded = decode_entry(entry)
    assert decoded.messages == tuple(msgs)
    assert decoded.producer_name == producer
    meta = read_metadata(entry)
    assert meta.header == decoded.header
    assert [m.size for m in meta.messages] == [len(m.payload) for m in msgs]
    assert [m.key for m in meta.messages] == [m.key for m in msgs]


# ------------------------------------------------------------ metadata without decompression


def test_read_metadata_reads_an_entry_whose_payload_section_does_not_decompress():
    # A ZSTD entry with an opaque (corrupt) payload section: keys and deliver-at are readable.
    meta = {"producer": "p", "messages": [
        {"size": 3, "seq": 1, "publish": 2, "key": "k1", "deliverAt": 50},
        {"size": 4, "seq": 2, "publish": 3, "key": "k2"},
    ]}  # fmt: skip
    entry = build(meta, b"\x28\xb5\x2f\xfd-opaque", codec=Codec.ZSTD, flags=1, count=2, u_len=7)
    md = read_metadata(entry)
    assert md.header.codec is Codec.ZSTD
    assert [(m.key, m.deliver_at_ms, m.size) for m in md.messages] == [
        ("k1", 50, 3),
        ("k2", 0, 4),
    ]
    with pytest.raises(EntryFormatError, match="ZSTD"):
        decode_entry(entry)


@pytest.mark.parametrize("codec", [Codec.LZ4, Codec.ZLIB])
def test_read_metadata_succeeds_on_a_corrupt_payload_that_decode_entry_rejects(codec):
    entry = bytearray(encode_entry(full_batch(), producer_name="p", codec=codec))
    h = read_header(entry)
    start = HEADER_SIZE + h.metadata_len
    entry[start : start + 4] = b"\xde\xad\xbe\xef"  # break the frame / stream header
    entry = with_fixed_crc(bytes(entry))
    assert len(read_metadata(entry).messages) == len(full_batch())
    with pytest.raises(EntryFormatError, match=f"{codec.name} payload section"):
        decode_entry(entry)


def test_read_metadata_without_crc_needs_only_header_and_metadata():
    entry = encode_entry(full_batch(), producer_name="p", codec=Codec.LZ4)
    h = read_header(entry[:HEADER_SIZE])
    prefix = entry[: HEADER_SIZE + h.metadata_len]
    assert read_metadata(prefix, verify_crc=False) == read_metadata(entry)
    with pytest.raises(EntryFormatError, match="truncated"):
        read_metadata(prefix)  # verifying the CRC needs the whole entry


# -------------------------------------------------------------------------------- validation


@pytest.mark.parametrize("where", ["metadata", "payload"])
def test_a_flipped_bit_is_reported_as_a_checksum_mismatch(where):
    entry = bytearray(encode_entry(full_batch(), producer_name="p", codec=Codec.LZ4))
    entry[HEADER_SIZE + 3 if where == "metadata" else -3] ^= 0x01
    for read in (decode_entry, read_metadata):
        with pytest.raises(ChecksumMismatch, match="CRC32C mismatch"):
            read(bytes(entry))
    if where == "payload":  # the metadata itself is intact, so a CRC-less read still works
        assert read_metadata(bytes(entry), verify_crc=False).producer_name == "p"


@pytest.mark.parametrize("codec", SUPPORTED)
def test_every_truncation_is_rejected(codec):
    entry = encode_entry(full_batch(), producer_name="p", codec=codec)
    for n in range(len(entry)):
        with pytest.raises(EntryFormatError, match="truncated"):
            decode_entry(entry[:n])


def test_trailing_bytes_are_rejected():
    entry = encode_entry([one()], producer_name="p")
    with pytest.raises(EntryFormatError, match="trailing bytes"):
        decode_entry(entry + b"\x00")


@pytest.mark.parametrize(
    ("entry", "match"),
    [
        (build({}, b"", magic=b"MGE2"), "magic"),
        (build({}, b"", version=2), "version 2"),
        (build({}, b"", count=0), "count is 0"),
        (build({}, b"", flags=0, count=2), "non-batched entry with message count 2"),
        (build({}, b"", flags=0x04), "reserved header bits"),
        (build({}, b"abc", u_len=4), "codec NONE"),
    ],
)
def test_a_bad_header_is_rejected_with_a_clear_message(entry, match):
    with pytest.raises(EntryFormatError, match=match):
        read_header(entry)


def test_an_unknown_codec_id_is_rejected_naming_the_id():
    with pytest.raises(UnsupportedCodec, match="unknown codec id 9"):
        read_header(build({}, b"", codec=9))


_OK = {"size": 1, "seq": 1, "publish": 1}


@pytest.mark.parametrize(
    ("meta", "count", "match"),
    [
        (b"{not json", 1, "not valid UTF-8 JSON"),
        (b"\xff\xfe", 1, "not valid UTF-8 JSON"),
        (b"[]", 1, "must be a JSON object"),
        ({"messages": [_OK]}, 1, "'producer' must be a string"),
        ({"producer": "p", "messages": [_OK]}, 2, "lists 1 messages but the header count is 2"),
        ({"producer": "p", "messages": [{"size": 1, "seq": 1}]}, 1, "missing required key 'publish'"),
        ({"producer": "p", "messages": [{**_OK, "seq": "1"}]}, 1, "'seq' must be an integer"),
        ({"producer": "p", "messages": [{**_OK, "orderingKey": "!!"}]}, 1, "not valid base64"),
        ({"producer": "p", "messages": [{**_OK, "properties": {"a": 1}}]}, 1, "strings to strings"),
        ({"producer": "p", "messages": [{**_OK, "null": True}]}, 1, "null value must have size 0"),
        ({"producer": "p", "messages": [{**_OK, "chunk": {"uuid": "u", "id": 2, "total": 2, "totalSize": 1}}]}, 1, "inconsistent chunk"),
        ({"producer": "p", "messages": [{**_OK, "schemaVersion": -1}]}, 1, "'schemaVersion' must be an integer >= 0"),
        ({"producer": "p", "messages": [{**_OK, "schemaVersion": "1"}]}, 1, "'schemaVersion' must be an integer >= 0"),
    ],
)  # fmt: skip
def test_bad_metadata_is_rejected_with_a_clear_message(meta, count, match):
    entry = build(meta, b"x" * count, flags=1 if count > 1 else 0, count=count)
    with pytest.raises(EntryFormatError, match=match):
        read_metadata(entry)


def test_sizes_that_do_not_add_up_to_the_uncompressed_length_are_rejected():
    meta = {"producer": "p", "messages": [{"size": 2, "seq": 1, "publish": 1}]}
    entry = build(meta, zlib.compress(b"abc"), codec=Codec.ZLIB, u_len=3)
    with pytest.raises(EntryFormatError, match="sum to 2 bytes .* is 3"):
        read_metadata(entry)


def test_a_payload_that_inflates_to_the_wrong_length_is_rejected():
    meta = {"producer": "p", "messages": [{"size": 2, "seq": 1, "publish": 1}]}
    entry = build(meta, zlib.compress(b"abc"), codec=Codec.ZLIB, u_len=2)
    with pytest.raises(EntryFormatError, match="inflates to more than 2 bytes"):
        decode_entry(entry)


# ---------------------------------------------------------------------------------- encoding


def test_encoding_no_messages_is_an_error():
    with pytest.raises(EntryFormatError, match="at least one message"):
        encode_entry([], producer_name="p")


def test_an_unbatched_entry_with_several_messages_is_refused():
    with pytest.raises(EntryFormatError, match="exactly one message, got 2"):
        encode_entry([one(), one()], producer_name="p", batched=False)


def test_a_null_value_with_a_payload_is_refused():
    with pytest.raises(EntryFormatError, match="null value must have size 0"):
        encode_entry([one(b"x", null_value=True)], producer_name="p")


def test_invalid_field_types_are_refused_at_encode_time():
    with pytest.raises(EntryFormatError, match="'seq' must be an integer"):
        encode_entry([EntryMessage(sequence_id=True)], producer_name="p")
    with pytest.raises(EntryFormatError, match="strings to strings"):
        encode_entry([EntryMessage(properties={"a": 1})], producer_name="p")
    with pytest.raises(EntryFormatError, match="cannot be encoded"):
        encode_entry([EntryMessage(key="\ud800")], producer_name="p")


@pytest.mark.parametrize("codec", [Codec.ZSTD, Codec.SNAPPY])
def test_zstd_and_snappy_entries_encode_and_decode(codec):
    entry = encode_entry([one()], producer_name="p", codec=codec)
    assert decode_entry(entry).messages[0] == one()
    assert compression.is_supported(codec)


def test_unsupported_codec_and_checksum_mismatch_are_entry_format_errors():
    assert issubclass(UnsupportedCodec, EntryFormatError)
    assert issubclass(ChecksumMismatch, EntryFormatError)
    assert issubclass(EntryFormatError, ValueError)
