"""Consistent hashing selector: the seed's ring, collisions, and properties of joins/leaves."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from magnetar_core.domain.keyshared import (
    ConsistentHashingSelector,
    ConsumerAssignError,
    moved_ranges,
    murmur3_32,
    ring_points,
)

NAME = "orders-aggregator-pod-2345-consumer"


def owners(sel):
    table = [None] * 65536
    for c, rs in sel.ranges().items():
        for s, e in rs:
            table[s : e + 1] = [c] * (e - s + 1)
    return table


def test_the_seed_example_point_values_are_the_murmur3_of_name_and_number_mod_65535():
    # The seed's numbers (1003084738 -> 6028, ...) are those of the key without separators;
    # they pin the hash function and the modulus.
    assert [murmur3_32(f"{NAME}{i}".encode()) for i in (1, 2, 100)] == [
        1003084738,
        373317202,
        320276078,
    ]
    assert [murmur3_32(f"{NAME}{i}".encode()) % 65535 for i in (1, 2, 100)] == [6028, 29842, 6533]


def test_ring_points_use_the_seeds_name_nul_index_nul_number_key_for_numbers_1_to_100():
    points = ring_points(NAME, 0)
    assert len(points) == 100
    assert points[0] == murmur3_32(f"{NAME}\x000\x001".encode()) % 65535 == 2182
    assert points[1] == 50956
    assert points[99] == murmur3_32(f"{NAME}\x000\x00100".encode()) % 65535
    assert ring_points(NAME, 1) != points


def test_an_empty_ring_selects_no_one():
    sel = ConsistentHashingSelector()
    assert sel.select(5) is None
    assert sel.ranges() == {}


def test_one_consumer_owns_every_hash():
    sel = ConsistentHashingSelector()
    sel.add("c1", NAME)
    assert sel.ranges() == {"c1": [(0, 65535)]}
    assert sel.select(0) == sel.select(65535) == "c1"


def test_a_hash_goes_to_the_first_point_at_or_after_it_and_wraps_past_the_last():
    sel = ConsistentHashingSelector(points=1)
    sel.add("a", "x")
    sel.add("b", "y")
    pa, pb = ring_points("x", 0, 1)[0], ring_points("y", 0, 1)[0]
    low, high = sorted([(pa, "a"), (pb, "b")])
    assert sel.select(low[0]) == low[1]
    assert sel.select(low[0] + 1) == high[1]
    assert sel.select(high[0]) == high[1]
    assert sel.select((high[0] + 1) % 65536) == low[1]
    assert sel.ranges()[high[1]] == [(low[0] + 1, high[0])]
    lower_ranges = [(0, low[0])] + ([(high[0] + 1, 65535)] if high[0] < 65535 else [])
    assert sel.ranges()[low[1]] == lower_ranges


def test_consumers_with_the_same_name_get_distinct_name_indexes_and_points():
    sel = ConsistentHashingSelector()
    sel.add("c1", "same")
    sel.add("c2", "same")
    assert sel.to_dict()["c"] == [["c1", "same", 0], ["c2", "same", 1]]
    assert set(sel.ranges()) == {"c1", "c2"}


def test_a_freed_name_index_is_reused_by_the_next_consumer_with_that_name():
    sel = ConsistentHashingSelector()
    for cid in ("c1", "c2", "c3"):
        sel.add(cid, "same")
    sel.remove("c2")
    sel.add("c4", "same")
    assert sel.to_dict()["c"] == [["c1", "same", 0], ["c3", "same", 2], ["c4", "same", 1]]


def test_on_a_collision_the_first_added_owns_the_point_and_the_next_takes_over_on_leave():
    # Same name and index gives identical points: a full collision.
    sel = ConsistentHashingSelector.from_dict(
        {"m": "consistent_hashing", "p": 100, "c": [["first", "n", 0], ["second", "n", 0]]}
    )
    assert sel.ranges() == {"first": [(0, 65535)]}
    sel.remove("first")
    assert sel.ranges() == {"second": [(0, 65535)]}


def test_adding_a_connected_consumer_again_or_with_ranges_is_refused():
    sel = ConsistentHashingSelector()
    sel.add("c1", "n")
    with pytest.raises(ConsumerAssignError, match="consumer 'c1' is already connected"):
        sel.add("c1", "n")
    with pytest.raises(ConsumerAssignError, match="use a STICKY subscription"):
        sel.add("c2", "n", [(0, 1)])


def test_fewer_than_one_point_per_consumer_is_refused():
    with pytest.raises(ValueError, match="at least 1"):
        ConsistentHashingSelector(points=0)


def test_removing_an_unknown_consumer_changes_nothing():
    sel = ConsistentHashingSelector()
    sel.add("c1", "n")
    sel.remove("zz")
    assert sel.ranges() == {"c1": [(0, 65535)]}


NAMES = st.sampled_from(["a", "b", "c", "pod-1", "pod-2", "same"])
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), NAMES),
        st.tuples(st.just("remove"), st.integers(0, 63)),
    ),
    max_size=25,
)


@settings(max_examples=examples(40), deadline=None)
@given(OPS, st.integers(1, 100))
def test_a_join_moves_keys_only_to_the_newcomer_and_a_leave_only_the_leavers(ops, points):
    sel = ConsistentHashingSelector(points=points)
    before = owners(sel)
    for n, (op, arg) in enumerate(ops):
        if op == "add":
            cid = f"c{n}"
            sel.add(cid, arg)
            after = owners(sel)
            assert all(after[h] == cid for h in range(65536) if before[h] != after[h])
        else:
            if not sel.consumers():
                continue
            cid = sel.consumers()[arg % len(sel.consumers())]
            sel.remove(cid)
            after = owners(sel)
            changed = [h for h in range(65536) if before[h] != after[h]]
            assert changed == [h for h in range(65536) if before[h] == cid]
        before = after
        if sel.consumers():
            assert None not in after
            assert sum(e - s + 1 for rs in sel.ranges().values() for s, e in rs) == 65536


@settings(max_examples=examples(40), deadline=None)
@given(OPS, st.lists(st.integers(0, 65535), max_size=50))
def test_a_serialisation_round_trip_preserves_every_select(ops, probes):
    sel = ConsistentHashingSelector()
    for n, (op, arg) in enumerate(ops):
        if op == "add":
            sel.add(f"c{n}", arg)
        elif sel.consumers():
            sel.remove(sel.consumers()[arg % len(sel.consumers())])
    copy = ConsistentHashingSelector.from_dict(sel.to_dict())
    assert copy.ranges() == sel.ranges()
    edges = [x for rs in sel.ranges().values() for r in rs for x in r]
    for h in [*probes, *edges, 0, 65535]:
        assert copy.select(h) == sel.select(h)


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(NAMES, min_size=1, max_size=8), st.lists(st.integers(0, 65535), max_size=200))
def test_select_agrees_with_ranges(names, probes):
    sel = ConsistentHashingSelector()
    for n, name in enumerate(names):
        sel.add(f"c{n}", name)
    table = owners(sel)
    edges = [x for rs in sel.ranges().values() for r in rs for x in r]
    for h in [*probes, *edges]:
        assert sel.select(h) == table[h]


def test_moved_ranges_of_a_join_all_go_to_the_newcomer():
    sel = ConsistentHashingSelector()
    sel.add("c1", "a")
    sel.add("c2", "b")
    before = sel.ranges()
    sel.add("c3", "c")
    moves = moved_ranges(before, sel.ranges())
    assert moves and {m[3] for m in moves} == {"c3"}
    assert {m[2] for m in moves} <= {"c1", "c2"}
