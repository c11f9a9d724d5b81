"""Dispatch rounds (``domain.cursor.rounds``): a Shared consumer's grant deals, in the same
cursor write, slots to the consumers with permits, and each takes its slot onto its own
grant item with no cursor write. The pure rules, then the subscription service on memory
adapters (the revocation races are in test_grants_revocation_races.py)."""

from __future__ import annotations

import pytest
from grant_support import TOPIC, ack, cursor, memory_engine, produce, receive_one

from magnetar_core.adapters.aws.cursors import cursor_from_item, cursor_to_item
from magnetar_core.domain.cursor.dealt import Dealt
from magnetar_core.domain.cursor.grants import Grant, reclaim
from magnetar_core.domain.cursor.records import Delivery
from magnetar_core.domain.cursor.rounds import (
    deal,
    has_permits,
    return_voided,
    slot_to_take,
    slots_to_steal,
    take_change,
    wants_of,
)
from magnetar_core.domain.cursor.state import KEY_SHARED, SHARED, ConsumerInfo, CursorState
from magnetar_core.domain.rangeset import RangeSet
from magnetar_core.engine import Engine


def shared(*consumers: str, backlog: int = 100) -> CursorState:
    state = CursorState.new("s", SHARED, last_entry_id=backlog - 1, earliest=True)
    for c in consumers:
        state.add_consumer(ConsumerInfo(c, c, 0, 0), SHARED)
    return state


def page(start: int, end: int) -> list[tuple[int, int]]:
    return [(e, 1) for e in range(start, end)]


# -- the rules ----------------------------------------------------------------------------


def test_a_round_leases_each_consumer_its_want_and_records_its_slot():
    state = shared("a", "b", "c")
    dealt = deal(state, {"b": 3, "c": 2}, page(0, 10), max_unacked_entries=1000)
    assert {c: [d.entry_id for d in ds] for c, ds in dealt.items()} == {
        "b": [0, 1, 2],
        "c": [3, 4],
    }
    assert list(state.leases["b"]) == [0, 1, 2] and list(state.leases["c"]) == [3, 4]
    assert state.dealt["b"].seq == state.dealt["c"].seq == state.version + 1
    assert list(state.dealt["c"].entries) == [3, 4]
    assert state.read_position == 5


def test_permits_need_a_nearly_handed_out_grant_no_untaken_slot_and_a_live_consumer():
    state = shared("a", "b")
    assert has_permits(state, "b", None, 8, [])  # no item yet
    assert not has_permits(state, "b", None, 8, ["b"])  # lapsed
    assert not has_permits(state, "x", None, 8, [])  # not connected
    busy = Grant(tuple(Delivery(e, 0, None) for e in range(20)), handed=10)
    assert not has_permits(state, "b", busy, 8, [])  # 10 still to hand out
    assert not has_permits(state, "b", Grant(revoked=True), 8, [])
    deal(state, {"b": 4}, page(0, 10), 1000)
    assert not has_permits(state, "b", None, 8, [])  # its slot is waiting
    taken = Grant(dealt_seq=state.dealt["b"].seq)
    assert has_permits(state, "b", taken, 8, [])  # took it: may be dealt again


def test_wants_are_a_grants_split_bounded_by_fair_shares_and_skip_the_dealer():
    state = shared("a", "b", "c", "d")
    grants: dict[str, Grant | None] = {"a": None, "b": None, "c": None, "d": None}
    assert wants_of(state, "a", grants, left=1000, entries=32, low_water=8, lapsed=[]) == {
        "b": 32,
        "c": 32,
        "d": 32,
    }
    # 40 left among 4 consumers: the split is at least the floor of 8 and 10 each here
    assert wants_of(state, "a", grants, 40, 32, 8, []) == {"b": 10, "c": 10, "d": 10}
    # only consumers whose items were read are dealt to
    assert wants_of(state, "a", {"b": None}, 1000, 32, 8, []) == {"b": 32}


def test_a_slot_is_taken_as_deliveries_rebuilt_from_the_cursor_and_only_while_leased():
    state = shared("a", "b")
    deal(state, {"b": 4}, page(0, 10), 1000)
    state.redelivery_counts[2] = 3
    state.acknowledge([(1, -1)])  # acknowledged on the cursor meanwhile
    slot = slot_to_take(state, "b", None)
    assert slot == [Delivery(0, 0, None), Delivery(2, 3, None), Delivery(3, 0, None)]
    assert slot_to_take(state, "b", Grant(dealt_seq=state.dealt["b"].seq)) == []  # taken
    assert slot_to_take(state, "a", None) == []


def test_taking_a_slot_keeps_leased_entries_and_drops_acks_the_cursor_folded():
    state = shared("a", "b")
    deal(state, {"b": 4}, page(0, 4), 1000)
    state.dealt["b"] = Dealt(state.version + 1, RangeSet.from_list([[2, 3]]))
    state.acknowledge([(0, -1)])  # folded by a round (b's ack of 0)
    before = Grant(
        tuple(Delivery(e, 0, None) for e in (0, 1)), 2, frozenset({0, 1}), frozenset({0, 1}), 4
    )
    change = take_change(state, "b", before, slot_to_take(state, "b", before), None, 1)
    assert [d.entry_id for d in change.queue] == [2, 3] and change.handed == 1
    assert change.leased == frozenset({1, 2, 3})  # 0 left the lease with its fold
    assert change.folded == frozenset({0})  # 1 is still to fold
    assert (change.rev, change.fresh, change.dealt_seq) == (4, False, state.dealt["b"].seq)


def test_reclaiming_a_whole_grant_sends_its_untaken_slot_back_uncounted():
    state = shared("a", "b")
    deal(state, {"b": 4}, page(0, 10), 1000)
    revoked = Grant(revoked=True, rev=1)  # the item as a close's revocation returned it
    assert reclaim(state, "b", revoked) == 4
    assert "b" not in state.dealt and "b" not in state.leases
    assert list(state.redeliver) == [0, 1, 2, 3] and state.redelivery_counts == {}


def test_a_slot_on_the_item_is_reclaimed_from_the_item_not_from_the_slot():
    state = shared("a", "b")
    deal(state, {"b": 4}, page(0, 10), 1000)
    queue = tuple(Delivery(e, 0, None) for e in range(4))
    took = Grant(queue, 1, frozenset(range(4)), frozenset(), 2, True, None, state.dealt["b"].seq)
    assert reclaim(state, "b", took) == 3  # 1, 2, 3 never handed out; 0 was
    assert list(state.leases["b"]) == [0]


def test_the_largest_untaken_slots_are_stolen_only_when_nothing_is_left_to_redeliver():
    state = shared("a", "b", "c", "d")
    deal(state, {"b": 6, "c": 3, "d": 5}, page(0, 14), 1000)
    assert slots_to_steal(state, "a", {}, min_entries=4, most=2) == [
        ("b", state.dealt["b"]),
        ("d", state.dealt["d"]),
    ]
    took = {"b": Grant(dealt_seq=state.dealt["b"].seq)}
    assert [c for c, _ in slots_to_steal(state, "a", took, 4, 2)] == ["d"]
    assert slots_to_steal(state, "d", took, 4, 2) == []  # c's 3 are too few
    state.redeliver.add(50)
    assert slots_to_steal(state, "a", {}, 4, 2) == []


def test_a_voided_slot_goes_back_uncounted_and_a_later_slot_stays():
    state = shared("a", "b")
    deal(state, {"b": 4}, page(0, 10), 1000)
    voided = state.dealt["b"]
    assert return_voided(state, "b", voided.seq, voided.entries) == 4
    assert "b" not in state.dealt and list(state.redeliver) == [0, 1, 2, 3]
    state.version += 1
    deal(state, {"b": 2}, page(0, 10), 1000)  # dealt again meanwhile
    assert return_voided(state, "b", voided.seq, voided.entries) == 2  # its old entries
    assert "b" in state.dealt  # the later slot is not the voided one


def test_a_seek_drops_every_slot_and_slots_round_trip_through_the_cursor_item():
    state = shared("a", "b")
    deal(state, {"b": 4}, page(0, 10), 1000)
    back = cursor_from_item(cursor_to_item("t|1", state))
    assert back.dealt == state.dealt
    state.seek(0)
    assert state.dealt == {}
    assert "dt" not in cursor_to_item("t|1", state)["st"]["S"]


# -- the service on memory adapters -------------------------------------------------------


@pytest.fixture
def engine() -> Engine:
    return memory_engine()


def test_one_cursor_write_serves_every_consumer_and_their_acks_are_folded_by_the_next(engine):
    subs = engine.subscriptions
    ids = [subs.subscribe(TOPIC, "s", f"c{i}", SHARED, earliest=True).consumer_id for i in range(4)]
    produce(engine, 400)
    assert receive_one(engine, ids[0]) == [0]  # its grant deals a slot to each other consumer
    version = cursor(engine).version
    firsts = [receive_one(engine, c) for c in ids[1:]]
    assert [len(f) for f in firsts] == [1, 1, 1]
    assert cursor(engine).version == version  # slots taken with no cursor write
    got: dict[str, list[int]] = {c: [] for c in ids}
    got[ids[0]], got[ids[1]], got[ids[2]], got[ids[3]] = [0], *firsts
    for c, taken in got.items():
        ack(engine, c, *taken)
    for _ in range(40):  # each hands out its 32 and needs more
        for c in ids:
            taken = receive_one(engine, c)
            got[c] += taken
            ack(engine, c, *taken)
    everything = [e for taken in got.values() for e in taken]
    assert len(everything) == len(set(everything)) == 4 + 4 * 40  # each message once
    assert all(len(taken) == 41 for taken in got.values())
    # the grants since (a few cursor writes) folded what the slots' owners acknowledged
    state = cursor(engine)
    assert state.version - version < 10
    assert state.mark_delete + 1 + len(state.acked) >= 4 * 32


def test_a_closed_consumers_untaken_slot_goes_to_the_others_uncounted(engine):
    subs = engine.subscriptions
    a = subs.subscribe(TOPIC, "s", "a", SHARED, earliest=True).consumer_id
    b = subs.subscribe(TOPIC, "s", "b", SHARED, earliest=True).consumer_id
    produce(engine, 64)
    assert receive_one(engine, a) == [0]
    slot = sorted(cursor(engine).dealt[b].entries)
    assert subs.close(TOPIC, "s", b) == len(slot)
    state = cursor(engine)
    assert b not in state.dealt and all(e not in state.redelivery_counts for e in slot)
    rest = [e for _ in range(64) for e in receive_one(engine, a)]
    assert slot == [e for e in rest if e in slot] and set(slot) <= set(rest)


def test_key_shared_grants_deal_no_slots(engine):
    subs = engine.subscriptions
    for name in ("a", "b"):
        subs.subscribe(TOPIC, "s", name, KEY_SHARED, earliest=True)
    produce(engine, 64)
    consumer = next(iter(cursor(engine).consumers))
    receive_one(engine, consumer)
    assert cursor(engine).dealt == {}


def untaken(engine: Engine) -> set[str]:
    ref = engine.topics.resolve(TOPIC, create=False)
    store = engine.subscriptions.context.cursors
    return {
        c
        for c, slot in cursor(engine).dealt.items()
        if (store.grant(ref.key, "s", c) or Grant()).dealt_seq < slot.seq
    }


def test_a_consumer_receiving_many_at_a_time_gets_its_dealt_slot_first_uncounted(engine):
    subs = engine.subscriptions
    one = subs.subscribe(TOPIC, "s", "one", SHARED, earliest=True).consumer_id
    many = subs.subscribe(TOPIC, "s", "many", SHARED, earliest=True).consumer_id
    produce(engine, 200)
    assert receive_one(engine, many) == [0]  # a one-message receive once: it has an item
    for _ in range(31):
        ack(engine, many, *receive_one(engine, many))  # hands its grant out
    for _ in range(40):  # one hands out the slot it was dealt; its next grant deals many
        ack(engine, one, *receive_one(engine, one))
        if many in untaken(engine):
            break
    slot = sorted(cursor(engine).dealt[many].entries)
    assert slot
    got = [d.entry_id for d in subs.receive(TOPIC, "s", many, 100, 0)]  # many at a time
    assert got[: len(slot)] == slot  # the slot first: nothing stays leased, never sent
    state = cursor(engine)
    assert many not in state.dealt
    assert all(state.redelivery_counts.get(e, 0) == 0 for e in slot)


def test_a_closed_consumers_messages_go_out_before_the_slot_dealt_to_the_one_left(engine):
    subs = engine.subscriptions
    a = subs.subscribe(TOPIC, "s", "a", SHARED, earliest=True).consumer_id
    b = subs.subscribe(TOPIC, "s", "b", SHARED, earliest=True).consumer_id
    produce(engine, 2)
    assert receive_one(engine, a) == [0]  # its grant deals entry 1 to b's slot
    assert sorted(cursor(engine).dealt[b].entries) == [1]
    assert subs.close(TOPIC, "s", a) == 1
    got = [d.entry_id for d in subs.receive(TOPIC, "s", b, 10, 0)]
    assert got == [0, 1]  # the redelivery first, then the slot's entry, in one receive
    assert b not in cursor(engine).dealt
