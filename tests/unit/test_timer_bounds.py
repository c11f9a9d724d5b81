"""Timer arithmetic is total (issue 11, defect 1): any Java long as a delivery time, a nack
delay or a backoff gives a bucket within a Java long and an execution input Step Functions
takes; buckets beyond the timer horizon start no execution; a timer that cannot be started
never fails the cursor change that needed it."""

from __future__ import annotations

import json
import math

import pytest

from magnetar_core.domain.cursor.state import CursorState
from magnetar_core.domain.errors import StorageFault, TooManyRequests
from magnetar_core.domain.log import IndexEntry
from magnetar_core.domain.rangeset import RangeSet
from magnetar_core.domain.timers import (
    MAX_BUCKET_MS,
    TIMER_HORIZON_MS,
    NackBackoff,
    TimerOptions,
    due_bucket,
    execution_input,
    iso_utc,
    nack_bucket,
)
from magnetar_core.services.timers import DelayTimers

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
T0 = 1_700_000_000_000
YEAR_10000 = 253_402_300_800_000
EXTREMES = [INT64_MIN, -1, 0, 1, T0, YEAR_10000, YEAR_10000 + 1, INT64_MAX - 1000, INT64_MAX]


@pytest.mark.parametrize("epoch_ms", EXTREMES)
def test_every_java_long_formats_as_a_timestamp_step_functions_takes(epoch_ms):
    text = iso_utc(epoch_ms)
    assert len(text) == 20 and text.endswith("Z") and "0001-01-01" <= text <= "9999-12-31T23:59:59Z"


def test_the_year_10000_and_later_format_as_the_last_second_of_9999():
    assert iso_utc(YEAR_10000) == iso_utc(INT64_MAX) == "9999-12-31T23:59:59Z"
    assert iso_utc(-5) == "1970-01-01T00:00:00Z"


@pytest.mark.parametrize("deliver_at", EXTREMES)
@pytest.mark.parametrize("options", [TimerOptions(), TimerOptions(strict=True, tick_ms=7)])
def test_a_bucket_of_any_java_long_is_a_whole_second_within_a_java_long(deliver_at, options):
    bucket = due_bucket(deliver_at, T0, options)
    if deliver_at <= T0:
        assert bucket is None
    else:
        assert bucket is not None and T0 < bucket <= MAX_BUCKET_MS <= INT64_MAX
        assert bucket % 1000 == 0
        json.loads(execution_input("pk", "s", bucket))  # never raises


@pytest.mark.parametrize("delay_ms", [1, 10**15, INT64_MAX])
@pytest.mark.parametrize("now_ms", [T0, INT64_MAX - 5])
def test_a_nack_delay_of_any_java_long_gives_a_bucket_within_a_java_long(delay_ms, now_ms):
    bucket = nack_bucket(now_ms, delay_ms, TimerOptions())
    assert bucket is not None and bucket <= MAX_BUCKET_MS
    assert bucket >= min(now_ms + delay_ms, MAX_BUCKET_MS)  # never early, unless past the end


@pytest.mark.parametrize("multiplier", [1e300, 1.7976931348623157e308, 10.0])
def test_a_huge_backoff_multiplier_gives_the_maximum_delay_instead_of_overflowing(multiplier):
    backoff = NackBackoff(1000, INT64_MAX, multiplier)
    for count in (0, 1, 2, 64, 10**6):
        assert 1000 <= backoff.delay_ms(count) <= INT64_MAX
    assert backoff.delay_ms(64) == INT64_MAX


@pytest.mark.parametrize("multiplier", [math.inf, math.nan])
def test_a_backoff_multiplier_that_is_not_a_finite_number_is_refused(multiplier):
    with pytest.raises(ValueError, match="multiplier"):
        NackBackoff(1000, 60_000, multiplier)


# -- starting timers ------------------------------------------------------------------------


class Starter:
    """A TimerStarter that records starts and fails the buckets it is told to."""

    def __init__(self, fail: dict[int, Exception] | None = None) -> None:
        self.started: list[int] = []
        self.fail = fail or {}

    def start(self, pk: str, subscription: str, timer_id: str, bucket_ms: int) -> bool:
        if bucket_ms in self.fail:
            raise self.fail[bucket_ms]
        execution_input(pk, subscription, bucket_ms)  # what the AWS adapter sends
        self.started.append(bucket_ms)
        return True


def delayed(*buckets: int) -> CursorState:
    state = CursorState.new("s", "Shared", last_entry_id=-1, earliest=True)
    for i, bucket in enumerate(buckets):
        state.delayed[bucket] = RangeSet([(i, i)])
    return state


def test_no_execution_starts_for_a_bucket_beyond_the_timer_horizon():
    starter = Starter()
    timers = DelayTimers(TimerOptions(), starter, lambda: T0)
    near, far = T0 + 5000, T0 + TIMER_HORIZON_MS + 1000
    state = delayed(near, far, MAX_BUCKET_MS)

    assert timers.start_new("pk", state, set(), "tid") == 1
    assert starter.started == [near]
    assert TIMER_HORIZON_MS < 365 * 24 * 3600 * 1000  # Step Functions Standard: 1 year at most


def test_a_bucket_whose_timer_fails_to_start_is_left_to_the_overdue_rule(caplog):
    starter = Starter(fail={T0 + 2000: StorageFault("InvalidExecutionInput")})
    timers = DelayTimers(TimerOptions(), starter, lambda: T0)
    state = delayed(T0 + 1000, T0 + 2000, T0 + 3000)

    assert timers.start_new("pk", state, set(), "tid") == 2
    assert starter.started == [T0 + 1000, T0 + 3000]
    assert "1700000002000" in caplog.text and "entries [1]" in caplog.text


def test_throttling_of_a_timer_start_still_fails_the_change_to_be_retried():
    starter = Starter(fail={T0 + 1000: TooManyRequests("slow down")})
    timers = DelayTimers(TimerOptions(), starter, lambda: T0)
    with pytest.raises(TooManyRequests):
        timers.start_new("pk", delayed(T0 + 1000), set(), "tid")


def entry(entry_id: int, deliver_at_ms) -> IndexEntry:
    return IndexEntry(entry_id, "k", 0, 1, 1, False, T0, T0, "p", 0, 0, deliver_at_ms=deliver_at_ms)


def test_an_entry_whose_delay_cannot_be_computed_is_logged_and_goes_out_at_once(caplog):
    timers = DelayTimers(TimerOptions(), Starter(), lambda: T0)
    good = entry(3, T0 + 5000)
    bad = entry(4, "soon")  # a corrupt item: the index holds no number

    assert timers.due_of([good, bad], T0) == {3: T0 + 5000}
    assert "entry 4" in caplog.text
