"""The expire job's cursor changes, pure: TTL mark-delete moves and their retried writes."""

from __future__ import annotations

import copy

from magnetar_core.domain.cursor.state import (
    KEY_SHARED,
    SHARED,
    ConsumerInfo,
    CursorState,
    Delivery,
)
from magnetar_core.domain.dead_letter import DeadLetter
from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.rangeset import RangeSet
from magnetar_jobs.expire_cursors import CursorAction, CursorOutcome, advance_mark_delete, apply

LOW, HIGH = 100, 40_000  # with two AUTO_SPLIT consumers: c2 owns [0, 32767], c1 the rest


def shared_cursor() -> CursorState:
    state = CursorState.new("sub", SHARED, last_entry_id=-1, earliest=True)
    state.add_consumer(ConsumerInfo("c1", "one", 1, 1), SHARED)
    state.dispatch("c1", [(e, 1) for e in range(8)], 100, 100)
    return state


def test_advancing_acknowledges_everything_up_to_the_entry_and_drops_its_traces():
    state = shared_cursor()
    state.acknowledge([(3, -1), (6, -1)])
    state.negative_acknowledge("c1", [2])
    state.batch_sizes[4] = 3
    state.batch_acks[4] = {0}
    state.defer(5, 1_000)
    state.defer(7, 2_000)
    assert advance_mark_delete(state, 5) == 7  # from -1 to 6
    assert state.mark_delete == 6  # 6 was acknowledged already: the mark-delete joins it
    assert state.acked.to_list() == []
    assert state.redeliver.to_list() == []
    assert state.leases["c1"].to_list() == [[7, 7]]
    assert (state.batch_acks, state.batch_sizes, state.redelivery_counts) == ({}, {}, {})
    assert {b: r.to_list() for b, r in state.delayed.items()} == {2_000: [[7, 7]]}
    assert state.read_position == 8


def test_advancing_expires_dead_letter_outbox_items_below_it():
    state = shared_cursor()
    state.dead_letters = [DeadLetter(0, 2, None, 1, "t-DLQ"), DeadLetter(1, 6, None, 1, "t-DLQ")]
    advance_mark_delete(state, 4)
    assert [d.entry_id for d in state.dead_letters] == [6]


def test_advancing_past_the_read_position_moves_it_too():
    state = CursorState.new("sub", SHARED, last_entry_id=-1, earliest=True)
    assert advance_mark_delete(state, 9) == 10
    assert (state.mark_delete, state.read_position) == (9, 10)


def test_advancing_never_moves_a_cursor_backwards():
    state = shared_cursor()
    state.acknowledge([(e, -1) for e in range(6)])
    assert advance_mark_delete(state, 3) == 0
    assert (state.mark_delete, state.leases["c1"].to_list()) == (5, [[6, 7]])


def test_advancing_a_key_shared_cursor_releases_masks_and_draining_hashes():
    hashes = {0: (LOW,), 1: (LOW,), 2: (HIGH,)}

    def hashes_of(entry_ids):
        return {e: hashes[e] for e in entry_ids}

    state = CursorState.new("sub", KEY_SHARED, last_entry_id=-1, earliest=True)
    state.add_consumer(ConsumerInfo("c1", "one", 1, 1), KEY_SHARED, None, hashes_of)
    assert state.dispatch_key_shared("c1", [(0, (LOW,))], 1, 100) == [Delivery(0, 0, None)]
    state.add_consumer(ConsumerInfo("c2", "two", 1, 1), KEY_SHARED, None, hashes_of)
    assert state.key_shared.draining.stats("c1")["drainingHashesCount"] == 1
    assert advance_mark_delete(state, 0, hashes_of) == 1
    assert state.key_shared.draining.stats("c1")["drainingHashesCount"] == 0
    assert state.leases == {}
    assert state.key_shared.masks == {}


class Store:
    """A CursorStore stand-in: one cursor, versions checked, some writes lost to a rival."""

    def __init__(self, state: CursorState | None, lose: int = 0):
        self.state, self.lose, self.puts, self.deletes = state, lose, 0, 0

    def get(self, pk, sub):
        if self.state is None:
            return None
        return copy.deepcopy(self.state)

    def _race(self):
        if self.lose:
            self.lose -= 1
            raise ConditionFailed("lost")

    def put(self, pk, state):
        self._race()
        self.puts += 1
        state.version += 1
        self.state = state

    def delete(self, pk, state):
        self._race()
        self.deletes += 1
        self.state = None


NOW, LEASE = 1_000_000, 60_000


def test_apply_moves_the_mark_delete_and_expires_lapsed_consumers_retrying_lost_races():
    state = shared_cursor()
    state.add_consumer(ConsumerInfo("c2", "two", 1, NOW - 10), SHARED)
    store = Store(state, lose=2)
    outcome = apply(store, "pk", CursorAction("sub", 4, True, False), NOW, LEASE, sleep=lambda s: 0)
    assert outcome == CursorOutcome(ok=True, moved=1, consumers_expired=1)
    assert store.puts == 1
    assert store.state.mark_delete == 4
    assert sorted(store.state.consumers) == ["c2"]
    assert store.state.redeliver.to_list() == [[5, 7]]


def test_apply_deletes_a_reader_left_without_consumers():
    state = CursorState.new("reader", "Exclusive", -1, True)
    state.durable = False
    state.add_consumer(ConsumerInfo("r", "r", 1, 1), "Exclusive")
    store = Store(state)
    outcome = apply(store, "pk", CursorAction("reader", None, True, True), NOW, LEASE)
    assert outcome == CursorOutcome(ok=True, consumers_expired=1, dropped=1)
    assert (store.deletes, store.state) == (1, None)


def test_apply_reports_a_reader_that_came_back_so_its_entries_stay():
    state = CursorState.new("reader", "Exclusive", -1, True)
    state.durable = False
    state.add_consumer(ConsumerInfo("r", "r", 1, NOW), "Exclusive")
    store = Store(state)
    outcome = apply(store, "pk", CursorAction("reader", None, False, True), NOW, LEASE)
    assert outcome == CursorOutcome(ok=False)
    assert store.state is not None


def test_apply_is_fine_with_a_cursor_gone_meanwhile_and_gives_up_on_endless_races():
    assert apply(Store(None), "pk", CursorAction("s", 3, False, False), NOW, LEASE).ok
    busy = Store(shared_cursor(), lose=100)
    outcome = apply(
        busy,
        "pk",
        CursorAction("sub", 3, False, False),
        NOW,
        LEASE,
        max_attempts=3,
        sleep=lambda s: 0,
    )
    assert outcome == CursorOutcome(ok=False)
    assert busy.state.mark_delete == -1
    assert RangeSet() == busy.state.acked
