"""RangeSet: sorted disjoint closed ranges, checked by hand and against a plain set model."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from magnetar_core.domain.rangeset import RangeSet


def test_an_empty_range_set_is_falsy_has_no_members_and_no_first():
    rs = RangeSet()
    assert not rs
    assert len(rs) == 0
    assert rs.first() is None
    assert rs.ranges() == []
    assert list(rs) == []


def test_adding_adjacent_values_merges_them_into_one_range():
    rs = RangeSet()
    rs.add(3)
    rs.add(5)
    assert rs.ranges() == [(3, 3), (5, 5)]
    rs.add(4)
    assert rs.ranges() == [(3, 5)]


def test_adding_a_range_adjacent_on_both_sides_bridges_the_neighbours():
    rs = RangeSet([(0, 2), (6, 8)])
    rs.add_range(3, 5)
    assert rs.ranges() == [(0, 8)]


def test_adding_an_overlapping_range_spanning_several_ranges_merges_them_all():
    rs = RangeSet([(0, 1), (4, 5), (8, 9), (20, 21)])
    rs.add_range(1, 8)
    assert rs.ranges() == [(0, 9), (20, 21)]


def test_adding_a_range_inside_an_existing_range_changes_nothing():
    rs = RangeSet([(0, 10)])
    rs.add_range(3, 4)
    assert rs.ranges() == [(0, 10)]


def test_ranges_separated_by_a_gap_of_one_stay_separate():
    rs = RangeSet([(0, 1), (3, 4)])
    assert rs.ranges() == [(0, 1), (3, 4)]
    assert len(rs) == 4


def test_add_range_with_start_after_end_raises_value_error():
    with pytest.raises(ValueError, match="range start 5 is after its end 4"):
        RangeSet().add_range(5, 4)


def test_removing_a_value_in_the_middle_splits_the_range():
    rs = RangeSet([(0, 9)])
    rs.remove(4)
    assert rs.ranges() == [(0, 3), (5, 9)]
    assert len(rs) == 9


def test_removing_a_range_across_several_ranges_trims_both_ends():
    rs = RangeSet([(0, 4), (6, 8), (10, 14)])
    rs.remove_range(3, 11)
    assert rs.ranges() == [(0, 2), (12, 14)]


def test_removing_absent_values_or_an_inverted_range_changes_nothing():
    rs = RangeSet([(2, 4)])
    rs.remove(0)
    rs.remove(7)
    rs.remove_range(4, 2)
    assert rs.ranges() == [(2, 4)]


def test_remove_up_to_drops_every_member_at_or_below_the_value():
    rs = RangeSet([(0, 3), (5, 9)])
    rs.remove_up_to(6)
    assert rs.ranges() == [(7, 9)]
    rs.remove_up_to(-5)
    assert rs.ranges() == [(7, 9)]
    rs.remove_up_to(100)
    assert rs.ranges() == []


def test_take_first_removes_and_returns_the_smallest_members_in_order():
    rs = RangeSet([(2, 3), (7, 9)])
    assert rs.take_first(3) == [2, 3, 7]
    assert rs.ranges() == [(8, 9)]
    assert rs.take_first(10) == [8, 9]
    assert not rs
    assert rs.take_first(1) == []


def test_contains_is_true_only_for_members():
    rs = RangeSet([(2, 3), (7, 9)])
    assert [v for v in range(-1, 12) if v in rs] == [2, 3, 7, 8, 9]


def test_len_counts_integers_not_ranges():
    assert len(RangeSet([(0, 0), (2, 5), (10, 19)])) == 15


def test_to_list_and_from_list_round_trip_as_json_friendly_pairs():
    rs = RangeSet([(0, 2), (5, 5), (9, 12)])
    data = rs.to_list()
    assert data == [[0, 2], [5, 5], [9, 12]]
    assert RangeSet.from_list(data) == rs
    assert RangeSet.from_list([["1", "3"]]).ranges() == [(1, 3)]


def test_from_list_merges_overlapping_input_ranges():
    assert RangeSet.from_list([[5, 7], [0, 4], [6, 9]]).ranges() == [(0, 9)]


def test_copy_is_independent_of_the_original():
    rs = RangeSet([(0, 5)])
    clone = rs.copy()
    clone.remove(2)
    assert rs.ranges() == [(0, 5)]
    assert clone.ranges() == [(0, 1), (3, 5)]


def test_equality_compares_members_and_ignores_other_types():
    assert RangeSet([(0, 1), (2, 3)]) == RangeSet([(0, 3)])
    assert RangeSet([(0, 3)]) != RangeSet([(0, 4)])
    assert RangeSet() != []


values = st.integers(min_value=-20, max_value=60)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("add"), values, st.integers(min_value=0, max_value=8)),
        st.tuples(st.just("remove"), values, st.integers(min_value=0, max_value=8)),
        st.tuples(st.just("remove_up_to"), values, st.just(0)),
        st.tuples(st.just("take_first"), st.integers(min_value=0, max_value=5), st.just(0)),
    ),
    max_size=40,
)


@settings(max_examples=examples(400), deadline=None)
@given(operations)
def test_range_set_behaves_like_a_set_of_integers_under_random_operations(ops):
    rs = RangeSet()
    model: set[int] = set()
    for op, a, width in ops:
        if op == "add":
            rs.add_range(a, a + width)
            model.update(range(a, a + width + 1))
        elif op == "remove":
            rs.remove_range(a, a + width)
            model.difference_update(range(a, a + width + 1))
        elif op == "remove_up_to":
            rs.remove_up_to(a)
            model = {v for v in model if v > a}
        else:
            expected = sorted(model)[:a]
            assert rs.take_first(a) == expected
            model.difference_update(expected)
        assert list(rs) == sorted(model)
        assert len(rs) == len(model)
        assert rs.first() == (min(model) if model else None)
        ranges = rs.ranges()
        for (_, end), (start, _) in zip(ranges, ranges[1:], strict=False):
            assert start > end + 1, f"ranges not disjoint and merged: {ranges}"
        assert all(s <= e for s, e in ranges)
    for probe in range(-25, 75):
        assert (probe in rs) == (probe in model)


def test_the_compact_form_holds_gaps_and_lengths_and_reads_back_either_form():
    ranges = RangeSet([(3, 3), (10, 12), (20, 20)])

    assert ranges.to_deltas() == [3, 0, 7, 2, 8, 0]
    assert RangeSet.from_json(ranges.to_deltas()) == ranges
    assert RangeSet.from_json(ranges.to_list()) == ranges
    assert RangeSet.from_json([]) == RangeSet()


@settings(max_examples=examples(200))
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 50)), max_size=40))
def test_any_range_set_survives_its_compact_form(spans):
    ranges = RangeSet((start, start + length) for start, length in spans)

    assert RangeSet.from_json(ranges.to_deltas()) == ranges
