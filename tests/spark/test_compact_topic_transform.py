"""The pure topic-compaction transform: exact examples and properties on generated logs."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from magnetar_jobs.compact_topic_transform import (
    MESSAGE_SCHEMA,
    CompactParams,
    kept_batches,
    safe_horizon,
    transform,
)


@dataclass(frozen=True)
class Msg:
    entry_id: int
    batch_index: int
    key: str | None
    is_null: bool = False
    chunk_uuid: str | None = None
    chunk_id: int | None = None
    chunk_total: int | None = None
    publish_time_ms: int = 1_000

    def row(self) -> tuple:
        return (
            self.entry_id,
            self.batch_index,
            self.key,
            self.is_null,
            self.chunk_uuid,
            self.chunk_id,
            self.chunk_total,
            self.publish_time_ms,
        )


def frame(spark, messages):
    return spark.createDataFrame([m.row() for m in messages], MESSAGE_SCHEMA)


def kept(spark, messages, horizon: int) -> list[tuple[int, int]]:
    out = transform(frame(spark, messages), CompactParams(horizon)).collect()
    return sorted((r["entry_id"], r["batch_index"]) for r in out)


def latest_per_key(messages, horizon: int) -> dict[str, tuple[int, int]]:
    """The reference model (plain messages): key -> position of its latest value."""
    view: dict[str, tuple[int, int]] = {}
    for m in sorted(messages, key=lambda m: (m.entry_id, m.batch_index)):
        if m.entry_id > horizon or m.key is None:
            continue
        if m.is_null:
            view.pop(m.key, None)
        else:
            view[m.key] = (m.entry_id, m.batch_index)
    return view


def test_the_latest_value_of_each_key_is_kept_and_older_ones_dropped(spark):
    log = [Msg(0, 0, "a"), Msg(1, 0, "b"), Msg(1, 1, "a"), Msg(2, 0, "c"), Msg(3, 0, "b")]
    assert kept(spark, log, horizon=3) == [(1, 1), (2, 0), (3, 0)]


def test_a_key_whose_latest_message_is_a_null_value_is_removed(spark):
    log = [Msg(0, 0, "a"), Msg(1, 0, "b"), Msg(2, 0, "a", is_null=True)]
    assert kept(spark, log, horizon=2) == [(1, 0)]


def test_a_value_after_a_null_value_brings_the_key_back(spark):
    log = [Msg(0, 0, "a"), Msg(1, 0, "a", is_null=True), Msg(2, 0, "a")]
    assert kept(spark, log, horizon=2) == [(2, 0)]


def test_keyless_messages_are_left_out(spark):
    log = [Msg(0, 0, None), Msg(0, 1, "a"), Msg(1, 0, None)]
    assert kept(spark, log, horizon=1) == [(0, 1)]


def test_messages_above_the_horizon_are_not_compacted(spark):
    log = [Msg(0, 0, "a"), Msg(1, 0, "a"), Msg(2, 0, "b")]
    assert kept(spark, log, horizon=0) == [(0, 0)]


def test_a_complete_chunked_message_keeps_all_its_chunks_as_one_value(spark):
    log = [
        Msg(0, 0, "a"),
        Msg(1, 0, "a", chunk_uuid="p-1", chunk_id=0, chunk_total=3),
        Msg(2, 0, "b"),
        Msg(3, 0, "a", chunk_uuid="p-1", chunk_id=1, chunk_total=3),
        Msg(4, 0, "a", chunk_uuid="p-1", chunk_id=2, chunk_total=3),
    ]
    assert kept(spark, log, horizon=4) == [(1, 0), (2, 0), (3, 0), (4, 0)]


def test_a_chunked_message_is_superseded_by_a_later_value_of_its_key(spark):
    log = [
        Msg(0, 0, "a", chunk_uuid="p-1", chunk_id=0, chunk_total=2),
        Msg(1, 0, "a", chunk_uuid="p-1", chunk_id=1, chunk_total=2),
        Msg(2, 0, "a", is_null=True),
    ]
    assert kept(spark, log, horizon=2) == []


def test_a_chunked_message_whose_last_chunk_is_above_the_horizon_is_left_out(spark):
    log = [
        Msg(0, 0, "a"),
        Msg(1, 0, "a", chunk_uuid="p-1", chunk_id=0, chunk_total=2),
        Msg(2, 0, "a", chunk_uuid="p-1", chunk_id=1, chunk_total=2),
    ]
    assert kept(spark, log, horizon=1) == [(0, 0)]


def test_kept_positions_are_grouped_per_entry_with_sorted_batch_indexes(spark):
    log = [Msg(0, 2, "c"), Msg(0, 0, "a"), Msg(0, 1, "a"), Msg(1, 0, "b")]
    grouped = kept_batches(transform(frame(spark, log), CompactParams(1))).collect()
    assert sorted((r["entry_id"], list(r["kept"])) for r in grouped) == [(0, [1, 2]), (1, [0])]


def test_the_horizon_stops_below_a_chunked_message_still_arriving(spark):
    log = [
        Msg(0, 0, "a", publish_time_ms=1_000),
        Msg(1, 0, "b", chunk_uuid="p-1", chunk_id=0, chunk_total=2, publish_time_ms=50_000),
        Msg(2, 0, "c", publish_time_ms=51_000),
    ]
    df = frame(spark, log)
    assert safe_horizon(df, head=2, now_ms=60_000, chunk_wait_ms=60_000) == 0
    assert safe_horizon(df, head=2, now_ms=200_000, chunk_wait_ms=60_000) == 2


def test_the_horizon_is_the_head_when_every_chunked_message_is_complete(spark):
    log = [
        Msg(0, 0, "b", chunk_uuid="p-1", chunk_id=0, chunk_total=2, publish_time_ms=50_000),
        Msg(1, 0, "b", chunk_uuid="p-1", chunk_id=1, chunk_total=2, publish_time_ms=50_000),
    ]
    assert safe_horizon(frame(spark, log), head=1, now_ms=60_000, chunk_wait_ms=60_000) == 1


# -- properties -------------------------------------------------------------------------------

message = st.tuples(st.sampled_from(["a", "b", "c", "d", None]), st.booleans())
logs = st.lists(st.lists(message, min_size=1, max_size=3), min_size=1, max_size=12)


def build(entries) -> list[Msg]:
    return [
        Msg(eid, i, key, is_null)
        for eid, batch in enumerate(entries)
        for i, (key, is_null) in enumerate(batch)
    ]


@settings(
    max_examples=examples(6, minimum=2), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(entries=logs, data=st.data())
def test_the_compacted_view_equals_latest_per_key_with_tombstones_removed(spark, entries, data):
    log = build(entries)
    horizon = data.draw(st.integers(-1, len(entries) - 1), label="horizon")
    expected = sorted(latest_per_key(log, horizon).values())
    assert kept(spark, log, horizon) == expected


@settings(
    max_examples=examples(5, minimum=2), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(entries=logs, data=st.data())
def test_compacting_the_previous_view_plus_the_newer_log_equals_compacting_the_whole_log(
    spark, entries, data
):
    log = build(entries)
    second = data.draw(st.integers(0, len(entries) - 1), label="horizon")
    first = data.draw(st.integers(-1, second), label="previous horizon")
    previous = set(kept(spark, log, first))
    carried = [m for m in log if (m.entry_id, m.batch_index) in previous]
    newer = [m for m in log if first < m.entry_id]
    assert kept(spark, carried + newer, second) == kept(spark, log, second)
