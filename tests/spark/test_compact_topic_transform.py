"""The pure topic-compaction transform: exact examples and properties on generated logs.

A query plans and runs in about half a CPU-second here, whatever its few rows, so the
examples that look only at what ``transform`` keeps of a log at a horizon declare it with
``@compacts(log, horizon)``, and all of them are compacted in one ``transform``
(``kept_together``); each example of the incremental property compacts the log at both
horizons and the rebuilt log in one too. ``kept_together`` keeps each case what it was on its
own: the transform groups by key and by chunked message and compares positions only within
a key, so each case gets keys and chunk ids of its own (a ``<case>/`` prefix, keyless
messages stay keyless), its batch indexes moved to a range of its own (``+ case *
BATCH_SPAN``, so each kept position names its case) and its entry ids moved up by ``top -
horizon``, ``top`` the highest horizon of the cases (the one horizon of the query then cuts
every case where its own did: ``eid <= horizon`` exactly when ``eid + top - horizon <=
top``). Every move keeps the order of a case's positions."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest
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


BATCH_SPAN = 1_000
"""Each case's batch indexes lie in a range of this many (see the module docstring)."""


def kept_together(spark, cases: list[tuple[list[Msg], int]]) -> list[list[tuple[int, int]]]:
    """``kept(spark, log, horizon)`` of every ``(log, horizon)`` case, from one ``transform``
    (see the module docstring)."""
    top = max(horizon for _, horizon in cases)
    rows = []
    for case, (log, horizon) in enumerate(cases):
        for m in log:
            assert 0 <= m.batch_index < BATCH_SPAN
            rows.append(
                replace(
                    m,
                    entry_id=m.entry_id + top - horizon,
                    batch_index=m.batch_index + case * BATCH_SPAN,
                    key=None if m.key is None else f"{case}/{m.key}",
                    chunk_uuid=None if m.chunk_uuid is None else f"{case}/{m.chunk_uuid}",
                )
            )
    views: list[list[tuple[int, int]]] = [[] for _ in cases]
    for r in transform(frame(spark, rows), CompactParams(top)).collect():
        case, batch_index = divmod(r["batch_index"], BATCH_SPAN)
        views[case].append((r["entry_id"] - (top - cases[case][1]), batch_index))
    return [sorted(view) for view in views]


CASES: dict[str, tuple[list[Msg], int]] = {}
"""test name -> the log and horizon it declared with ``@compacts``."""


def compacts(log: list[Msg], horizon: int):
    """Declare a test's log and horizon for the module's shared ``transform``."""

    def register(test):
        CASES[test.__name__] = (log, horizon)
        return test

    return register


@pytest.fixture(scope="module")
def shared_views(spark) -> dict[str, list[tuple[int, int]]]:
    """What the shared ``transform`` keeps of each declared case, by test name."""
    return dict(zip(CASES, kept_together(spark, list(CASES.values())), strict=True))


@pytest.fixture
def view(request, shared_views) -> list[tuple[int, int]]:
    """Sorted ``(entry_id, batch_index)`` the shared run kept of the test's ``@compacts``."""
    return shared_views[request.node.originalname]


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


@compacts(
    [Msg(0, 0, "a"), Msg(1, 0, "b"), Msg(1, 1, "a"), Msg(2, 0, "c"), Msg(3, 0, "b")],
    horizon=3,
)
def test_the_latest_value_of_each_key_is_kept_and_older_ones_dropped(view):
    assert view == [(1, 1), (2, 0), (3, 0)]


@compacts(
    [Msg(0, 0, "a"), Msg(1, 0, "b"), Msg(2, 0, "a", is_null=True)],
    horizon=2,
)
def test_a_key_whose_latest_message_is_a_null_value_is_removed(view):
    assert view == [(1, 0)]


@compacts(
    [Msg(0, 0, "a"), Msg(1, 0, "a", is_null=True), Msg(2, 0, "a")],
    horizon=2,
)
def test_a_value_after_a_null_value_brings_the_key_back(view):
    assert view == [(2, 0)]


@compacts(
    [Msg(0, 0, None), Msg(0, 1, "a"), Msg(1, 0, None)],
    horizon=1,
)
def test_keyless_messages_are_left_out(view):
    assert view == [(0, 1)]


@compacts(
    [Msg(0, 0, "a"), Msg(1, 0, "a"), Msg(2, 0, "b")],
    horizon=0,
)
def test_messages_above_the_horizon_are_not_compacted(view):
    assert view == [(0, 0)]


@compacts(
    [
        Msg(0, 0, "a"),
        Msg(1, 0, "a", chunk_uuid="p-1", chunk_id=0, chunk_total=3),
        Msg(2, 0, "b"),
        Msg(3, 0, "a", chunk_uuid="p-1", chunk_id=1, chunk_total=3),
        Msg(4, 0, "a", chunk_uuid="p-1", chunk_id=2, chunk_total=3),
    ],
    horizon=4,
)
def test_a_complete_chunked_message_keeps_all_its_chunks_as_one_value(view):
    assert view == [(1, 0), (2, 0), (3, 0), (4, 0)]


@compacts(
    [
        Msg(0, 0, "a", chunk_uuid="p-1", chunk_id=0, chunk_total=2),
        Msg(1, 0, "a", chunk_uuid="p-1", chunk_id=1, chunk_total=2),
        Msg(2, 0, "a", is_null=True),
    ],
    horizon=2,
)
def test_a_chunked_message_is_superseded_by_a_later_value_of_its_key(view):
    assert view == []


@compacts(
    [
        Msg(0, 0, "a"),
        Msg(1, 0, "a", chunk_uuid="p-1", chunk_id=0, chunk_total=2),
        Msg(2, 0, "a", chunk_uuid="p-1", chunk_id=1, chunk_total=2),
    ],
    horizon=1,
)
def test_a_chunked_message_whose_last_chunk_is_above_the_horizon_is_left_out(view):
    assert view == [(0, 0)]


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
    # the previous view is the model's: the same query shows it is what compacting the log at
    # the first horizon keeps, so ``carried`` is that compaction's output
    previous = sorted(latest_per_key(log, first).values())
    carried = [m for m in log if (m.entry_id, m.batch_index) in set(previous)]
    newer = [m for m in log if first < m.entry_id]
    cases = [(log, first), (carried + newer, second), (log, second)]
    view, rebuilt, whole = kept_together(spark, cases)
    assert view == previous
    assert rebuilt == whole
