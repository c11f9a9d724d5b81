"""Contract of the log index: the conditional append (commit point), head and tail queries,
ranges in entry-id order, limits, batched reads of more than one request's worth of keys."""

from __future__ import annotations

import pytest
from contract_records import entry

from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.log import IndexEntry


@pytest.fixture
def pk(uid) -> str:
    return f"persistent://c/ns/t-{uid}|1"


def test_an_empty_ledger_has_no_last_entry_and_head_minus_one(stores, pk):
    assert stores.log.last(pk) is None
    assert stores.log.head(pk) == -1
    assert stores.log.read_from(pk, 0, 10) == []
    assert stores.log.last_with_messages(pk, 100) is None
    assert stores.log.exists(pk, 0) is False


def test_an_appended_entry_reads_back_with_every_field(stores, pk):
    full = entry(
        0, 3, epoch=2, exclusive=True, key_hashes=(1, 2, 3), deliver_at_ms=1_800_000_000_000
    )
    stores.log.append(pk, full)
    chunk = entry(1, partial_chunk=True, key_hashes=(7,))
    stores.log.append(pk, chunk)
    assert stores.log.read_from(pk, 0, 10) == [full, chunk]
    assert stores.log.get_many(pk, [0, 1]) == {0: full, 1: chunk}


def test_an_inline_entry_reads_back_with_its_bytes_from_every_read(stores, pk):
    data = bytes(range(256)) * 3  # binary, with zero bytes
    inline = entry(0, object_key="", length=len(data), data=data)
    stores.log.append(pk, inline)
    stores.log.append(pk, entry(1))
    assert stores.log.read_from(pk, 0, 10) == [inline, entry(1)]
    assert stores.log.get_many(pk, [0]) == {0: inline}
    assert [(r.entry_id, r.size_bytes) for r in stores.log.range_counts(pk, 0, 0)] == [
        (0, 768)
    ]  # the entry's length, as for any entry


def test_appending_a_taken_entry_id_fails_the_condition(stores, pk):
    stores.log.append(pk, entry(0))
    with pytest.raises(ConditionFailed):
        stores.log.append(pk, entry(0, producer="other"))
    assert stores.log.read_from(pk, 0, 10) == [entry(0)]


def test_last_and_head_follow_the_highest_id_and_a_fence_does_not_count(stores, pk):
    for i in range(3):
        stores.log.append(pk, entry(i))
    assert stores.log.last(pk) == entry(2) and stores.log.head(pk) == 2
    stores.log.append(pk, IndexEntry.fence_at(3))
    assert stores.log.last(pk).fence and stores.log.head(pk) == 2


def test_read_from_is_ascending_from_start_and_capped_by_limit(stores, pk):
    for i in (4, 0, 2, 1, 3):
        stores.log.append(pk, entry(i))
    assert [e.entry_id for e in stores.log.read_from(pk, 1, 3)] == [1, 2, 3]
    assert [e.entry_id for e in stores.log.read_from(pk, 3, 10)] == [3, 4]
    assert stores.log.read_from(pk, 5, 10) == []


def test_read_from_includes_markers_and_fences(stores, pk):
    stores.log.append(pk, entry(0))
    stores.log.append(pk, IndexEntry.epoch_marker(1, 3, True, "p"))
    stores.log.append(pk, IndexEntry.fence_at(2))
    assert stores.log.read_from(pk, 0, 10) == [
        entry(0), IndexEntry.epoch_marker(1, 3, True, "p"), IndexEntry.fence_at(2)
    ]  # fmt: skip


def test_last_with_messages_passes_over_markers_fences_and_ids_above_the_bound(stores, pk):
    stores.log.append(pk, entry(0))
    stores.log.append(pk, entry(1))
    stores.log.append(pk, IndexEntry.epoch_marker(2, 1, False, "p"))
    stores.log.append(pk, entry(3))
    stores.log.append(pk, IndexEntry.fence_at(4))
    assert stores.log.last_with_messages(pk, 10).entry_id == 3
    assert stores.log.last_with_messages(pk, 2).entry_id == 1
    assert stores.log.last_with_messages(pk, -1) is None


def test_last_with_messages_finds_an_entry_more_than_a_page_below(stores, pk):
    stores.log.append(pk, entry(0))
    for i in range(1, 131):
        stores.log.append(pk, IndexEntry.epoch_marker(i, i, False, "p"))
    assert stores.log.last_with_messages(pk, 200).entry_id == 0


def test_range_counts_give_each_entrys_messages_and_bytes_in_the_range(stores, pk):
    stores.log.append(pk, entry(0, 2))
    stores.log.append(pk, entry(1, partial_chunk=True))
    stores.log.append(pk, IndexEntry.epoch_marker(2, 1, False, "p"))
    stores.log.append(pk, entry(3))
    counts = stores.log.range_counts(pk, 0, 3)
    assert [(c.entry_id, c.messages, c.size_bytes) for c in counts] == [
        (0, 2, 100),  # a batch of two messages
        (1, 0, 101),  # a chunk other than its message's last holds no message
        (2, 0, 0),  # a marker
        (3, 1, 103),
    ]
    assert [c.publish_ms for c in counts] == [
        e.publish_min_ms for e in stores.log.read_from(pk, 0, 9)
    ]
    assert [c.entry_id for c in stores.log.range_counts(pk, 1, 2)] == [1, 2]
    assert stores.log.range_counts(pk, 3, 2) == []


def test_producer_tail_replays_producers_and_sequence_ids_from_start(stores, pk):
    stores.log.append(pk, entry(0, producer="a", sequence_max=5))
    stores.log.append(pk, entry(1, producer="b", sequence_max=9, partial_chunk=True))
    stores.log.append(pk, IndexEntry.epoch_marker(2, 1, True, "c"))
    stores.log.append(pk, entry(3, producer="b", sequence_max=9))
    assert stores.log.producer_tail(pk, 1) == [
        (1, "b", 9, False), (2, "c", 0, False), (3, "b", 9, True)
    ]  # fmt: skip
    assert stores.log.producer_tail(pk, 4) == []


def test_exists_tells_committed_ids(stores, pk):
    stores.log.append(pk, entry(1))
    assert [stores.log.exists(pk, i) for i in (0, 1, 2)] == [False, True, False]


def test_get_many_returns_committed_ids_only_over_more_than_100_keys(stores, pk):
    for i in range(0, 150, 2):
        stores.log.append(pk, entry(i))
    found = stores.log.get_many(pk, range(150))
    assert sorted(found) == list(range(0, 150, 2))
    assert found[148] == entry(148)
    assert stores.log.get_many(pk, []) == {}


def test_ledgers_do_not_see_each_other(stores, uid):
    stores.log.append(f"persistent://c/ns/t-{uid}|1", entry(0))
    other = f"persistent://c/ns/t-{uid}|2"
    assert stores.log.last(other) is None and stores.log.read_from(other, 0, 5) == []


EXPIRES_S = 1_900_000_000


def test_an_entry_appended_once_per_key_is_refused_the_second_time_and_nothing_is_written(
    stores, pk
):
    assert stores.log.append_once(pk, entry(0), "event-1", EXPIRES_S) is True
    assert stores.log.append_once(pk, entry(1), "event-1", EXPIRES_S) is False
    assert stores.log.append_once(pk, entry(0), "event-1", EXPIRES_S) is False  # both taken
    assert stores.log.read_from(pk, 0, 10) == [entry(0)]
    assert stores.log.append_once(pk, entry(1), "event-2", EXPIRES_S) is True


def test_appending_once_at_a_taken_id_fails_the_condition_and_leaves_no_marker(stores, pk):
    stores.log.append(pk, entry(0))
    with pytest.raises(ConditionFailed):
        stores.log.append_once(pk, entry(0, producer="ingest"), "event-1", EXPIRES_S)
    assert stores.log.append_once(pk, entry(1, producer="ingest"), "event-1", EXPIRES_S)
    assert [e.producer for e in stores.log.read_from(pk, 0, 10)] == ["p-1", "ingest"]


def test_once_markers_are_per_ledger(stores, pk):
    stores.log.append_once(pk, entry(0), "event-1", EXPIRES_S)
    other = pk.replace("|1", "|2")
    assert stores.log.append_once(other, entry(0), "event-1", EXPIRES_S) is True
    assert stores.log.head(other) == 0
