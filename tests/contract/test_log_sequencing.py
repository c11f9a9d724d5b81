"""Contract of the log's sequencer: ids from an atomic counter, gaps of writers in flight,
holes of dead writers settled by readers, access epochs and fences at allocation."""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace

import pytest
from contract_records import entry

from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.log import IndexEntry
from magnetar_core.domain.sequencing import HOLE_AFTER_MS, EpochSuperseded, LedgerClosed, Writer


@dataclass
class Clock:
    now_ms: int = 1_800_000_000_000

    def __call__(self) -> int:
        return self.now_ms


@pytest.fixture
def pk(uid) -> str:
    return f"persistent://c/ns/seq-{uid}|1"


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def log(backend, clock):
    """A log store whose clock the test moves (a process of its own on the tables)."""
    return backend.log_with_clock(clock)


def _at(entry_id: int, allocated_ms: int) -> IndexEntry:
    return entry(entry_id, allocated_ms=allocated_ms)


def test_a_new_ledger_hands_out_ids_from_zero_in_order(log, pk):
    first = log.allocate(pk, 1)
    more = log.allocate(pk, 3)
    assert (first.first_id, more.first_id, list(more.ids)) == (0, 1, [1, 2, 3])


def test_concurrent_allocations_never_share_an_id_and_leave_none_out(log, pk):
    taken: list[int] = []
    lock = threading.Lock()

    def allocate() -> None:
        for _ in range(10):
            got = log.allocate(pk, 1).first_id
            with lock:
                taken.append(got)

    threads = [threading.Thread(target=allocate) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(taken) == list(range(60))


def test_a_writer_in_flight_hides_the_entries_after_its_id_until_it_commits(log, clock, pk):
    now = log.allocate(pk, 3).allocated_ms
    log.append(pk, _at(0, now))
    log.append(pk, _at(2, now))
    clock.now_ms += HOLE_AFTER_MS - 1  # not yet presumed dead

    assert [e.entry_id for e in log.read_from(pk, 0, 10)] == [0]
    assert log.head(pk) == 0
    assert (log.exists(pk, 0), log.exists(pk, 1)) == (True, False)
    assert [e for e, *_ in log.producer_tail(pk, 0)] == [0]

    log.append(pk, _at(1, now))
    assert [e.entry_id for e in log.read_from(pk, 0, 10)] == [0, 1, 2]
    assert log.head(pk) == 2 and log.last(pk) == _at(2, now)


def test_a_dead_writers_id_becomes_a_hole_that_every_read_skips_and_its_late_write_fails(
    log, clock, pk
):
    then = log.allocate(pk, 3).allocated_ms
    log.append(pk, _at(0, then))
    log.append(pk, _at(2, then))
    clock.now_ms += HOLE_AFTER_MS

    read = log.read_from(pk, 0, 10)  # the hole reads as a marker: a cursor steps over it
    assert [(e.entry_id, e.hole, e.count) for e in read] == [
        (0, False, 1),
        (1, True, 0),
        (2, False, 1),
    ]
    assert log.head(pk) == 2 and log.exists(pk, 1)
    assert log.get_many(pk, [0, 1, 2]).keys() == {0, 2}
    assert [r.entry_id for r in log.range_counts(pk, 0, 2)] == [0, 2]
    assert [e for e, *_ in log.producer_tail(pk, 0)] == [0, 2]
    with pytest.raises(ConditionFailed):
        log.append(pk, _at(1, then))  # the late writer must take a new id


def test_ids_taken_and_never_written_hold_the_head_back_only_until_the_bound(log, clock, pk):
    now = log.allocate(pk, 1).allocated_ms
    log.append(pk, _at(0, now))
    log.allocate(pk, 2)  # both writers die
    assert not log.exists(pk, 1)

    clock.now_ms += HOLE_AFTER_MS
    assert log.exists(pk, 2)
    assert log.head(pk) == 0 and log.last(pk) == _at(0, now)
    assert log.allocate(pk, 1).first_id == 3


def test_the_first_allocation_of_a_ledger_written_before_sequencers_starts_after_its_last_entry(
    log, pk
):
    log.append(pk, entry(0))
    log.append(pk, entry(1, epoch=4, exclusive=True))

    taken = log.allocate(pk, 1, opens=(4, False))
    assert (taken.first_id, taken.epoch, taken.exclusive) == (2, 4, False)


def test_the_open_epoch_admits_only_writers_it_allows(log, pk):
    log.allocate(pk, 1, opens=(2, True))
    for refused in (Writer(None), Writer(1)):
        with pytest.raises(EpochSuperseded) as caught:
            log.allocate(pk, 1, writer=refused)
        assert (caught.value.epoch, caught.value.exclusive) == (2, True)
    with pytest.raises(EpochSuperseded):
        log.allocate(pk, 1, opens=(1, False))

    admitted = log.allocate(pk, 1, writer=Writer(2))
    assert (admitted.first_id, admitted.epoch, admitted.exclusive) == (1, 2, True)
    log.allocate(pk, 1, opens=(2, False))
    assert log.allocate(pk, 1, writer=Writer(None)).first_id == 3


def test_a_fenced_ledger_allocates_nothing_more(log, pk):
    now = log.allocate(pk, 1).allocated_ms
    log.append(pk, _at(0, now))
    fence_id = log.allocate(pk, 1, closes=True).first_id
    log.append(pk, replace(IndexEntry.fence_at(fence_id), allocated_ms=now))

    with pytest.raises(LedgerClosed):
        log.allocate(pk, 1)
    assert log.head(pk) == 0 and log.last(pk).fence


def test_a_fencer_that_died_before_writing_its_fence_has_it_written_by_a_reader(log, clock, pk):
    now = log.allocate(pk, 1).allocated_ms
    log.append(pk, _at(0, now))
    log.allocate(pk, 1, closes=True)
    clock.now_ms += HOLE_AFTER_MS

    last = log.last(pk)
    assert last is not None and last.fence and last.entry_id == 1
    assert log.head(pk) == 0


def test_another_process_sees_what_one_process_settled(backend, log, clock, pk):
    then = log.allocate(pk, 2).allocated_ms
    log.append(pk, _at(1, then))
    clock.now_ms += HOLE_AFTER_MS
    assert log.head(pk) == 1  # id 0 settled as a hole

    other = backend.log_with_clock(clock)
    assert [(e.entry_id, e.hole) for e in other.read_from(pk, 0, 10)] == [(0, True), (1, False)]
    assert other.allocate(pk, 1).first_id == 2
