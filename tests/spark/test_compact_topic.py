"""compact-topic's extract pieces without the emulator: entry rows decoded from ranged reads,
the message frame, id slices, error lines and argument checks (the job end to end runs on
the emulator in tests/integration/test_compaction.py)."""

from __future__ import annotations

import io
import pickle

import compact_topic
import pytest

from magnetar_jobs.compact_topic_extract import (
    ENTRY_SCHEMA,
    entry_metadata,
    entry_row,
    error_text,
    messages_of,
    slices,
)
from magnetar_jobs.compact_topic_load import kept_entry_bytes
from magnetar_jobs.compact_topic_transform import MESSAGE_SCHEMA
from magnetar_wire import ChunkInfo, EntryMessage, encode_entry


class RangedS3:
    """get_object with a Range header over in-memory objects; records the ranges asked."""

    def __init__(self, objects: dict[str, bytes]):
        self.objects = objects
        self.ranges: list[str] = []

    def get_object(self, Bucket, Key, Range):  # noqa: N803 - boto3's names
        self.ranges.append(Range)
        start, end = (int(x) for x in Range.removeprefix("bytes=").split("-"))
        return {"Body": io.BytesIO(self.objects[Key][start : end + 1])}


def _item(eid: int, obj: str, length: int, count: int, offset: int = 0, **extra) -> dict:
    item = {
        "pk": {"S": "persistent://public/default/t|1"},
        "eid": {"N": str(eid)},
        "obj": {"S": obj},
        "off": {"N": str(offset)},
        "len": {"N": str(length)},
        "n": {"N": str(count)},
    }
    item.update(extra)
    return item


BATCH = encode_entry(
    [
        EntryMessage(payload=b"1", key="a", publish_time_ms=5),
        EntryMessage(payload=b"", key="b", null_value=True, publish_time_ms=6),
        EntryMessage(payload=b"3", publish_time_ms=7),
    ],
    producer_name="p",
)


def test_an_entry_row_carries_each_messages_key_null_flag_and_position():
    s3 = RangedS3({"seg": b"xx" + BATCH})
    item = _item(4, "seg", len(BATCH), 3, offset=2)
    eid, blob, obj, off, length, messages = entry_row(s3, "bucket", item)
    assert (eid, obj, off, length, pickle.loads(blob)) == (4, "seg", 2, len(BATCH), item)
    assert messages == [
        (0, "a", False, None, None, None, 5),
        (1, "b", True, None, None, None, 6),
        (2, None, False, None, None, None, 7),
    ]
    assert s3.ranges == [f"bytes=2-{len(BATCH) + 1}"]


def test_an_inline_entry_row_is_read_from_its_item_without_any_request():
    s3 = RangedS3({})
    item = _item(5, "", len(BATCH), 3, d={"B": BATCH})
    eid, blob, obj, off, length, messages = entry_row(s3, "bucket", item)
    assert (eid, obj, off, length, pickle.loads(blob)) == (5, "", 0, len(BATCH), item)
    assert [(m[0], m[1], m[2]) for m in messages] == [
        (0, "a", False),
        (1, "b", True),
        (2, None, False),
    ]
    assert s3.ranges == []


def test_the_load_copies_an_inline_entry_from_its_item_and_a_stored_one_by_a_ranged_read():
    s3 = RangedS3({"seg": b"xx" + BATCH})
    inline = {"item": pickle.dumps(_item(5, "", len(BATCH), 3, d={"B": BATCH})), "obj": "",
              "off": 0, "len": len(BATCH), "entry_id": 5}  # fmt: skip
    stored = {"item": pickle.dumps(_item(6, "seg", len(BATCH), 3, offset=2)), "obj": "seg",
              "off": 2, "len": len(BATCH), "entry_id": 6}  # fmt: skip
    assert [kept_entry_bytes(s3, "bucket", row) for row in (inline, stored)] == [BATCH, BATCH]
    assert s3.ranges == [f"bytes=2-{len(BATCH) + 1}"]  # the stored one only


def test_a_previously_compacted_entry_brings_only_its_kept_messages():
    s3 = RangedS3({"seg": BATCH})
    item = _item(4, "seg", len(BATCH), 3, kb={"NS": ["0", "2"]})
    assert [m[0] for m in entry_row(s3, "bucket", item)[5]] == [0, 2]


def test_a_chunk_row_names_its_message_by_producer_and_uuid():
    chunk = encode_entry(
        [EntryMessage(payload=b"x", key="k", chunk=ChunkInfo("p-7", 1, 3, 30))], producer_name="p"
    )
    row = entry_row(RangedS3({"c": chunk}), "bucket", _item(9, "c", len(chunk), 1))
    assert row[5] == [(0, "k", False, "p\x00p-7", 1, 3, 0)]


def test_markers_and_fences_give_no_row():
    s3 = RangedS3({})
    assert entry_row(s3, "b", _item(1, "", 0, 0)) is None
    assert entry_row(s3, "b", _item(2, "", 0, 0, fence={"BOOL": True})) is None
    assert s3.ranges == []


def test_metadata_longer_than_the_first_probe_takes_a_second_ranged_read():
    big = encode_entry(
        [EntryMessage(payload=b"v", key="k" * 20_000, properties={"p": "q"})], producer_name="p"
    )
    s3 = RangedS3({"o": big})
    meta = entry_metadata(s3, "bucket", "o", 0, len(big))
    assert meta.messages[0].key == "k" * 20_000
    assert len(s3.ranges) == 2


def test_the_message_frame_has_one_row_per_message_in_the_transforms_schema(spark):
    rows = [
        (
            4,
            b"i",
            "seg",
            0,
            10,
            [(0, "a", False, None, None, None, 5), (1, None, True, None, None, None, 6)],
        )
    ]
    messages = messages_of(spark.createDataFrame(rows, ENTRY_SCHEMA))
    assert messages.schema.fieldNames() == MESSAGE_SCHEMA.fieldNames()
    assert [tuple(r) for r in messages.collect()] == [
        (4, 0, "a", False, None, None, None, 5),
        (4, 1, None, True, None, None, None, 6),
    ]


def test_id_ranges_are_cut_into_contiguous_slices():
    assert slices(0, 9, 3) == [(0, 3), (4, 7), (8, 9)]
    assert slices(5, 5, 4) == [(5, 5)]
    assert slices(3, 2, 4) == []


def test_a_python_worker_error_is_reported_by_its_exception_line():
    worker = RuntimeError(
        "An exception was thrown from the Python worker.\nTraceback (most recent call last):\n"
        '  File "x.py", line 1, in f\nmagnetar_jobs.compact_topic_extract.EntryUnreadable: entry 3 (k): boom\n'
    )
    assert (
        error_text(worker)
        == "magnetar_jobs.compact_topic_extract.EntryUnreadable: entry 3 (k): boom"
    )
    assert error_text(ValueError("bad")) == "ValueError: bad"


def test_the_job_needs_exactly_one_of_topic_and_all():
    base = ["--bucket", "b", "--table-prefix", "p"]
    with pytest.raises(ValueError, match="exactly one of --topic T and --all"):
        compact_topic.main(base)
    with pytest.raises(ValueError, match="exactly one of --topic T and --all"):
        compact_topic.main([*base, "--topic", "t", "--all"])
