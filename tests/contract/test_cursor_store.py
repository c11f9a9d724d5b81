"""Contract of the cursor store: round trips of every part of a cursor, optimistic writes,
conditional deletes, listing, deleting a ledger's items, and the timer workflow's release."""

from __future__ import annotations

import threading
from dataclasses import fields

import pytest

from magnetar_core.domain.counters import OutCounters
from magnetar_core.domain.cursor.state import KEY_SHARED, ConsumerInfo, CursorState
from magnetar_core.domain.dead_letter import DeadLetter, DeadLetterPolicy
from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.producers import ProducerLease
from magnetar_core.domain.rangeset import RangeSet


@pytest.fixture
def pk(uid) -> str:
    return f"persistent://c/ns/t-{uid}|1"


def view(state: CursorState) -> dict:
    """Every field, Key_Shared state by its stored form."""
    out = {f.name: getattr(state, f.name) for f in fields(state) if f.name != "key_shared"}
    out["key_shared"] = state.key_shared.to_dict() if state.key_shared else None
    return out


def busy_cursor(name: str = "s") -> CursorState:
    state = CursorState.new(name, "Shared", 9, earliest=True)
    consumer = ConsumerInfo("c1", "one", 1000, 2000, priority=1, spread=True, role="billing")
    state.add_consumer(consumer, "Shared")
    state.add_consumer(ConsumerInfo("c2", "two", 1000, 2000), "Shared")  # no role: auth off
    state.mark_delete, state.read_position = 2, 9
    state.acked = RangeSet.from_list([[4, 5]])
    state.batch_acks, state.batch_sizes = {3: {0, 2}}, {3: 4}
    state.redeliver = RangeSet.from_list([[6, 6]])
    state.leases = {"c1": RangeSet.from_list([[7, 8]])}
    state.redelivery_counts = {6: 2}
    state.delayed = {1_800_000_000_000: RangeSet.from_list([[3, 3]])}
    state.released, state.released_max = {1_799_999_999_000}, 1_799_999_998_000
    state.timer_id, state.read_compacted, state.durable = "tid-1", True, False
    state.dead_letter_policy = DeadLetterPolicy(3, "persistent://public/default/dlq", "audit")
    state.dead_letters = [DeadLetter(0, 1, (0, 2), 2, "persistent://public/default/dlq", "a")]
    state.dead_letter_next_sequence, state.dead_letter_id = 2, "dl-1"
    state.out = OutCounters(12, 3400, 1_800_000_060_000, 2, 500, 7, 1800)
    return state


def test_an_unknown_cursor_reads_as_none(stores, pk):
    assert stores.cursors.get(pk, "nobody") is None


def test_a_new_cursor_is_written_at_version_1_and_reads_back_whole(stores, pk):
    state = busy_cursor()
    stores.cursors.put(pk, state)
    assert state.version == 1
    assert view(stores.cursors.get(pk, "s")) == view(state)


def test_a_key_shared_cursor_reads_back_its_selector_and_masks(stores, pk):
    state = CursorState.new("ks", KEY_SHARED, -1, earliest=True)
    state.add_consumer(ConsumerInfo("c1", "one", 1, 1), KEY_SHARED)
    state.add_consumer(ConsumerInfo("c2", "two", 1, 1), KEY_SHARED)
    state.key_shared.masks = {"c1": {4: {0, 3}}}
    stores.cursors.put(pk, state)
    got = stores.cursors.get(pk, "ks")
    assert got.key_shared.to_dict() == state.key_shared.to_dict()
    assert got.key_shared.masks == {"c1": {4: {0, 3}}}


def test_a_read_is_a_copy_the_caller_may_change(stores, pk):
    stores.cursors.put(pk, busy_cursor())
    mine = stores.cursors.get(pk, "s")
    mine.acked.add(100)
    mine.consumers.clear()
    assert view(stores.cursors.get(pk, "s")) != view(mine)
    assert 100 not in stores.cursors.get(pk, "s").acked


def test_creating_a_cursor_that_exists_fails_the_condition(stores, pk):
    stores.cursors.put(pk, CursorState.new("s", "Exclusive", 5, earliest=False))
    with pytest.raises(ConditionFailed):
        stores.cursors.put(pk, CursorState.new("s", "Shared", 0, earliest=True))
    assert stores.cursors.get(pk, "s").sub_type == "Exclusive"


def test_a_write_needs_the_version_it_read_and_bumps_it(stores, pk):
    stores.cursors.put(pk, CursorState.new("s", "Shared", 5, earliest=False))
    a, b = stores.cursors.get(pk, "s"), stores.cursors.get(pk, "s")
    a.mark_delete = 7
    stores.cursors.put(pk, a)
    assert a.version == 2
    b.mark_delete = 6
    with pytest.raises(ConditionFailed):
        stores.cursors.put(pk, b)
    assert b.version == 1  # unchanged by a lost write
    got = stores.cursors.get(pk, "s")
    assert (got.mark_delete, got.version) == (7, 2)


def test_a_write_of_a_cursor_deleted_meanwhile_fails_the_condition(stores, pk):
    stores.cursors.put(pk, CursorState.new("s", "Shared", 5, earliest=False))
    read = stores.cursors.get(pk, "s")
    stores.cursors.delete(pk, stores.cursors.get(pk, "s"))
    with pytest.raises(ConditionFailed):
        stores.cursors.put(pk, read)
    assert stores.cursors.get(pk, "s") is None


def test_delete_needs_the_version_it_read(stores, pk):
    stores.cursors.put(pk, CursorState.new("s", "Shared", 5, earliest=False))
    stale = stores.cursors.get(pk, "s")
    fresh = stores.cursors.get(pk, "s")
    stores.cursors.put(pk, fresh)
    with pytest.raises(ConditionFailed):
        stores.cursors.delete(pk, stale)
    stores.cursors.delete(pk, fresh)
    assert stores.cursors.get(pk, "s") is None
    with pytest.raises(ConditionFailed):
        stores.cursors.delete(pk, fresh)  # already gone


def test_list_gives_the_cursors_of_one_ledger_by_name_without_reserved_items(stores, pk, uid):
    for name in ("b", "a", "c"):
        stores.cursors.put(pk, CursorState.new(name, "Shared", 0, earliest=True))
    stores.producer_state.put_lease(pk, ProducerLease(epoch=1))
    stores.cursors.put(f"persistent://c/ns/t-{uid}|2", CursorState.new("x", "Shared", 0, True))
    assert [c.subscription for c in stores.cursors.list(pk)] == ["a", "b", "c"]
    assert all(c.version == 1 for c in stores.cursors.list(pk))
    assert stores.cursors.list(f"persistent://c/ns/t-{uid}|3") == []


def test_delete_all_removes_every_item_of_the_ledger_and_counts_them(stores, pk, uid):
    for name in ("a", "b"):
        stores.cursors.put(pk, CursorState.new(name, "Shared", 0, earliest=True))
    stores.producer_state.put_lease(pk, ProducerLease(epoch=1))
    other = f"persistent://c/ns/t-{uid}|2"
    stores.cursors.put(other, CursorState.new("x", "Shared", 0, earliest=True))
    assert stores.cursors.delete_all(pk) == 3
    assert stores.cursors.list(pk) == [] and stores.producer_state.lease(pk).epoch == 0
    assert [c.subscription for c in stores.cursors.list(other)] == ["x"]
    assert stores.cursors.delete_all(pk) == 0


def test_a_release_adds_the_bucket_and_bumps_the_version(backend, stores, pk):
    state = CursorState.new("s", "Shared", 0, earliest=True)
    state.released = {1000}
    stores.cursors.put(pk, state)
    assert backend.release(pk, "s", 2000) is True
    assert backend.release(pk, "s", 2000) is True  # adding again is harmless
    got = stores.cursors.get(pk, "s")
    assert got.released == {1000, 2000} and got.version == 3
    with pytest.raises(ConditionFailed):
        stores.cursors.put(pk, state)  # a writer that read before the release loses


def test_a_write_carries_over_exactly_the_released_buckets_of_its_state(stores, pk, backend):
    stores.cursors.put(pk, CursorState.new("s", "Shared", 0, earliest=True))
    backend.release(pk, "s", 3000)
    state = stores.cursors.get(pk, "s")
    state.released.discard(3000)  # consumed
    stores.cursors.put(pk, state)
    assert stores.cursors.get(pk, "s").released == set()


def test_a_release_of_a_missing_cursor_does_nothing(backend, stores, pk):
    assert backend.release(pk, "gone", 1000) is False
    assert stores.cursors.get(pk, "gone") is None


def test_concurrent_optimistic_writers_never_lose_an_update(stores, pk):
    stores.cursors.put(pk, CursorState.new("s", "Shared", -1, earliest=True))
    lost = []

    def advance(times: int) -> None:
        for _ in range(times):
            while True:
                state = stores.cursors.get(pk, "s")
                state.mark_delete += 1
                try:
                    stores.cursors.put(pk, state)
                    break
                except ConditionFailed:
                    lost.append(1)

    threads = [threading.Thread(target=advance, args=(10,)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    got = stores.cursors.get(pk, "s")
    assert (got.mark_delete, got.version) == (39, 41)
