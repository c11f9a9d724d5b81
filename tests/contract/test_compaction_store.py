"""Contract of the compaction store: the versioned pointer and reads of compacted ledgers."""

from __future__ import annotations

import pytest
from contract_records import entry

from magnetar_core.domain.compaction import CompactedEntry, CompactionState, Retired
from magnetar_core.domain.errors import ConditionFailed


@pytest.fixture
def pk(uid) -> str:
    return f"persistent://c/ns/t-{uid}|1"


def test_a_partition_never_compacted_reads_as_not_run_at_version_0(stores, pk):
    assert stores.compaction.get(pk) == CompactionState()


def test_the_pointer_reads_back_every_field_at_the_next_version(stores, pk):
    state = CompactionState(
        status="SUCCESS", last_error="", horizon=41, ledger=f"{pk}|compacted|r1",
        run_id="r2", run_ledger=f"{pk}|compacted|r2", started_ms=5, finished_ms=9,
        retired=[Retired(f"{pk}|compacted|r0", 3, True), Retired("x", 4)],
    )  # fmt: skip
    stores.compaction.put(pk, state)
    assert state.version == 1
    assert stores.compaction.get(pk) == state


def test_an_error_reads_back(stores, pk):
    stores.compaction.put(pk, CompactionState(status="ERROR", last_error="boom"))
    got = stores.compaction.get(pk)
    assert (got.status, got.last_error) == ("ERROR", "boom")


def test_a_pointer_write_needs_the_version_it_read(stores, pk):
    stores.compaction.put(pk, CompactionState(status="RUNNING", run_id="a"))
    a, b = stores.compaction.get(pk), stores.compaction.get(pk)
    a.status = "SUCCESS"
    stores.compaction.put(pk, a)
    b.status = "ERROR"
    with pytest.raises(ConditionFailed):
        stores.compaction.put(pk, b)
    with pytest.raises(ConditionFailed):
        stores.compaction.put(pk, CompactionState())  # version 0: the pointer exists
    assert stores.compaction.get(pk).status == "SUCCESS"


def test_the_pointer_is_not_a_cursor(stores, pk):
    stores.compaction.put(pk, CompactionState())
    assert stores.cursors.list(pk) == []


def test_compacted_reads_are_ascending_limited_and_keep_batch_indexes(backend, stores, pk):
    ledger = f"{pk}|compacted|r1"
    kept = [
        CompactedEntry(entry(0, 3), (0, 2)),
        CompactedEntry(entry(2), None),
        CompactedEntry(entry(5, 2), (1,)),
        CompactedEntry(entry(6, 2), None),
    ]
    backend.seed_compacted(ledger, kept)
    assert stores.compaction.read_from(ledger, 0, 10) == kept
    assert stores.compaction.read_from(ledger, 1, 2) == kept[1:3]
    assert stores.compaction.read_from(ledger, 7, 10) == []
    assert stores.compaction.get_many(ledger, [0, 1, 5, 9]) == {0: kept[0], 5: kept[2]}


def test_kept_indexes_naming_every_message_read_as_the_whole_entry(backend, stores, pk):
    ledger = f"{pk}|compacted|r1"
    backend.seed_compacted(ledger, [CompactedEntry(entry(0, 2), (1, 0))])
    assert stores.compaction.read_from(ledger, 0, 10) == [CompactedEntry(entry(0, 2), None)]


def test_compacted_get_many_spans_more_than_100_keys(backend, stores, pk):
    ledger = f"{pk}|compacted|r1"
    backend.seed_compacted(ledger, [CompactedEntry(entry(i), None) for i in range(0, 120, 3)])
    assert sorted(stores.compaction.get_many(ledger, range(120))) == list(range(0, 120, 3))
    assert stores.compaction.get_many(f"{pk}|compacted|none", [0, 1]) == {}
