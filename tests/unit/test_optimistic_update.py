"""services.optimistic.update: the one read-modify-write loop of versioned records."""

from __future__ import annotations

import pytest

from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.runtime import JitterBackoff, Runtime
from magnetar_core.services import optimistic


class Record:
    """A versioned cell that loses the first ``losses`` conditional writes."""

    def __init__(self, losses: int = 0) -> None:
        self.value = 0
        self.version = 0
        self.losses = losses
        self.reads = 0
        self.writes: list[int] = []

    def read(self) -> tuple[int, int]:
        self.reads += 1
        return self.value, self.version

    def write(self, new: tuple[int, int]) -> None:
        value, read_version = new
        self.writes.append(value)
        if self.losses > 0 or read_version != self.version:
            self.losses -= 1
            self.version += 1  # someone else wrote
            raise ConditionFailed("lost")
        self.value, self.version = value, self.version + 1


def runtime(slept: list[float]) -> Runtime:
    return Runtime(sleep_ms=slept.append, backoff=JitterBackoff(base_ms=2.0, cap_ms=100.0))


def increment(read: tuple[int, int]) -> tuple[str, tuple[int, int]]:
    value, version = read
    return f"now {value + 1}", (value + 1, version)


def test_a_write_that_wins_at_once_returns_the_changes_result_without_sleeping():
    record, slept = Record(), []
    assert optimistic.update(record.read, increment, record.write, runtime(slept), 5) == "now 1"
    assert (record.value, record.reads, slept) == (1, 1, [])


def test_lost_writes_start_over_from_a_fresh_read_after_a_jittered_sleep():
    record, slept = Record(losses=2), []
    assert optimistic.update(record.read, increment, record.write, runtime(slept), 5) == "now 1"
    assert (record.value, record.reads, len(record.writes)) == (1, 3, 3)
    assert len(slept) == 2 and 0 <= slept[0] <= 2.0 and 0 <= slept[1] <= 4.0


def test_a_change_with_nothing_to_write_returns_its_result_without_writing():
    record, slept = Record(), []
    outcome = optimistic.update(
        record.read, lambda _: ("unchanged", None), record.write, runtime(slept), 5
    )
    assert (outcome, record.writes) == ("unchanged", [])


def test_running_out_of_attempts_is_a_conflict_outcome_after_exactly_max_attempts():
    record, slept = Record(losses=100), []
    outcome = optimistic.update(record.read, increment, record.write, runtime(slept), 4)
    assert outcome == optimistic.Conflict(4)
    assert (record.reads, len(record.writes), len(slept), record.value) == (4, 4, 4, 0)


def test_what_the_change_raises_propagates_and_nothing_is_written():
    record = Record()

    def refuse(_):
        raise ValueError("no")

    with pytest.raises(ValueError, match="no"):
        optimistic.update(record.read, refuse, record.write, runtime([]), 4)
    assert record.writes == []


def test_changed_writes_the_mutated_record_only_when_dirty():
    record = object()
    assert optimistic.changed(record, 3, True) == (3, record)
    assert optimistic.changed(record, 3, False) == (3, None)
