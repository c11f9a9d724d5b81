"""AUTO_SPLIT hash range selector: the seed's pictures, and properties of joins and leaves."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from magnetar_core.domain.keyshared import AutoSplitSelector, ConsumerAssignError, moved_ranges


def owners(sel):
    """A 65,536-long list: the owner of every hash, built from ranges()."""
    table = [None] * 65536
    for c, rs in sel.ranges().items():
        for s, e in rs:
            table[s : e + 1] = [c] * (e - s + 1)
    return table


def joined(*ids):
    sel = AutoSplitSelector()
    for c in ids:
        sel.add(c, f"name-{c}")
    return sel


def test_an_empty_selector_selects_no_one_and_has_no_ranges():
    sel = AutoSplitSelector()
    assert sel.select(0) is None
    assert sel.ranges() == {}
    assert sel.to_dict() == {"m": "auto_split", "r": []}


def test_the_first_consumer_gets_the_whole_range():
    assert joined("C1").ranges() == {"C1": [(0, 65535)]}


def test_joins_split_the_largest_region_giving_the_newcomer_the_lower_half_as_in_the_seed():
    sel = joined("C1", "C2")
    assert sel.ranges() == {"C2": [(0, 32767)], "C1": [(32768, 65535)]}
    sel.add("C3", "n")
    assert sel.ranges() == {"C3": [(0, 16383)], "C2": [(16384, 32767)], "C1": [(32768, 65535)]}
    sel.add("C4", "n")
    assert sel.ranges() == {
        "C3": [(0, 16383)],
        "C2": [(16384, 32767)],
        "C4": [(32768, 49151)],
        "C1": [(49152, 65535)],
    }
    assert sel.consumers() == ["C3", "C2", "C4", "C1"]


def test_the_seed_example_key_index_6067_goes_to_c3():
    assert joined("C1", "C2", "C3", "C4").select(6067) == "C3"


def test_a_leave_merges_into_the_right_neighbour_as_in_the_seed():
    sel = joined("C1", "C2", "C3", "C4")
    sel.remove("C4")
    assert sel.ranges() == {"C3": [(0, 16383)], "C2": [(16384, 32767)], "C1": [(32768, 65535)]}


def test_the_last_region_merges_into_its_left_neighbour_as_in_the_seed():
    sel = joined("C1", "C2", "C3", "C4")
    sel.remove("C4")
    sel.remove("C1")
    assert sel.ranges() == {"C3": [(0, 16383)], "C2": [(16384, 65535)]}


def test_removing_the_only_consumer_empties_it_and_the_next_one_gets_everything():
    sel = joined("C1")
    sel.remove("C1")
    assert sel.select(123) is None
    sel.add("C2", "n")
    assert sel.ranges() == {"C2": [(0, 65535)]}


def test_removing_an_unknown_consumer_changes_nothing():
    sel = joined("C1", "C2")
    sel.remove("nope")
    assert sel.ranges() == {"C2": [(0, 32767)], "C1": [(32768, 65535)]}


def test_select_honours_both_ends_of_each_region():
    sel = joined("C1", "C2")
    assert [sel.select(h) for h in (0, 32767, 32768, 65535)] == ["C2", "C2", "C1", "C1"]


def test_adding_a_connected_consumer_again_is_refused():
    sel = joined("C1")
    with pytest.raises(ConsumerAssignError, match="consumer 'C1' is already connected"):
        sel.add("C1", "n")


def test_declared_hash_ranges_are_refused_because_auto_split_assigns_them():
    with pytest.raises(ConsumerAssignError, match="use a STICKY subscription"):
        AutoSplitSelector().add("C1", "n", [(0, 10)])


def test_an_odd_sized_region_gives_the_newcomer_the_smaller_lower_half():
    sel = AutoSplitSelector.from_dict({"m": "auto_split", "r": [[2, "A"], [65535, "B"]]})
    sel.add("N", "n")  # B's [3, 65535] (65533 hashes) is the largest
    assert sel.ranges()["N"] == [(3, 3 + 65533 // 2 - 1)]
    assert sel.ranges()["B"] == [(3 + 65533 // 2, 65535)]


def test_from_dict_refuses_regions_that_do_not_end_at_65535():
    with pytest.raises(ValueError, match="AUTO_SPLIT regions must end at 65535"):
        AutoSplitSelector.from_dict({"m": "auto_split", "r": [[100, "A"]]})


def test_from_dict_refuses_a_repeated_owner_and_descending_ends():
    with pytest.raises(ValueError, match="invalid or repeated"):
        AutoSplitSelector.from_dict({"m": "auto_split", "r": [[1, "A"], [65535, "A"]]})
    with pytest.raises(ValueError, match="must ascend"):
        AutoSplitSelector.from_dict({"m": "auto_split", "r": [[9, "A"], [5, "B"]]})


# A run of operations: ("add", n) adds consumer "c<n>"; ("remove", i) removes the i-th connected.
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(0, 10**6)),
        st.tuples(st.just("remove"), st.integers(0, 63)),
    ),
    max_size=40,
)


@settings(max_examples=examples(60), deadline=None)
@given(OPS)
def test_joins_move_keys_only_from_the_split_region_and_leaves_only_the_leavers(ops):
    sel = AutoSplitSelector()
    before = owners(sel)
    for op, arg in ops:
        if op == "add":
            cid = f"c{arg}"
            if cid in sel.consumers():
                continue
            sel.add(cid, "n")
            after = owners(sel)
            changed = [h for h in range(65536) if before[h] != after[h]]
            assert all(after[h] == cid for h in changed)
            assert len({before[h] for h in changed}) == 1  # one split region, one victim
            assert len(changed) == 65536 or changed == list(range(changed[0], changed[-1] + 1))
        else:
            if not sel.consumers():
                continue
            cid = sel.consumers()[arg % len(sel.consumers())]
            sel.remove(cid)
            after = owners(sel)
            changed = [h for h in range(65536) if before[h] != after[h]]
            assert changed == [h for h in range(65536) if before[h] == cid]
            assert len({after[h] for h in changed}) <= 1  # all to one merge neighbour
        before = after
        # Every hash is owned exactly once while anyone is connected.
        spans = sorted(r for rs in sel.ranges().values() for r in rs)
        if sel.consumers():
            assert spans[0][0] == 0 and spans[-1][1] == 65535
            assert all(b[0] == a[1] + 1 for a, b in zip(spans, spans[1:], strict=False))
            assert len(spans) == len(sel.consumers())


@settings(max_examples=examples(60), deadline=None)
@given(OPS, st.lists(st.integers(0, 65535), max_size=50))
def test_a_serialisation_round_trip_preserves_every_select(ops, probes):
    sel = AutoSplitSelector()
    for op, arg in ops:
        if op == "add" and f"c{arg}" not in sel.consumers():
            sel.add(f"c{arg}", "n")
        elif op == "remove" and sel.consumers():
            sel.remove(sel.consumers()[arg % len(sel.consumers())])
    copy = AutoSplitSelector.from_dict(sel.to_dict())
    assert copy.ranges() == sel.ranges()
    edges = [x for rs in sel.ranges().values() for r in rs for x in r]
    for h in [*probes, *edges, 0, 65535]:
        assert copy.select(h) == sel.select(h)


@settings(max_examples=examples(60), deadline=None)
@given(OPS)
def test_select_agrees_with_ranges_at_every_region_boundary(ops):
    sel = AutoSplitSelector()
    for op, arg in ops:
        if op == "add" and f"c{arg}" not in sel.consumers():
            sel.add(f"c{arg}", "n")
        elif op == "remove" and sel.consumers():
            sel.remove(sel.consumers()[arg % len(sel.consumers())])
    for c, rs in sel.ranges().items():
        for s, e in rs:
            assert sel.select(s) == sel.select(e) == c


def test_moved_ranges_of_a_join_name_the_split_region_and_the_newcomer():
    sel = joined("C1", "C2")
    before = sel.ranges()
    sel.add("C3", "n")
    assert moved_ranges(before, sel.ranges()) == [(0, 16383, "C2", "C3")]
