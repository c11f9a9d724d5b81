"""The parts of a CursorState, each on its own, pure: ack records, read state, consumer
roster, delayed set, dead letter outbox, Key_Shared state rules, delegated attributes."""

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from magnetar_core.domain.cursor.acks import Acked, AckRecords
from magnetar_core.domain.cursor.consumers import ConsumerRoster
from magnetar_core.domain.cursor.dead_letters import DeadLetterOutbox
from magnetar_core.domain.cursor.delays import DelayedSet
from magnetar_core.domain.cursor.key_shared_state import KeySharedOptions, KeySharedState
from magnetar_core.domain.cursor.reads import ReadState
from magnetar_core.domain.cursor.records import EXCLUSIVE, SHARED, ConsumerInfo
from magnetar_core.domain.cursor.state import CursorState
from magnetar_core.domain.dead_letter import DeadLetterPolicy
from magnetar_core.domain.errors import ConsumerBusy
from magnetar_core.domain.rangeset import RangeSet
from magnetar_wire.names import TopicName

CURSOR_PACKAGE = Path(importlib.import_module("magnetar_core.domain.cursor").__file__).parent


# -- AckRecords ----------------------------------------------------------------------------


def test_an_ack_record_acknowledges_a_batch_entry_once_its_last_index_is_acked():
    acks = AckRecords(mark_delete=4, batch_sizes={6: 3})
    assert acks.acknowledge(6, 0) is Acked.MESSAGE
    assert acks.acknowledge(6, 0) is Acked.NOTHING
    assert acks.acknowledge(6, 7) is Acked.NOTHING
    assert acks.delivery_mask(6, 3) == (1, 2)
    assert acks.acknowledge(6, 2) is Acked.MESSAGE
    assert acks.acknowledge(6, 1) is Acked.ENTRY
    assert (acks.acked.to_list(), acks.batch_acks, acks.batch_sizes) == ([[6, 6]], {}, {})


def test_the_mark_delete_advances_over_the_acked_range_touching_it_only():
    acks = AckRecords(mark_delete=4, acked=RangeSet([(5, 7), (9, 9)]))
    acks.advance()
    assert (acks.mark_delete, acks.acked.to_list()) == (7, [[9, 9]])
    assert acks.is_acked(3) and acks.is_acked(9) and not acks.is_acked(8)


def test_a_cumulative_ack_inside_a_batch_covers_the_entries_before_it():
    acks = AckRecords(mark_delete=-1, batch_sizes={3: 4})
    assert acks.ack_through(3, 1) == 2
    assert acks.batch_acks == {3: {0, 1}}
    assert acks.ack_through(3, 3) == 3
    assert acks.ack_through(8, -1) == 8


def test_forgetting_and_resetting_drop_the_ack_records():
    acks = AckRecords(-1, RangeSet([(2, 2), (8, 8)]), {5: {0}, 9: {1}}, {5: 2, 9: 3})
    acks.forget_up_to(5)
    assert (acks.acked.to_list(), acks.batch_acks, acks.batch_sizes) == ([[8, 8]], {9: {1}}, {9: 3})
    acks.reset(12, skip=2, batch_size=5)
    assert (acks.mark_delete, acks.acked, acks.batch_acks) == (11, RangeSet(), {12: {0, 1}})
    assert acks.unacked_messages(12) == 3


# -- ReadState -----------------------------------------------------------------------------


def test_the_read_state_claims_redeliveries_and_the_next_new_entry_only():
    reads = ReadState(read_position=5, redeliver=RangeSet([(2, 2)]))
    assert reads.claim(2) and reads.claim(5)
    assert not reads.claim(3) and not reads.claim(7)
    assert (reads.read_position, reads.redeliver) == (6, RangeSet())


def test_the_read_state_counts_redeliveries_and_forgets_acknowledged_entries():
    reads = ReadState(4, RangeSet([(1, 3)]))
    reads.went_back(2)
    reads.went_back(2)
    reads.went_back(3)
    assert reads.count_of(2) == 2 and reads.count_of(1) == 0
    reads.forget(3)
    reads.forget_up_to(1)
    assert (reads.redeliver.to_list(), reads.redelivery_counts) == ([[2, 2]], {2: 2})
    assert reads.window(1) == ([2], False)
    assert reads.skip_to(9) == 5 and reads.skip_to(3) == 0 and reads.read_position == 9


# -- ConsumerRoster ------------------------------------------------------------------------


def test_the_roster_refuses_a_second_exclusive_consumer_and_a_type_clash():
    roster = ConsumerRoster()
    roster.admit(EXCLUSIVE, SHARED, "s")  # nobody connected: any type may come
    roster.register(ConsumerInfo("c1", "one", 0, 0))
    with pytest.raises(ConsumerBusy, match="Exclusive consumer is already connected"):
        roster.admit(EXCLUSIVE, EXCLUSIVE, "s")
    with pytest.raises(ConsumerBusy, match="is Exclusive and has consumers"):
        roster.admit(SHARED, EXCLUSIVE, "s")


def test_the_roster_records_liveness_at_most_once_per_interval_and_finds_lapsed_ones():
    roster = ConsumerRoster({"c1": ConsumerInfo("c1", "one", 0, 1_000)})
    assert not roster.touch("c1", 1_500, every_ms=1_000)
    assert roster.touch("c1", 2_000, every_ms=1_000)
    assert not roster.touch("nobody", 9_000, every_ms=1)
    assert roster.lapsed(now_ms=4_000, lease_ms=2_500) == []
    assert roster.lapsed(now_ms=4_001, lease_ms=2_000) == ["c1"]


def test_the_roster_keeps_no_empty_leases_after_forgetting_entries():
    roster = ConsumerRoster(leases={"c1": RangeSet([(3, 3)]), "c2": RangeSet([(4, 6)])})
    assert roster.holds(5) and not roster.holds(7)
    assert roster.in_flight().to_list() == [[3, 6]]
    roster.forget(3)
    assert set(roster.leases) == {"c2"}
    roster.release("c2", 4)
    roster.forget_up_to(6)
    assert roster.leases == {"c2": RangeSet()}
    roster.drop_empty()
    assert roster.leases == {} and roster.unacked_entries() == 0


# -- DelayedSet ----------------------------------------------------------------------------


def test_a_delayed_bucket_is_consumed_once_released_and_due():
    delays = DelayedSet()
    assert delays.defer(3, 5_000) and not delays.defer(4, 5_000) and delays.defer(9, 7_000)
    delays.released = {5_000}
    assert delays.consume_releases(now_ms=4_999) == []
    assert delays.consume_releases(now_ms=5_000) == [3, 4]
    assert (delays.released, delays.released_max, delays.next_due()) == (set(), 5_000, 7_000)
    assert not delays.pending(5_000) and delays.pending(7_000) and not delays.pending(None)


def test_an_overdue_bucket_is_consumed_after_the_grace_without_a_release():
    delays = DelayedSet({1_000: RangeSet([(2, 3)])})
    assert delays.consume_releases(now_ms=1_500, grace_ms=500) == []
    assert delays.consume_releases(now_ms=1_501, grace_ms=500) == [2, 3]


def test_forgetting_delayed_entries_drops_empty_buckets():
    delays = DelayedSet({10: RangeSet([(1, 2)]), 20: RangeSet([(5, 5)])}, released_max=7)
    delays.forget([5], up_to=1)
    assert (delays.delayed, delays.count()) == ({10: RangeSet([(2, 2)])}, 1)
    assert delays.to_dict() == {"dl": {"10": [[2, 2]]}, "drel": 7}


# -- DeadLetterOutbox ----------------------------------------------------------------------


def test_the_outbox_takes_exhausted_entries_with_growing_sequence_ids():
    outbox = DeadLetterOutbox(DeadLetterPolicy(2))
    assert outbox.exhausted({4: 3, 5: 2, 6: 3}, lambda e: e != 6) == [4]
    topic = TopicName.parse("persistent://a/b/t")
    outbox.enqueue(4, None, 3, topic, "sub", "id-1")
    outbox.enqueue(8, (1,), 1, topic, "sub", "id-2")
    assert outbox.producer_id == "id-1" and outbox.next_sequence == 4
    assert [(d.sequence_id, d.entry_id, d.topic) for d in outbox.items] == [
        (0, 4, "persistent://a/b/t-sub-DLQ"),
        (3, 8, "persistent://a/b/t-sub-DLQ"),
    ]
    assert [d.entry_id for d in outbox.settle(2)] == [4] and outbox.settle(2) == []
    assert DeadLetterOutbox.from_dict(outbox.to_dict()) == outbox


def test_an_outbox_without_a_policy_finds_nothing_and_refuses_items():
    outbox = DeadLetterOutbox()
    assert outbox.exhausted({1: 99}, lambda e: True) == []
    with pytest.raises(ValueError):
        outbox.enqueue(1, None, 1, TopicName.parse("persistent://a/b/t"), "s", "x")
    assert outbox.to_dict() == {} and DeadLetterOutbox.from_dict({}) == outbox


# -- KeySharedState rules ------------------------------------------------------------------


def test_a_join_with_other_options_than_the_subscriptions_is_refused():
    ks = KeySharedState.for_join(None, KeySharedOptions(), "s")
    ks.join("c1", "one", KeySharedOptions())
    assert KeySharedState.for_join(ks, KeySharedOptions(), "s") is ks
    with pytest.raises(ConsumerBusy, match="uses AUTO_SPLIT"):
        KeySharedState.for_join(ks, KeySharedOptions(allow_out_of_order=True), "s")


def test_a_second_consumer_joining_moves_hash_ranges_and_masks_track_partial_leases():
    ks = KeySharedState.for_join(None, KeySharedOptions(), "s")
    assert ks.join("c1", "one", KeySharedOptions()) != []
    assert [m[2:] for m in ks.join("c2", "two", KeySharedOptions())] == [("c1", "c2")]
    lease = RangeSet([(7, 7)])
    assert ks.held_by("c1", 7, 3, lease, acked={0}) == {1, 2}
    ks.add_mask("c1", 7, [1], partial=True)
    assert ks.held_by("c1", 7, 3, lease, acked=()) == {1}
    assert ks.available(7, 3, {"c1": lease}, acked={0}) == [2]
    assert ks.masked_entries() == 1
    assert ks.unmask("c1", 7, [1]) and ks.masks == {}


def test_forgetting_everything_drops_masks_and_draining_hashes():
    ks = KeySharedState.for_join(None, KeySharedOptions(), "s")
    ks.join("c1", "one", KeySharedOptions())
    ks.draining.block(100, "c1", 2)
    ks.add_mask("c1", 3, [0], partial=True)
    assert ks.draining_at("c1")
    ks.forget()
    assert ks.masks == {} and not ks.draining_at("c1")


# -- CursorState as the sum of its parts ---------------------------------------------------


def test_delegated_attributes_read_and_write_the_parts():
    state = CursorState("s", SHARED, mark_delete=3, read_position=9, dead_letters=[])
    state.mark_delete = 5
    state.leases = {"c1": RangeSet([(6, 6)])}
    state.dead_letter_id = "x"
    assert (state.acks.mark_delete, state.roster.leases, state.outbox.producer_id) == (
        5,
        {"c1": RangeSet([(6, 6)])},
        "x",
    )
    with pytest.raises(TypeError, match="unexpected keyword argument 'acks'"):
        CursorState("s", SHARED, 0, 0, acks=None)


def test_no_module_of_the_cursor_imports_inside_a_function():
    for path in sorted(CURSOR_PACKAGE.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                inner = [n for n in ast.walk(node) if isinstance(n, ast.Import | ast.ImportFrom)]
                assert not inner, f"{path.name}: {node.name} imports inside a function"


@pytest.mark.parametrize("module", sorted(p.stem for p in CURSOR_PACKAGE.glob("*.py")))
def test_each_cursor_module_imports_first_on_its_own(module):
    name = f"magnetar_core.domain.cursor.{module}"
    subprocess.run([sys.executable, "-c", f"import {name}"], check=True)
