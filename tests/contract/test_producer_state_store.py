"""Contract of the producer state store: the versioned lease, the monotonic dedup snapshot."""

from __future__ import annotations

import pytest

from magnetar_core.domain.counters import ExpiredTotals
from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.producers import DedupSnapshot, ProducerLease


@pytest.fixture
def pk(uid) -> str:
    return f"persistent://c/ns/t-{uid}|1"


def test_a_partition_without_a_lease_reads_as_epoch_0_unheld_at_version_0(stores, pk):
    assert stores.producer_state.lease(pk) == ProducerLease()


def test_a_lease_reads_back_at_the_next_version(stores, pk):
    lease = ProducerLease(epoch=3, holder="p", mode="WaitForExclusive", seen_ms=1234)
    stores.producer_state.put_lease(pk, lease)
    assert lease.version == 1
    assert stores.producer_state.lease(pk) == lease


def test_an_unheld_lease_drops_the_mode_and_a_held_one_defaults_to_exclusive(stores, pk):
    stores.producer_state.put_lease(pk, ProducerLease(epoch=1, mode="Exclusive", seen_ms=1))
    assert stores.producer_state.lease(pk).mode is None
    lease = stores.producer_state.lease(pk)
    lease.holder = "p"
    stores.producer_state.put_lease(pk, lease)
    assert stores.producer_state.lease(pk).mode == "Exclusive"


def test_a_held_lease_reads_back_the_role_that_registered_its_holder(stores, pk):
    lease = ProducerLease(epoch=2, holder="ledger", mode="Exclusive", seen_ms=5, role="billing")
    stores.producer_state.put_lease(pk, lease)
    assert stores.producer_state.lease(pk).role == "billing"
    opened = ProducerLease(epoch=3, seen_ms=6, version=1, role="billing")  # no holder: no role
    stores.producer_state.put_lease(pk, opened)
    assert stores.producer_state.lease(pk).role is None


def test_a_lease_write_needs_the_version_it_read(stores, pk):
    stores.producer_state.put_lease(pk, ProducerLease(epoch=1))
    a, b = stores.producer_state.lease(pk), stores.producer_state.lease(pk)
    a.epoch = 2
    stores.producer_state.put_lease(pk, a)
    b.epoch = 5
    with pytest.raises(ConditionFailed):
        stores.producer_state.put_lease(pk, b)
    assert b.version == 1
    with pytest.raises(ConditionFailed):
        stores.producer_state.put_lease(pk, ProducerLease(epoch=9))  # version 0: exists
    assert stores.producer_state.lease(pk).epoch == 2


def test_a_lease_write_at_a_version_never_written_fails_the_condition(stores, pk):
    with pytest.raises(ConditionFailed):
        stores.producer_state.put_lease(pk, ProducerLease(epoch=1, version=4))


def test_a_partition_without_a_snapshot_reads_as_empty(stores, pk):
    assert stores.producer_state.snapshot(pk) == DedupSnapshot()


def test_snapshots_only_move_forward(stores, pk):
    stores.producer_state.put_snapshot(pk, DedupSnapshot(10, {"a": 3, "b": 7}))
    assert stores.producer_state.snapshot(pk) == DedupSnapshot(10, {"a": 3, "b": 7})
    for stale in (10, 9):
        with pytest.raises(ConditionFailed):
            stores.producer_state.put_snapshot(pk, DedupSnapshot(stale, {"a": 99}))
    stores.producer_state.put_snapshot(pk, DedupSnapshot(11, {"a": 4}))
    assert stores.producer_state.snapshot(pk) == DedupSnapshot(11, {"a": 4})


def test_expired_totals_read_as_zeros_until_written_and_only_move_forward(stores, pk):
    assert stores.producer_state.expired_totals(pk) == ExpiredTotals(-1, 0, 0, 0)
    stores.producer_state.put_expired_totals(pk, ExpiredTotals(4, 12, 3000, 5))
    assert stores.producer_state.expired_totals(pk) == ExpiredTotals(4, 12, 3000, 5)
    for stale in (4, 3):
        with pytest.raises(ConditionFailed):
            stores.producer_state.put_expired_totals(pk, ExpiredTotals(stale, 99, 99, 99))
    stores.producer_state.put_expired_totals(pk, ExpiredTotals(6, 14, 3500, 7))
    assert stores.producer_state.expired_totals(pk) == ExpiredTotals(6, 14, 3500, 7)


def test_the_lease_the_snapshot_and_the_expired_totals_are_not_cursors(stores, pk):
    stores.producer_state.put_lease(pk, ProducerLease(epoch=1))
    stores.producer_state.put_snapshot(pk, DedupSnapshot(0, {}))
    stores.producer_state.put_expired_totals(pk, ExpiredTotals(0, 1, 10, 1))
    assert stores.cursors.list(pk) == []
