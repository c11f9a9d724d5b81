"""CursorState on Key_Shared subscriptions, pure: routing by key hash, masks, draining."""

import json

import pytest

from magnetar_core.adapters.aws.cursors import cursor_from_item, cursor_to_item
from magnetar_core.domain.cursor.state import (
    KEY_SHARED,
    ConsumerInfo,
    CursorState,
    Delivery,
    KeySharedOptions,
)
from magnetar_core.domain.errors import ConsumerBusy
from magnetar_core.domain.keyshared import ConsumerAssignError, HashRangeConflict

BIG = 10_000
LOW, HIGH = 100, 40_000  # with two AUTO_SPLIT consumers: c2 owns [0, 32767], c1 the rest


def info(cid):
    return ConsumerInfo(cid, f"name-{cid}", 1, 2)


class Log:
    """Per-message hashes of entries, standing in for the index items."""

    def __init__(self, *entries):
        self.hashes = dict(enumerate(entries))

    def __call__(self, entry_ids):
        return {e: self.hashes[e] for e in entry_ids if e in self.hashes}

    def candidates(self, state, window=500):
        redeliveries, truncated = state.key_shared_window(window)
        out = [(e, self.hashes[e]) for e in redeliveries]
        if not truncated:
            out += [(e, h) for e, h in self.hashes.items() if e >= state.read_position]
        return out


def cursor(*consumers, options=None, log=None):
    state = CursorState.new("sub", KEY_SHARED, last_entry_id=-1, earliest=True)
    for cid in consumers:
        state.add_consumer(info(cid), KEY_SHARED, options, log)
    return state


def dispatch(state, log, cid, max_messages=BIG, max_unacked=BIG, window=500):
    return state.dispatch_key_shared(cid, log.candidates(state, window), max_messages, max_unacked)


def test_each_message_goes_to_the_consumer_its_key_hash_selects():
    log = Log((LOW,), (HIGH,), (LOW,), (HIGH,))
    state = cursor("c1", "c2", log=log)
    assert dispatch(state, log, "c1") == [Delivery(1, 0, None), Delivery(3, 0, None)]
    assert (state.read_position, state.redeliver.to_list()) == (4, [[0, 0], [2, 2]])
    assert dispatch(state, log, "c2") == [Delivery(0, 0, None), Delivery(2, 0, None)]
    assert state.redeliver.to_list() == []
    assert state.leases["c1"].to_list() == [[1, 1], [3, 3]]
    assert state.leases["c2"].to_list() == [[0, 0], [2, 2]]


def test_a_batch_is_split_between_consumers_with_delivery_masks():
    log = Log((LOW, HIGH, HIGH, LOW))
    state = cursor("c1", "c2", log=log)
    assert dispatch(state, log, "c1") == [Delivery(0, 0, (1, 2))]
    assert (state.key_shared.masks, state.redeliver.to_list()) == ({"c1": {0: {1, 2}}}, [[0, 0]])
    assert dispatch(state, log, "c2") == [Delivery(0, 0, (0, 3))]
    assert state.redeliver.to_list() == []
    assert (state.unacked_messages("c1"), state.unacked_messages("c2")) == (2, 2)


def test_acking_a_consumers_batch_indexes_releases_its_share_then_the_entry():
    log = Log((LOW, HIGH, HIGH, LOW))
    state = cursor("c1", "c2", log=log)
    dispatch(state, log, "c1")
    dispatch(state, log, "c2")
    assert state.acknowledge([(0, 1), (0, 2)], log) == 2
    assert (list(state.leases), state.key_shared.masks) == (["c2"], {"c2": {0: {0, 3}}})
    assert state.acknowledge([(0, 0), (0, 3)], log) == 2
    assert (state.mark_delete, state.leases, state.key_shared.masks) == (0, {}, {})


def test_a_consumer_that_holds_a_whole_batch_gets_no_mask():
    log = Log((HIGH, HIGH, HIGH))
    state = cursor("c1", "c2", log=log)
    assert dispatch(state, log, "c1") == [Delivery(0, 0, None)]
    assert (state.key_shared.masks, state.unacked_messages("c1")) == ({}, 3)
    state.acknowledge([(0, 0)], log)
    assert state.unacked_messages("c1") == 2


def test_a_negative_ack_brings_the_messages_back_to_the_same_consumer_with_count_plus_one():
    log = Log((LOW, HIGH, HIGH, LOW))
    state = cursor("c1", "c2", log=log)
    dispatch(state, log, "c1")
    assert state.negative_acknowledge("c1", [0], log) == 1
    assert (state.key_shared.masks, state.redeliver.to_list()) == ({}, [[0, 0]])
    # c2's messages of the entry were never delivered: their count stays 0
    assert dispatch(state, log, "c2") == [Delivery(0, 0, (0, 3))]
    assert dispatch(state, log, "c1") == [Delivery(0, 1, (1, 2))]


def test_a_leaving_consumers_messages_go_to_the_consumer_that_inherits_its_hashes():
    log = Log((LOW, HIGH), (LOW,))
    state = cursor("c1", "c2", log=log)
    dispatch(state, log, "c2")
    assert state.remove_consumer("c2") == 2
    assert state.key_shared.selector.ranges() == {"c1": [(0, 65535)]}
    # of entry 0 c2 held message 0 only: message 1 (c1's, never delivered) keeps count 0
    assert dispatch(state, log, "c1") == [
        Delivery(0, 1, (0,)),
        Delivery(0, 0, (1,)),
        Delivery(1, 1, None),
    ]


def test_keyless_messages_share_one_hash_and_go_to_one_consumer():
    from magnetar_core.domain.keyshared import sticky_key_hash

    none = sticky_key_hash(None)
    log = Log((none, none), (none,))
    state = cursor("c1", "c2", log=log)
    owner = state.key_shared.selector.select(none)
    other = "c1" if owner == "c2" else "c2"
    assert dispatch(state, log, other) == []
    assert dispatch(state, log, owner) == [Delivery(0, 0, None), Delivery(1, 0, None)]


def test_a_hash_moved_by_a_join_drains_at_its_previous_owner_until_acked():
    log = Log((LOW,), (LOW,), (HIGH,))
    state = cursor("c1", log=log)
    assert dispatch(state, log, "c1", max_messages=1) == [Delivery(0, 0, None)]
    state.add_consumer(info("c2"), KEY_SHARED, None, log)
    assert dispatch(state, log, "c2") == []
    assert (state.read_position, state.redeliver.to_list()) == (3, [[1, 2]])
    assert state.key_shared.draining.stats("c1") == {
        "drainingHashesCount": 1,
        "drainingHashesClearedTotal": 0,
        "drainingHashesUnackedMessages": 1,
        "drainingHashes": [{"hash": LOW, "unackMsgs": 1, "blockedAttempts": 1}],
    }
    assert dispatch(state, log, "c1") == [Delivery(2, 0, None)]
    state.acknowledge([(0, -1)], log)
    assert state.key_shared.draining.stats("c1")["drainingHashesClearedTotal"] == 1
    assert dispatch(state, log, "c2") == [Delivery(1, 0, None)]


def test_a_negative_ack_or_a_leave_also_releases_a_draining_hash():
    log = Log((LOW,), (LOW,))
    state = cursor("c1", log=log)
    dispatch(state, log, "c1", max_messages=1)
    state.add_consumer(info("c2"), KEY_SHARED, None, log)
    state.negative_acknowledge("c1", [0], log)
    assert state.key_shared.draining.stats("c1")["drainingHashesCount"] == 0
    assert dispatch(state, log, "c2") == [Delivery(0, 1, None), Delivery(1, 0, None)]
    other = cursor("c1", log=log)
    dispatch(other, log, "c1", max_messages=1)
    other.add_consumer(info("c2"), KEY_SHARED, None, log)
    other.add_consumer(info("c3"), KEY_SHARED, None, log)
    other.remove_consumer("c1")
    assert other.key_shared.draining.to_dict() == {"o": False}


def test_out_of_order_delivery_never_blocks_a_moved_hash():
    log = Log((LOW,), (LOW,))
    options = KeySharedOptions(allow_out_of_order=True)
    state = cursor("c1", options=options, log=log)
    dispatch(state, log, "c1", max_messages=1)
    state.add_consumer(info("c2"), KEY_SHARED, options, log)
    assert dispatch(state, log, "c2") == [Delivery(1, 0, None)]


def test_a_consumer_stops_at_its_unacked_messages_limit():
    log = Log((HIGH, HIGH), (HIGH, HIGH), (HIGH, HIGH))
    state = cursor("c1", "c2", log=log)
    assert dispatch(state, log, "c1", max_unacked=3) == [Delivery(0, 0, None), Delivery(1, 0, None)]
    assert state.read_position == 2
    assert dispatch(state, log, "c1", max_unacked=3) == []


def test_max_messages_counts_messages_handed_out_not_entries():
    log = Log((LOW, HIGH), (LOW, HIGH), (HIGH,))
    state = cursor("c1", "c2", log=log)
    assert dispatch(state, log, "c1", max_messages=2) == [
        Delivery(0, 0, (1,)),
        Delivery(1, 0, (1,)),
    ]
    assert state.read_position == 2


def test_a_truncated_redelivery_window_holds_back_new_entries():
    log = Log((LOW,), (LOW,), (HIGH,))
    state = cursor("c1", "c2", log=log)
    dispatch(state, log, "c1", max_messages=1)  # considers 0 and 1 (c2's) and takes 2
    assert state.key_shared_window(1) == ([0], True)
    state2 = cursor("c1", "c2", log=log)
    state2.dispatch_key_shared("c1", [(0, (LOW,)), (1, (LOW,))], BIG, BIG)
    log.hashes[2] = (HIGH,)
    assert dispatch(state2, log, "c1", window=1) == []
    assert state2.read_position == 2


def test_sticky_consumers_get_their_declared_ranges_and_overlaps_are_refused():
    sticky = KeySharedOptions.parse("Sticky", [[0, 32767]])
    state = cursor("c1", options=sticky)
    with pytest.raises(HashRangeConflict) as caught:
        state.add_consumer(info("c2"), KEY_SHARED, KeySharedOptions.parse("Sticky", [[100, 200]]))
    assert caught.value.status == 409
    assert list(state.consumers) == ["c1"]
    state.add_consumer(info("c2"), KEY_SHARED, KeySharedOptions.parse("Sticky", [[32768, 65535]]))
    assert state.key_shared.selector.ranges() == {"c1": [(0, 32767)], "c2": [(32768, 65535)]}


def test_a_consumer_with_other_key_shared_options_is_busy_and_bad_options_are_refused():
    state = cursor("c1")
    with pytest.raises(ConsumerBusy) as caught:
        state.add_consumer(info("c2"), KEY_SHARED, KeySharedOptions.parse("Sticky", [[0, 9]]))
    assert "uses AUTO_SPLIT" in caught.value.message
    with pytest.raises(ConsumerAssignError) as bad:
        KeySharedOptions.parse("Random")
    assert bad.value.message == "Unknown keySharedMode 'Random': use AutoSplit or Sticky"
    with pytest.raises(ConsumerAssignError):
        KeySharedOptions.parse("AutoSplit", [[0, 9]])
    with pytest.raises(ConsumerAssignError) as reversed_range:
        cursor("c3", options=KeySharedOptions.parse("Sticky", [[5, 1]]))
    assert reversed_range.value.status == 400


def test_the_key_shared_state_survives_the_cursor_item_round_trip():
    log = Log((LOW, HIGH, HIGH, LOW), (LOW,))
    options = KeySharedOptions(use_consistent_hashing=True)
    state = cursor("c1", options=options, log=log)
    dispatch(state, log, "c1", max_messages=1)
    state.add_consumer(info("c2"), KEY_SHARED, options, log)
    dispatch(state, log, "c2")
    back = cursor_from_item(cursor_to_item("pk", state))
    back.version = state.version
    assert back.key_shared.to_dict() == state.key_shared.to_dict()
    assert back.key_shared.masks == state.key_shared.masks
    assert back.key_shared.selector.ranges() == state.key_shared.selector.ranges()
    assert back.leases == state.leases and back.redeliver == state.redeliver


def test_masks_are_stored_as_hex_bitmaps():
    log = Log((LOW, HIGH, HIGH, LOW, LOW, LOW, LOW, LOW, HIGH))
    state = cursor("c1", "c2", log=log)
    dispatch(state, log, "c1")
    assert state.key_shared.to_dict()["m"] == {"c1": {"0": "106"}}


def test_other_types_carry_no_key_shared_state():
    state = CursorState.new("sub", "Shared", last_entry_id=-1, earliest=True)
    state.add_consumer(info("c1"), "Shared")
    assert state.key_shared is None
    assert "ks" not in json.loads(cursor_to_item("pk", state)["st"]["S"])


def test_index_items_store_two_bytes_per_message_hash_or_one_shared_hash():
    from magnetar_core.domain.log import NONE_KEY_HASH, IndexEntry

    def entry(count, hashes):
        return IndexEntry(0, "o", 0, 1, count, count > 1, 1, 1, "p", 0, 0, key_hashes=hashes)

    mixed = entry(3, (1, 65535, 256)).to_item("pk")
    assert mixed["kh"] == {"B": b"\x00\x01\xff\xff\x01\x00"}
    assert IndexEntry.from_item(mixed).key_hashes == (1, 65535, 256)
    shared = entry(4, (7, 7, 7, 7)).to_item("pk")
    assert shared["kh"] == {"B": b"\x00\x07"}
    assert IndexEntry.from_item(shared).message_hashes() == (7, 7, 7, 7)
    legacy = entry(2, ()).to_item("pk")
    assert "kh" not in legacy
    assert IndexEntry.from_item(legacy).message_hashes() == (NONE_KEY_HASH, NONE_KEY_HASH)
