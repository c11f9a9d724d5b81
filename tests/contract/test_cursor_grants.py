"""Contract of the cursor store's grant items (``domain.cursor.grants``): a grant is
recorded once per ``rev``, handed out one delivery at a time, acks are recorded only for
entries in its ``leased`` set (and for the consumer's role), a revocation takes entries out
and bumps ``rev``, and a revoked grant hands nothing out."""

from __future__ import annotations

import dataclasses
import threading

import pytest

from magnetar_core.domain.cursor.grants import GrantChange
from magnetar_core.domain.cursor.records import Delivery


@pytest.fixture
def pk(uid) -> str:
    return f"persistent://c/ns/g-{uid}|1"


def change(
    entries: list[int], rev: int = 0, fresh: bool = True, handed: int = 0, **kw
) -> GrantChange:
    queue = tuple(Delivery(e, 1 if e == entries[0] else 0, None) for e in entries)
    return GrantChange(
        queue,
        kw.get("leased", frozenset(entries)),
        kw.get("folded", frozenset()),
        rev,
        fresh,
        kw.get("role"),
        handed,
    )


def test_a_consumer_without_a_grant_reads_none_and_has_nothing_to_hand_out(stores, pk):
    assert stores.cursors.grant(pk, "s", "c1") is None
    assert stores.cursors.hand_out(pk, "s", "c1", None) is None
    assert stores.cursors.revoke_grant(pk, "s", "c1", frozenset({1})) is None
    assert stores.cursors.ack_granted(pk, "s", "c1", frozenset({1}), None) is False
    assert stores.cursors.grant(pk, "s", "c1") is None  # a partial revocation wrote nothing


def test_revoking_a_whole_grant_leaves_a_revoked_item_where_there_was_none(stores, pk):
    revoked = stores.cursors.revoke_grant(pk, "s", "c1", None)
    assert (revoked.revoked, revoked.rev, revoked.queue, revoked.leased) == (
        True, 1, (), frozenset()
    )  # fmt: skip
    assert stores.cursors.grant(pk, "s", "c1") == revoked
    assert stores.cursors.hand_out(pk, "s", "c1", None) is None
    # a first grant recorded as fresh (it read no item) fails: the revocation came first
    assert not stores.cursors.put_grant(pk, "s", "c1", change([5]))
    assert stores.cursors.put_grant(pk, "s", "c1", change([5], rev=1, fresh=False))


def test_a_dealt_slot_is_taken_only_on_the_rev_read_and_never_onto_a_revoked_item(stores, pk):
    take = change([7, 8], rev=1, fresh=False, handed=1)
    assert stores.cursors.put_grant(pk, "s", "c1", change([5]))  # rev 1
    slot = dataclasses.replace(take, dealt_seq=40)
    assert stores.cursors.put_grant(pk, "s", "c1", slot)
    got = stores.cursors.grant(pk, "s", "c1")
    assert (got.dealt_seq, got.rev, got.handed, [d.entry_id for d in got.queue]) == (
        40,
        2,
        1,
        [7, 8],
    )
    assert not stores.cursors.put_grant(pk, "s", "c1", slot)  # rev moved on
    stores.cursors.revoke_grant(pk, "s", "c1", frozenset({7}))  # a partial one: rev 3
    after_nack = dataclasses.replace(change([9], rev=3, fresh=False), dealt_seq=41)
    assert stores.cursors.put_grant(pk, "s", "c1", after_nack)
    stores.cursors.revoke_grant(pk, "s", "c1", None)  # whole: rev 5, revoked
    revoked_take = dataclasses.replace(change([10], rev=5, fresh=False), dealt_seq=42)
    assert not stores.cursors.put_grant(pk, "s", "c1", revoked_take)
    assert stores.cursors.grant(pk, "s", "c1").dealt_seq == 41
    # an ordinary grant (after a cursor write) records over the revocation, keeping dsq
    assert stores.cursors.put_grant(pk, "s", "c1", change([10], rev=5, fresh=False))
    assert stores.cursors.grant(pk, "s", "c1").dealt_seq == 41


def test_a_voided_slot_is_never_taken_and_the_item_still_takes_grants(stores, pk):
    assert stores.cursors.void_slot(pk, "s", "c1", 7)  # no item yet: one is written
    voided = stores.cursors.grant(pk, "s", "c1")
    assert (voided.dealt_seq, voided.rev, voided.revoked, voided.queue) == (7, 0, False, ())
    assert not stores.cursors.void_slot(pk, "s", "c1", 7)  # at or past it: refused
    assert not stores.cursors.put_grant(pk, "s", "c1", change([5]))  # a fresh take fails
    late = dataclasses.replace(change([5], rev=0, fresh=False), dealt_seq=7)
    assert not stores.cursors.put_grant(pk, "s", "c1", late)  # the voided slot
    # an ordinary grant (its cursor write done) records on the item as read
    assert stores.cursors.put_grant(pk, "s", "c1", change([5], rev=0, fresh=False))
    assert stores.cursors.hand_out(pk, "s", "c1", None).next_delivery.entry_id == 5
    assert stores.cursors.grant(pk, "s", "c1").dealt_seq == 7
    assert stores.cursors.void_slot(pk, "s", "c1", 8)


def test_grants_of_reads_many_consumers_items_at_once(stores, pk):
    for i in range(3):
        assert stores.cursors.put_grant(pk, "s", f"c{i}", change([i, 100 + i]))
    ids = [f"c{i}" for i in range(105)]  # more than one BatchGetItem holds
    got = stores.cursors.grants_of(pk, "s", ids)
    assert set(got) == set(ids)
    assert [got[f"c{i}"].queue[1].entry_id for i in range(3)] == [100, 101, 102]
    assert all(got[c] is None for c in ids[3:])
    assert stores.cursors.grants_of(pk, "s", []) == {}


def test_a_grant_reads_back_whole_and_hands_out_its_deliveries_in_order(stores, pk):
    batch = Delivery(12, 2, (0, 3))
    queue = (Delivery(10, 1, None), Delivery(11, 0, None), batch)
    assert stores.cursors.put_grant(
        pk, "s", "c1", GrantChange(queue, frozenset({10, 11, 12}), frozenset(), 0, True, None, 1)
    )
    got = stores.cursors.grant(pk, "s", "c1")
    assert (got.queue, got.handed, got.leased, got.acked, got.rev) == (
        queue,
        1,
        frozenset({10, 11, 12}),
        frozenset(),
        1,
    )
    taken = [stores.cursors.hand_out(pk, "s", "c1", None) for _ in range(3)]
    assert [t.next_delivery if t else None for t in taken] == [queue[1], batch, None]
    assert stores.cursors.grant(pk, "s", "c1").handed == 3


def test_a_grant_is_recorded_only_on_the_rev_it_read(stores, pk):
    assert stores.cursors.put_grant(pk, "s", "c1", change([1, 2]))
    assert not stores.cursors.put_grant(pk, "s", "c1", change([3]))  # not fresh any more
    assert not stores.cursors.put_grant(pk, "s", "c1", change([3], rev=0, fresh=False))
    assert stores.cursors.put_grant(pk, "s", "c1", change([3], rev=1, fresh=False))
    got = stores.cursors.grant(pk, "s", "c1")
    assert ([d.entry_id for d in got.queue], got.leased, got.rev) == ([3], frozenset({3}), 2)


def test_acks_are_recorded_only_when_every_entry_is_leased_to_the_grant(stores, pk):
    stores.cursors.put_grant(pk, "s", "c1", change([1, 2, 3], handed=3))
    assert stores.cursors.ack_granted(pk, "s", "c1", frozenset({1, 3}), None)
    assert not stores.cursors.ack_granted(pk, "s", "c1", frozenset({2, 4}), None)
    assert stores.cursors.ack_granted(pk, "s", "c1", frozenset({1}), None)  # again: a set
    assert stores.cursors.grant(pk, "s", "c1").acked == frozenset({1, 3})


def test_a_new_grant_drops_the_acks_it_folded_and_keeps_those_recorded_since(stores, pk):
    stores.cursors.put_grant(pk, "s", "c1", change([1, 2, 3], handed=3))
    stores.cursors.ack_granted(pk, "s", "c1", frozenset({1, 2}), None)
    read = stores.cursors.grant(pk, "s", "c1")
    stores.cursors.ack_granted(pk, "s", "c1", frozenset({3}), None)  # after the read
    assert stores.cursors.put_grant(
        pk,
        "s",
        "c1",
        change([4, 5], rev=read.rev, fresh=False, leased=frozenset({3, 4, 5}), folded=read.acked),
    )
    got = stores.cursors.grant(pk, "s", "c1")
    assert (got.acked, got.leased, got.handed) == (frozenset({3}), frozenset({3, 4, 5}), 0)


def test_a_role_other_than_the_consumers_neither_takes_nor_acks(stores, pk):
    stores.cursors.put_grant(pk, "s", "c1", change([1, 2], role="billing"))
    assert stores.cursors.hand_out(pk, "s", "c1", "intruder") is None
    assert not stores.cursors.ack_granted(pk, "s", "c1", frozenset({1}), "intruder")
    assert stores.cursors.hand_out(pk, "s", "c1", "billing").next_delivery.entry_id == 1
    assert stores.cursors.ack_granted(pk, "s", "c1", frozenset({1}), "billing")
    assert stores.cursors.hand_out(pk, "s", "c1", None).next_delivery.entry_id == 2


def test_revoking_entries_stops_their_acks_and_bumps_the_rev(stores, pk):
    stores.cursors.put_grant(pk, "s", "c1", change([1, 2, 3], handed=3))
    stores.cursors.ack_granted(pk, "s", "c1", frozenset({1}), None)
    got = stores.cursors.revoke_grant(pk, "s", "c1", frozenset({1, 2}))
    assert (got.leased, got.acked, got.rev, got.revoked) == (
        frozenset({3}),
        frozenset({1}),
        2,
        False,
    )
    assert not stores.cursors.ack_granted(pk, "s", "c1", frozenset({2}), None)
    assert stores.cursors.ack_granted(pk, "s", "c1", frozenset({3}), None)


def test_a_revoked_grant_hands_nothing_out_until_a_new_grant(stores, pk):
    stores.cursors.put_grant(pk, "s", "c1", change([1, 2, 3], handed=1))
    got = stores.cursors.revoke_grant(pk, "s", "c1", None)
    assert (got.revoked, got.leased, [d.entry_id for d in got.unhanded]) == (
        True,
        frozenset(),
        [2, 3],
    )
    assert stores.cursors.hand_out(pk, "s", "c1", None) is None
    assert not stores.cursors.ack_granted(pk, "s", "c1", frozenset({2}), None)
    assert stores.cursors.put_grant(pk, "s", "c1", change([2, 3], rev=got.rev, fresh=False))
    assert stores.cursors.hand_out(pk, "s", "c1", None).next_delivery.entry_id == 2


def test_grant_items_are_neither_listed_nor_seen_as_cursors(stores, pk):
    stores.cursors.put_grant(pk, "s", "c1", change([1]))
    assert stores.cursors.list(pk) == []
    assert stores.cursors.get(pk, "s") is None


def test_concurrent_hand_outs_take_each_delivery_once(stores, pk):
    entries = list(range(40))
    stores.cursors.put_grant(pk, "s", "c1", change(entries))
    taken: list[int] = []
    lock = threading.Lock()

    def take() -> None:
        while (got := stores.cursors.hand_out(pk, "s", "c1", None)) is not None:
            with lock:
                taken.append(got.next_delivery.entry_id)

    threads = [threading.Thread(target=take) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(taken) == entries
