"""CursorState (Pulsar's ManagedCursor, pure): consumers, dispatch, acks, nacks, redelivery."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from magnetar_core.domain.cursor.state import EXCLUSIVE, SHARED, ConsumerInfo, CursorState, Delivery
from magnetar_core.domain.errors import ConsumerBusy
from magnetar_core.domain.rangeset import RangeSet

BIG = 10_000


def info(cid):
    return ConsumerInfo(cid, f"name-{cid}", 1, 2)


def cursor(sub_type=SHARED, consumers=("c1",)):
    state = CursorState.new("sub", sub_type, last_entry_id=-1, earliest=True)
    for cid in consumers:
        state.add_consumer(info(cid), sub_type)
    return state


def singles(*ids):
    return [(e, 1) for e in ids]


def test_a_new_cursor_sits_before_entry_zero_at_earliest_and_after_the_last_at_latest():
    state = CursorState.new("sub", SHARED, last_entry_id=9, earliest=True)
    assert (state.mark_delete, state.read_position, state.version) == (-1, 0, 0)
    assert not state.acked and not state.redeliver and state.leases == {}
    latest = CursorState.new("sub", EXCLUSIVE, last_entry_id=9, earliest=False)
    assert (latest.mark_delete, latest.read_position) == (9, 10)


@pytest.mark.parametrize(
    ("first", "second", "message"),
    [
        (EXCLUSIVE, EXCLUSIVE, "Exclusive consumer is already connected to subscription 'sub'"),
        (
            SHARED,
            EXCLUSIVE,
            "Subscription 'sub' is Shared and has consumers; a consumer of type Exclusive",
        ),
        (
            EXCLUSIVE,
            SHARED,
            "Subscription 'sub' is Exclusive and has consumers; a consumer of type Shared",
        ),
    ],
)
def test_a_second_exclusive_consumer_or_a_type_clash_is_consumer_busy(first, second, message):
    state = cursor(first)
    with pytest.raises(ConsumerBusy) as caught:
        state.add_consumer(info("c2"), second)
    assert caught.value.message.startswith(message)
    assert (list(state.consumers), state.sub_type) == (["c1"], first)


def test_many_shared_consumers_may_join_and_the_type_may_change_once_empty():
    state = cursor(SHARED, consumers=("c1", "c2", "c3"))
    assert list(state.consumers) == ["c1", "c2", "c3"]
    for cid in ("c1", "c2", "c3"):
        state.remove_consumer(cid)
    state.add_consumer(info("x"), EXCLUSIVE)
    assert state.sub_type == EXCLUSIVE


def test_dispatch_hands_out_new_entries_in_order_and_advances_the_read_position():
    state = cursor()
    out = state.dispatch("c1", singles(0, 1, 2), BIG, BIG)
    assert out == [Delivery(0, 0, None), Delivery(1, 0, None), Delivery(2, 0, None)]
    assert state.read_position == 3
    assert state.leases["c1"].ranges() == [(0, 2)]


def test_dispatch_hands_out_redeliveries_before_new_entries():
    state = cursor(consumers=("c1", "c2"))
    state.dispatch("c1", singles(0, 1, 2), BIG, BIG)
    assert state.negative_acknowledge("c1", [1]) == 1
    out = state.dispatch("c2", singles(1, 3), BIG, BIG)
    assert out == [Delivery(1, 1, None), Delivery(3, 0, None)]
    assert state.leases["c2"].ranges() == [(1, 1), (3, 3)]
    assert not state.redeliver


def test_dispatch_only_advances_over_contiguous_new_entries_starting_at_the_read_position():
    state = cursor()
    assert state.dispatch("c1", singles(1, 2), BIG, BIG) == []
    assert state.read_position == 0
    assert "c1" not in state.leases
    out = state.dispatch("c1", singles(0, 1, 3, 4), BIG, BIG)
    assert [d.entry_id for d in out] == [0, 1]
    assert state.read_position == 2


def test_skipping_ids_the_log_no_longer_holds_acknowledges_them_and_moves_the_read_position():
    state = cursor()
    assert state.skip_missing(3) == 3
    assert (state.read_position, state.mark_delete) == (3, 2)
    assert state.skip_missing(2) == 0
    out = state.dispatch("c1", singles(3, 4), BIG, BIG)
    assert [d.entry_id for d in out] == [3, 4]


def test_skipping_keeps_individual_acks_above_the_gap():
    state = cursor()
    state.dispatch("c1", singles(0), BIG, BIG)
    state.skip_missing(1)  # nothing to skip: 1 is the read position
    state.read_position = 1
    state.acked.add(7)
    assert state.skip_missing(5) == 4
    assert (state.mark_delete, state.acked.ranges()) == (-1, [(1, 4), (7, 7)])


def test_max_messages_counts_messages_and_never_splits_an_entry():
    state = cursor()
    out = state.dispatch("c1", [(0, 3), (1, 3), (2, 3)], 4, BIG)
    assert [d.entry_id for d in out] == [0, 1]
    assert state.read_position == 2
    state2 = cursor()
    assert state2.dispatch("c1", [(0, 3), (1, 3)], 3, BIG) == [Delivery(0, 0, None)]
    state3 = cursor()
    assert state3.dispatch("c1", [(0, 5), (1, 1)], 1, BIG) == [Delivery(0, 0, None)]


def test_dispatch_stops_when_the_consumer_holds_max_unacked_entries():
    state = cursor()
    state.dispatch("c1", singles(0, 1), BIG, 3)
    out = state.dispatch("c1", singles(2, 3, 4), BIG, 3)
    assert [d.entry_id for d in out] == [2]
    assert state.read_position == 3
    assert state.unacked_entries("c1") == 3


def test_stale_candidates_of_acknowledged_entries_are_not_delivered_again():
    state = cursor()
    state.dispatch("c1", singles(0, 1, 2), BIG, BIG)
    state.acknowledge([(0, -1)])
    state.negative_acknowledge("c1", [1, 2])
    state.acknowledge([(2, -1)])
    out = state.dispatch("c1", singles(0, 1, 2), BIG, BIG)
    assert out == [Delivery(1, 1, None)]


def test_redelivering_a_partly_acknowledged_batch_carries_a_mask_of_the_unacked_indexes():
    state = cursor()
    state.dispatch("c1", [(0, 4)], BIG, BIG)
    assert state.batch_sizes == {0: 4}
    assert state.acknowledge([(0, 1), (0, 3)]) == 2
    state.negative_acknowledge("c1", [0])
    out = state.dispatch("c1", [(0, 4), (1, 2), (2, 1)], 3, BIG)
    assert out == [Delivery(0, 1, (0, 2)), Delivery(1, 0, None)]
    assert state.batch_sizes == {0: 4, 1: 2}
    state.dispatch("c1", [(2, 1)], BIG, BIG)
    assert state.batch_sizes == {0: 4, 1: 2}, "single-message entries record no size"


def test_out_of_order_acks_advance_the_mark_delete_over_contiguous_ranges():
    state = cursor()
    state.dispatch("c1", singles(0, 1, 2, 3, 4), BIG, BIG)
    assert state.acknowledge([(1, -1), (3, -1)]) == 2
    assert (state.mark_delete, state.acked.ranges()) == (-1, [(1, 1), (3, 3)])
    assert state.leases["c1"].ranges() == [(0, 0), (2, 2), (4, 4)]
    assert state.acknowledge([(0, -1)]) == 1
    assert (state.mark_delete, state.acked.ranges()) == (1, [(3, 3)])
    assert state.acknowledge([(2, -1)]) == 1
    assert (state.mark_delete, state.acked.ranges()) == (3, [])
    assert state.leases["c1"].ranges() == [(4, 4)]


def test_batch_index_acks_complete_an_entry_once_every_index_is_acknowledged():
    state = cursor()
    state.dispatch("c1", [(0, 3)], BIG, BIG)
    assert state.acknowledge([(0, 0), (0, 2)]) == 2
    assert (state.mark_delete, state.batch_acks) == (-1, {0: {0, 2}})
    assert state.leases["c1"].ranges() == [(0, 0)]
    assert state.acknowledge([(0, 1)]) == 1
    assert state.mark_delete == 0
    assert (state.batch_acks, state.batch_sizes, state.leases) == ({}, {}, {})


def test_acks_at_or_beyond_the_read_position_are_ignored():
    state = cursor()
    state.dispatch("c1", singles(0, 1), BIG, BIG)
    assert state.acknowledge([(2, -1), (7, 0)]) == 0
    assert (state.mark_delete, state.acked.ranges(), state.batch_acks) == (-1, [], {})


def test_duplicate_acks_and_acks_below_the_mark_delete_are_no_ops():
    state = cursor()
    state.dispatch("c1", singles(0, 1, 2), BIG, BIG)
    assert state.acknowledge([(0, -1), (2, -1)]) == 2
    assert state.acknowledge([(0, -1), (2, -1), (2, -1)]) == 0
    assert (state.mark_delete, state.acked.ranges()) == (0, [(2, 2)])


def test_acking_the_same_batch_index_twice_changes_nothing_the_second_time():
    state = cursor()
    state.dispatch("c1", [(0, 3)], BIG, BIG)
    assert state.acknowledge([(0, 1)]) == 1
    assert state.acknowledge([(0, 1)]) == 0


def test_acking_batch_indexes_outside_the_batch_does_not_acknowledge_the_entry():
    state = cursor()
    state.dispatch("c1", [(0, 3)], BIG, BIG)
    state.acknowledge([(0, 5), (0, 6), (0, 7)])
    assert state.mark_delete == -1
    assert state.leases["c1"].ranges() == [(0, 0)]


def test_cumulative_ack_of_whole_entries_moves_the_mark_delete_and_drops_leases():
    state = cursor(EXCLUSIVE)
    state.dispatch("c1", singles(0, 1, 2, 3, 4), BIG, BIG)
    assert state.acknowledge_cumulative(2, -1) == 3
    assert state.mark_delete == 2
    assert state.leases["c1"].ranges() == [(3, 4)]
    assert state.acknowledge_cumulative(1, -1) == 0


def test_cumulative_ack_inside_a_batch_acks_the_indexes_up_to_it():
    state = cursor(EXCLUSIVE)
    state.dispatch("c1", [(0, 1), (1, 3), (2, 1)], BIG, BIG)
    assert state.acknowledge_cumulative(1, 1) == 1
    assert (state.mark_delete, state.batch_acks) == (0, {1: {0, 1}})
    state.redeliver_all("c1")
    assert state.dispatch("c1", [(1, 3), (2, 1)], BIG, BIG) == [
        Delivery(1, 1, (2,)),
        Delivery(2, 1, None),
    ]
    assert state.acknowledge_cumulative(1, 2) == 1
    assert (state.mark_delete, state.batch_acks, state.batch_sizes) == (1, {}, {})


def test_cumulative_ack_beyond_the_read_position_clamps_to_the_last_dispatched_entry():
    state = cursor(EXCLUSIVE)
    state.dispatch("c1", [(0, 1), (1, 1), (2, 4)], BIG, BIG)
    assert state.acknowledge_cumulative(10, 1) == 3
    assert (state.mark_delete, state.read_position, state.leases) == (2, 3, {})
    assert state.batch_sizes == {}


def test_cumulative_ack_also_absorbs_individually_acked_entries_after_it():
    state = cursor(EXCLUSIVE)
    state.dispatch("c1", singles(0, 1, 2, 3, 4), BIG, BIG)
    state.acknowledge([(3, -1)])
    assert state.acknowledge_cumulative(2, -1) == 4
    assert (state.mark_delete, state.acked.ranges()) == (3, [])


def test_cumulative_ack_completing_a_partly_acked_batch_acknowledges_the_entry():
    state = cursor(EXCLUSIVE)
    state.dispatch("c1", [(0, 3)], BIG, BIG)
    state.acknowledge([(0, 2)])
    state.acknowledge_cumulative(0, 1)
    assert state.mark_delete == 0
    assert state.leases == {}


def test_nack_only_moves_entries_leased_to_that_consumer_and_bumps_their_count():
    state = cursor(consumers=("c1", "c2"))
    state.dispatch("c1", singles(0, 1), BIG, BIG)
    state.dispatch("c2", singles(2, 3), BIG, BIG)
    assert state.negative_acknowledge("c1", [1, 1, 2, 9]) == 1
    assert state.redeliver.ranges() == [(1, 1)]
    assert state.redelivery_counts == {1: 1}
    assert state.leases["c1"].ranges() == [(0, 0)]
    assert state.leases["c2"].ranges() == [(2, 3)]
    assert state.negative_acknowledge("c3", [2]) == 0
    state.dispatch("c2", singles(1), BIG, BIG)
    state.negative_acknowledge("c2", [1])
    assert state.redelivery_counts == {1: 2}
    assert state.dispatch("c1", singles(1), BIG, BIG) == [Delivery(1, 2, None)]


def test_an_uncounted_nack_makes_entries_available_again_with_their_count_unchanged():
    state = cursor()
    state.dispatch("c1", singles(0, 1), BIG, BIG)
    state.negative_acknowledge("c1", [0])
    state.dispatch("c1", singles(0), BIG, BIG)
    assert state.negative_acknowledge("c1", [0, 1], counted=False) == 2
    assert state.redeliver.ranges() == [(0, 1)] and state.redelivery_counts == {0: 1}
    assert state.dispatch("c1", singles(0, 1), BIG, BIG) == [
        Delivery(0, 1, None),
        Delivery(1, 0, None),
    ]


def test_redeliver_all_sends_every_lease_of_the_consumer_back_with_count_plus_one():
    state = cursor(consumers=("c1", "c2"))
    state.dispatch("c1", singles(0, 1, 2), BIG, BIG)
    state.dispatch("c2", singles(3), BIG, BIG)
    assert state.redeliver_all("c1") == 3
    assert state.redeliver.ranges() == [(0, 2)]
    assert state.redelivery_counts == {0: 1, 1: 1, 2: 1}
    assert list(state.leases) == ["c2"]
    assert state.redeliver_all("c1") == 0


def test_removing_a_consumer_unregisters_it_and_requeues_its_leases():
    state = cursor(consumers=("c1", "c2"))
    state.dispatch("c1", singles(0, 1), BIG, BIG)
    assert state.remove_consumer("c1") == 2
    assert list(state.consumers) == ["c2"]
    assert (state.redeliver.ranges(), state.redelivery_counts) == ([(0, 1)], {0: 1, 1: 1})
    assert state.unacked_entries() == 0


# -- property: random interleavings across 3 consumers keep the cursor consistent -----------

CONSUMERS = ("c0", "c1", "c2")
OPS = ("dispatch", "ack", "ack_any", "nack", "redeliver", "close")
op = st.tuples(
    st.sampled_from(OPS), st.sampled_from(CONSUMERS), st.integers(0, 20), st.integers(-1, 3)
)


def _candidates(state, counts, max_messages):
    redeliveries = list(state.redeliver)[:max_messages]
    end = min(len(counts), state.read_position + max_messages)
    return [(e, counts[e]) for e in redeliveries + list(range(state.read_position, end))]


def _check(state, counts, acked_idx, nacks):
    done = {e for e, idx in acked_idx.items() if len(idx) >= counts[e]}
    leased = [set(lease) for lease in state.leases.values()]
    in_flight = set().union(*leased)
    assert sum(map(len, leased)) == len(in_flight), "an entry is leased to two consumers"
    redeliver = set(state.redeliver)
    assert not in_flight & redeliver
    assert not (in_flight | redeliver) & done, "an acked entry is still leased or queued"
    assert all(e in done for e in range(state.mark_delete + 1))
    assert set(state.acked) == {e for e in done if e > state.mark_delete}
    outstanding = set(range(state.mark_delete + 1, state.read_position)) - done
    assert in_flight | redeliver == outstanding, "an entry was lost or invented"
    if all(e in done for e in range(state.read_position)):
        assert state.mark_delete == state.read_position - 1
    for e in outstanding:
        assert state.redelivery_counts.get(e, 0) == nacks.get(e, 0)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=12), st.lists(op, max_size=60))
def test_random_interleavings_across_three_consumers_keep_the_cursor_invariants(counts, ops):
    state = cursor(SHARED, consumers=CONSUMERS)
    acked_idx: dict[int, set[int]] = {}
    nacks: dict[int, int] = {}

    def ack(entry_id, batch_index):
        if entry_id >= state.read_position or entry_id >= len(counts):
            return
        size = counts[entry_id]
        if batch_index >= 0 and size > 1:
            batch_index %= size
            acked_idx.setdefault(entry_id, set()).add(batch_index)
        else:
            acked_idx[entry_id] = set(range(size))
        state.acknowledge([(entry_id, batch_index)])

    for name, cid, n, b in ops:
        lease = sorted(state.leases.get(cid, RangeSet()))
        if name == "dispatch":
            n = n % 6 + 1
            for d in state.dispatch(cid, _candidates(state, counts, n), n, 5):
                assert d.redelivery_count == nacks.get(d.entry_id, 0)
                acked = acked_idx.get(d.entry_id)
                want = None if not acked else tuple(sorted(set(range(counts[d.entry_id])) - acked))
                assert d.batch_indexes == want
        elif name == "ack" and lease:
            ack(lease[n % len(lease)], b)
        elif name == "ack_any":
            ack(n % 15, b)
        elif name == "nack" and lease:
            picked = lease[n % len(lease)]
            assert state.negative_acknowledge(cid, [picked]) == 1
            nacks[picked] = nacks.get(picked, 0) + 1
        elif name in ("redeliver", "close"):
            for e in lease:
                nacks[e] = nacks.get(e, 0) + 1
            if name == "close":
                assert state.remove_consumer(cid) == len(lease)
                state.add_consumer(info(cid), SHARED)
            else:
                assert state.redeliver_all(cid) == len(lease)
        _check(state, counts, acked_idx, nacks)

    for _ in range(4 * len(counts) + 4):
        for cid in CONSUMERS:
            state.dispatch(cid, _candidates(state, counts, 100), 100, 5)
            lease = state.leases.get(cid, RangeSet())
            for e in list(lease):
                ack(e, -1)
    assert (state.mark_delete, state.read_position) == (len(counts) - 1, len(counts))
    assert state.leases == {} and not state.redeliver and not state.acked
