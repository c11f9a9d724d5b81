"""compact-segments' pure transform on generated index rows: exact plans."""

from __future__ import annotations

import pytest

from magnetar_jobs.catalog import index_schema
from magnetar_jobs.compact_segments_transform import (
    SegmentParams,
    plan_ledger,
    segment_key,
    transform,
)

PK = "persistent://public/default/t|1"
PK2 = "persistent://public/default/u-partition-0|3"


def _row(pk: str, eid: int, size: int, *, obj: str | None = None, n: int = 1, off: int = 0):
    obj = f"entries/{pk}/{eid}" if obj is None else obj
    return (pk, eid, obj, off, size, n, 1000 + eid, 1000 + eid, 0, False, False, None)


def _inline(pk: str, eid: int, size: int):
    """An inline entry (bytes in its item, no object), published at ``1000 + eid``."""
    return (
        pk,
        eid,
        "",
        0,
        size,
        1,
        1000 + eid,
        1000 + eid,
        0,
        False,
        False,
        bytes([eid % 256]) * size,
    )


def _marker(pk: str, eid: int, fence: bool = False):
    return (pk, eid, "", 0, 0, 0, 0, 0, 0, fence, False, None)


def _plan(spark, rows, **params) -> list[tuple]:
    df = spark.createDataFrame(rows, index_schema())
    out = transform(df, SegmentParams(**params)).orderBy("pk", "first_eid").collect()
    return [
        (
            r.pk,
            r.seg_key,
            r.first_eid,
            r.last_eid,
            r.entries,
            r.bytes,
            [(m.eid, m.obj, m.off, m.len, m.seg_off, m.d) for m in r.members],
        )
        for r in out
    ]


def _members(pk: str, sizes: dict[int, int]) -> list[tuple]:
    out, offset = [], 0
    for eid, size in sizes.items():
        out.append((eid, f"entries/{pk}/{eid}", 0, size, offset, None))
        offset += size
    return out


def test_the_segment_key_names_topic_path_ledger_and_entry_range():
    assert segment_key(PK, 3, 9) == "segments/persistent/public/default/t/1/3-9"
    assert segment_key(PK2, 0, 0) == "segments/persistent/public/default/u-partition-0/3/0-0"


def test_small_entries_are_packed_into_segments_of_about_the_target_size(spark):
    rows = [_row(PK, eid, 100) for eid in range(10)]
    plan = _plan(spark, rows, target_segment_bytes=300, min_tail_bytes=200)
    assert plan == [
        (PK, segment_key(PK, 0, 2), 0, 2, 3, 300, _members(PK, {0: 100, 1: 100, 2: 100})),
        (PK, segment_key(PK, 3, 5), 3, 5, 3, 300, _members(PK, {3: 100, 4: 100, 5: 100})),
        (PK, segment_key(PK, 6, 8), 6, 8, 3, 300, _members(PK, {6: 100, 7: 100, 8: 100})),
    ]  # entry 9 alone is the open tail: fewer than min_entries


def test_a_segment_holds_at_most_one_entry_more_than_the_target(spark):
    rows = [_row(PK, 0, 250), _row(PK, 1, 100), _row(PK, 2, 200), _row(PK, 3, 10)]
    plan = _plan(spark, rows, target_segment_bytes=300, min_tail_bytes=1)
    # starts 0, 250 -> bucket 0; 350 -> bucket 1; 550 -> bucket 1
    assert plan == [
        (PK, segment_key(PK, 0, 1), 0, 1, 2, 350, _members(PK, {0: 250, 1: 100})),
        (PK, segment_key(PK, 2, 3), 2, 3, 2, 210, _members(PK, {2: 200, 3: 10})),
    ]


def test_markers_are_skipped_and_entries_already_in_segments_or_too_big_break_runs(spark):
    rows = [
        _row(PK, 0, 100),
        _marker(PK, 1),
        _row(PK, 2, 100),
        _row(PK, 3, 5000),  # too big: breaks
        _row(PK, 4, 100),
        _row(PK, 5, 100),
        _row(PK, 6, 100, obj="segments/persistent/public/default/t/1/6-7", off=0),
        _row(PK, 7, 100, obj="segments/persistent/public/default/t/1/6-7", off=100),
        _row(PK, 8, 100),
        _marker(PK, 9, fence=True),
    ]
    plan = _plan(spark, rows, target_segment_bytes=1000, max_entry_bytes=1000, min_tail_bytes=1000)
    assert plan == [
        # closed by the oversized entry 3; the marker inside the range is not a member
        (PK, segment_key(PK, 0, 2), 0, 2, 2, 200, _members(PK, {0: 100, 2: 100})),
        # closed by the segment at 6
        (PK, segment_key(PK, 4, 5), 4, 5, 2, 200, _members(PK, {4: 100, 5: 100})),
    ]  # 8 alone at the open end: nothing


def test_the_open_end_of_the_log_is_written_only_from_min_tail_bytes(spark):
    rows = [_row(PK, eid, 100) for eid in range(4)]
    assert _plan(spark, rows, target_segment_bytes=1000, min_tail_bytes=401) == []
    assert _plan(spark, rows, target_segment_bytes=1000, min_tail_bytes=400) == [
        (PK, segment_key(PK, 0, 3), 0, 3, 4, 400, _members(PK, dict.fromkeys(range(4), 100)))
    ]
    # default min_tail_bytes: half the target
    assert _plan(spark, rows, target_segment_bytes=800) == [
        (PK, segment_key(PK, 0, 3), 0, 3, 4, 400, _members(PK, dict.fromkeys(range(4), 100)))
    ]


def test_the_head_entries_of_a_ledger_are_left_alone(spark):
    rows = [_row(PK, eid, 100) for eid in range(6)]
    assert _plan(spark, rows, target_segment_bytes=200, min_tail_bytes=10_000, head_entries=3) == [
        (PK, segment_key(PK, 0, 1), 0, 1, 2, 200, _members(PK, {0: 100, 1: 100})),
    ]  # 2 is the open end of the log once 3..5 are held back


def test_old_inline_entries_are_planned_with_their_bytes_and_young_ones_start_the_tail(spark):
    rows = [_row(PK, 0, 100), _inline(PK, 1, 100), _inline(PK, 2, 50), _row(PK, 3, 100)]
    rows += [_inline(PK, 4, 100), _row(PK, 5, 100)]  # published at 1004 and 1005: young
    plan = _plan(spark, rows, target_segment_bytes=1000, min_tail_bytes=1, inline_before_ms=1004)
    assert plan == [
        (PK, segment_key(PK, 0, 3), 0, 3, 4, 350, [
            (0, f"entries/{PK}/0", 0, 100, 0, None),
            (1, "", 0, 100, 100, b"\x01" * 100),
            (2, "", 0, 50, 200, b"\x02" * 50),
            (3, f"entries/{PK}/3", 0, 100, 250, None),
        ]),
    ]  # fmt: skip
    everything = _plan(spark, rows, target_segment_bytes=1000, min_tail_bytes=1)
    assert [(p[2], p[3]) for p in everything] == [(0, 5)]  # no cutoff: no young tail


def test_ledgers_are_planned_independently(spark):
    rows = [_row(PK, eid, 100) for eid in range(3)] + [_row(PK2, eid, 50) for eid in range(5)]
    plan = _plan(spark, rows, target_segment_bytes=150, min_tail_bytes=150)
    assert plan == [
        (PK, segment_key(PK, 0, 1), 0, 1, 2, 200, _members(PK, {0: 100, 1: 100})),
        (PK2, segment_key(PK2, 0, 2), 0, 2, 3, 150, _members(PK2, {0: 50, 1: 50, 2: 50})),
    ]  # PK's entry 2 and PK2's 3..4 are open tails below 150 bytes


def test_a_plan_after_a_partial_switch_never_reuses_a_key_for_other_bytes(spark):
    """Entries switched by a crashed run break the run: the rest get new keys."""
    seg = segment_key(PK, 0, 3)
    rows = [
        _row(PK, 0, 100),
        _row(PK, 1, 100, obj=seg, off=100),  # switched before the crash
        _row(PK, 2, 100),
        _row(PK, 3, 100),
    ]
    plan = _plan(spark, rows, target_segment_bytes=1000, min_tail_bytes=1)
    assert plan == [(PK, segment_key(PK, 2, 3), 2, 3, 2, 200, _members(PK, {2: 100, 3: 100}))]


def test_the_plan_is_the_same_for_the_same_index(spark):
    rows = [_row(PK, eid, 37 + eid % 5) for eid in range(200)]
    params = {"target_segment_bytes": 1000, "min_tail_bytes": 1}
    first = _plan(spark, rows, **params)
    assert first == _plan(spark, list(reversed(rows)), **params)
    assert sum(p[4] for p in first) == 200
    assert [p[2] for p in first] == sorted(p[2] for p in first)
    assert all(p[5] <= 1000 + 41 for p in first)


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="min_entries must be at least 2"):
        SegmentParams(min_entries=1)
    with pytest.raises(ValueError, match="target_segment_bytes and max_entry_bytes"):
        SegmentParams(target_segment_bytes=0)


def test_the_spark_plan_equals_the_plain_python_plan_on_random_ledgers(spark):
    import random

    rng = random.Random(11)
    rows = []
    for pk in (PK, PK2):
        for eid in range(300):
            kind = rng.random()
            if kind < 0.05:
                rows.append(_marker(pk, eid))
            elif kind < 0.10:
                rows.append(_row(pk, eid, 100, obj=segment_key(pk, eid, eid + 1), off=0))
            elif kind < 0.30:
                rows.append(_inline(pk, eid, rng.choice([10, 50, 200])))
            else:
                rows.append(_row(pk, eid, rng.choice([10, 50, 200, 900, 2000])))
    params = {
        "target_segment_bytes": 1500,
        "max_entry_bytes": 1000,
        "head_entries": 7,
        "inline_before_ms": 1000 + 250,
    }
    expected = [
        (p["pk"], p["seg_key"], p["first_eid"], p["last_eid"], p["entries"], p["bytes"],
         p["members"])
        for pk in (PK, PK2)
        for p in plan_ledger([r for r in rows if r[0] == pk], SegmentParams(**params))
    ]  # fmt: skip
    assert len(expected) > 20
    assert _plan(spark, rows, **params) == expected
