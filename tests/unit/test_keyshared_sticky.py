"""STICKY selector: declared inclusive ranges, validated, never overlapping, gaps allowed."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from magnetar_core.domain.keyshared import (
    ConsumerAssignError,
    HashRangeConflict,
    StickySelector,
    validate_ranges,
)


def seed_example():
    sel = StickySelector()
    sel.add("C1", "c1", [(0, 16383), (32768, 49151)])
    sel.add("C2", "c2", [(16384, 32767), (49152, 65535)])
    return sel


def test_the_seed_example_sends_index_6067_to_c1():
    sel = seed_example()
    assert sel.select(6067) == "C1"
    assert [sel.select(h) for h in (16383, 16384, 49151, 49152, 65535)] == [
        "C1",
        "C2",
        "C1",
        "C2",
        "C2",
    ]


def test_ranges_are_each_consumers_declared_ranges_sorted():
    sel = StickySelector()
    sel.add("C1", "c1", [(500, 600), (0, 9)])
    assert sel.ranges() == {"C1": [(0, 9), (500, 600)]}


def test_a_hash_outside_every_range_selects_no_one():
    sel = StickySelector()
    sel.add("C1", "c1", [(10, 20)])
    assert [sel.select(h) for h in (9, 10, 20, 21)] == [None, "C1", "C1", None]


def test_a_single_hash_range_and_the_whole_space_are_accepted():
    sel = StickySelector()
    sel.add("C1", "c1", [(7, 7)])
    assert sel.select(7) == "C1"
    whole = StickySelector()
    whole.add("C1", "c1", [[0, 65535]])
    assert whole.ranges() == {"C1": [(0, 65535)]}


def test_a_consumer_without_ranges_is_refused():
    with pytest.raises(ConsumerAssignError, match="declared no hash ranges: give at least one"):
        StickySelector().add("C1", "c1", [])
    with pytest.raises(ConsumerAssignError, match="declared no hash ranges"):
        StickySelector().add("C1", "c1")


@pytest.mark.parametrize("bad", [(5, 4), (-1, 3), (0, 65536), (1,), ("0", 3), (0.0, 3)])
def test_an_invalid_range_is_refused_with_the_rule_spelled_out(bad):
    with pytest.raises(ConsumerAssignError, match=r"0 <= start <= end <= 65535 \(both inclusive\)"):
        StickySelector().add("C1", "c1", [bad])


def test_overlapping_ranges_of_one_consumer_are_refused():
    with pytest.raises(
        ConsumerAssignError, match=r"overlapping hash ranges \[0, 10\] and \[10, 20\]"
    ):
        validate_ranges("C1", [(10, 20), (0, 10)])


def test_adjacent_ranges_of_one_consumer_are_fine():
    assert validate_ranges("C1", [(11, 20), (0, 10)]) == [(0, 10), (11, 20)]


def test_overlap_with_another_consumer_is_refused_naming_both_and_changes_nothing():
    sel = seed_example()
    before = sel.to_dict()
    with pytest.raises(HashRangeConflict) as err:
        sel.add("C3", "c3", [(65535, 65535)])
    assert err.value.message == (
        "STICKY consumer 'C3' asked for hash range [65535, 65535], which overlaps "
        "[49152, 65535] held by consumer 'C2': choose ranges outside every connected "
        "consumer's ranges (see keyHashRangeArrays)"
    )
    assert err.value.status == 409 and err.value.code == "ConsumerAssignError"
    assert sel.to_dict() == before


def test_a_range_covering_another_consumers_range_entirely_is_refused():
    sel = StickySelector()
    sel.add("C1", "c1", [(100, 200)])
    with pytest.raises(HashRangeConflict, match=r"overlaps \[100, 200\] held by consumer 'C1'"):
        sel.add("C2", "c2", [(0, 1000)])


def test_a_removed_consumers_ranges_go_to_no_one_and_can_be_claimed_again():
    sel = seed_example()
    sel.remove("C1")
    assert sel.select(6067) is None
    assert sel.ranges() == {"C2": [(16384, 32767), (49152, 65535)]}
    sel.add("C3", "c3", [(0, 16383)])
    assert sel.select(6067) == "C3"


def test_adding_a_connected_consumer_again_is_refused():
    sel = seed_example()
    with pytest.raises(ConsumerAssignError, match="consumer 'C1' is already connected"):
        sel.add("C1", "c1", [(60000, 60001)])


def test_state_is_compact_and_round_trips():
    sel = seed_example()
    assert sel.to_dict() == {
        "m": "sticky",
        "c": [["C1", [[0, 16383], [32768, 49151]]], ["C2", [[16384, 32767], [49152, 65535]]]],
    }
    assert StickySelector.from_dict(sel.to_dict()).ranges() == sel.ranges()


@settings(max_examples=examples(100), deadline=None)
@given(
    st.lists(
        st.lists(st.tuples(st.integers(0, 65535), st.integers(0, 400)), min_size=1, max_size=4),
        max_size=8,
    ),
    st.lists(st.integers(0, 65535), max_size=60),
)
def test_accepted_consumers_never_overlap_and_round_trips_preserve_every_select(asks, probes):
    sel = StickySelector()
    for n, ask in enumerate(asks):
        ranges = [(s, min(s + w, 65535)) for s, w in ask]
        try:
            sel.add(f"c{n}", "n", ranges)
        except ConsumerAssignError:
            continue
    spans = sorted(r for rs in sel.ranges().values() for r in rs)
    assert all(b[0] > a[1] for a, b in zip(spans, spans[1:], strict=False))
    copy = StickySelector.from_dict(sel.to_dict())
    for h in [*probes, *(x for r in spans for x in r)]:
        want = next((c for c, rs in sel.ranges().items() for s, e in rs if s <= h <= e), None)
        assert sel.select(h) == copy.select(h) == want
