"""Delay timers, pure: due buckets (default and strict), the delayed set of a cursor,
consuming releases, nack delays and backoff, and the cursor item round trip."""

from __future__ import annotations

import json

import pytest

from magnetar_core.adapters.aws.cursors import cursor_from_item, cursor_to_item
from magnetar_core.domain.cursor.state import ConsumerInfo, CursorState, KeySharedOptions
from magnetar_core.domain.rangeset import RangeSet
from magnetar_core.domain.timers import (
    NackBackoff,
    TimerOptions,
    due_bucket,
    execution_input,
    execution_name,
    iso_utc,
    nack_bucket,
)

T0 = 1_700_000_000_000  # a whole second
DEFAULT = TimerOptions()
STRICT = TimerOptions(strict=True)


def shared(*consumers: str) -> CursorState:
    state = CursorState.new("s", "Shared", last_entry_id=-1, earliest=True)
    for c in consumers:
        state.add_consumer(ConsumerInfo(c, c, 0, 0), "Shared")
    return state


# -- buckets ------------------------------------------------------------------------------


def test_a_message_due_in_the_current_tick_goes_out_now_by_default_but_not_in_strict_mode():
    assert due_bucket(T0 + 700, now_ms=T0 + 100, options=DEFAULT) is None
    assert due_bucket(T0 + 700, now_ms=T0 + 100, options=STRICT) == T0 + 1000


def test_the_default_bucket_is_the_tick_the_message_falls_in_and_strict_the_next_boundary():
    assert due_bucket(T0 + 2500, T0, DEFAULT) == T0 + 2000
    assert due_bucket(T0 + 2500, T0, STRICT) == T0 + 3000
    assert due_bucket(T0 + 3000, T0, STRICT) == T0 + 3000  # a boundary is its own bucket


def test_buckets_are_rounded_up_to_whole_seconds_whatever_the_tick():
    fine = TimerOptions(tick_ms=100)
    assert due_bucket(T0 + 2_450, T0, fine) == T0 + 3000
    assert due_bucket(T0 + 2_450, T0, TimerOptions(tick_ms=100, strict=True)) == T0 + 3000
    coarse = TimerOptions(tick_ms=5000)
    assert due_bucket(T0 + 7_000, T0, coarse) == T0 + 5000


def test_a_strict_bucket_is_never_before_the_message_and_is_always_in_the_future():
    for tick in (1, 100, 250, 1000, 3000):
        for offset in (1, 999, 1000, 1001, 2500, 59_999):
            now = T0 + 17
            bucket = due_bucket(now + offset, now, TimerOptions(tick_ms=tick, strict=True))
            assert bucket >= now + offset and bucket > now and bucket % 1000 == 0


def test_past_or_absent_delivery_times_are_not_delayed():
    assert due_bucket(0, T0, STRICT) is None
    assert due_bucket(T0 - 1, T0, STRICT) is None
    assert due_bucket(T0, T0, STRICT) is None


def test_a_tick_below_one_millisecond_is_refused():
    with pytest.raises(ValueError):
        TimerOptions(tick_ms=0)


def test_a_nack_delay_is_a_minimum_and_zero_means_at_once():
    assert nack_bucket(T0 + 300, 2000, DEFAULT) == T0 + 3000
    assert nack_bucket(T0, 2000, DEFAULT) == T0 + 2000
    assert nack_bucket(T0, 0, DEFAULT) is None


def test_the_backoff_follows_the_seeds_table_1_2_4_8_16_32_60_60_seconds():
    backoff = NackBackoff(1000, 60_000, 2)
    assert [backoff.delay_ms(n) // 1000 for n in range(8)] == [1, 2, 4, 8, 16, 32, 60, 60]


def test_a_backoff_with_a_maximum_below_its_minimum_or_a_shrinking_multiplier_is_refused():
    with pytest.raises(ValueError):
        NackBackoff(2000, 1000, 2)
    with pytest.raises(ValueError):
        NackBackoff(1000, 2000, 0.5)


def test_execution_names_are_deterministic_short_and_distinct_per_cursor_and_bucket():
    pk = "persistent://public/default/" + "t" * 200 + "-partition-3|1"
    name = execution_name(pk, "sub", "tid", T0)
    assert name == execution_name(pk, "sub", "tid", T0)
    assert len(name) <= 80 and name.replace("-", "").isalnum()
    assert name != execution_name(pk, "sub", "tid", T0 + 1000)
    assert name != execution_name(pk, "sub2", "tid", T0)
    assert name != execution_name(pk, "sub", "tid2", T0)


def test_the_execution_input_carries_the_bucket_as_a_number_set_value_and_a_z_timestamp():
    data = json.loads(execution_input("pk|1", "sub", T0 + 3000))
    assert data == {
        "pk": "pk|1",
        "sub": "sub",
        "bucket": T0 + 3000,
        "buckets": [str(T0 + 3000)],
        "dueAt": "2023-11-14T22:13:23Z",
    }
    assert iso_utc(T0 + 1) == "2023-11-14T22:13:21Z"  # rounded up, never early


# -- the delayed set ----------------------------------------------------------------------


def test_shared_dispatch_defers_delayed_entries_and_hands_out_the_others_in_order():
    state = shared("c")
    out = state.dispatch("c", [(0, 1), (1, 1), (2, 1)], 10, 100, due={1: T0 + 2000})

    assert [d.entry_id for d in out] == [0, 2]
    assert state.read_position == 3
    assert state.delayed == {T0 + 2000: RangeSet([(1, 1)])}
    assert 1 not in state.redeliver and 1 not in state.in_flight()


def test_a_released_bucket_is_consumed_only_once_its_time_has_come():
    state = shared("c")
    state.dispatch("c", [(0, 1)], 10, 100, due={0: T0 + 2000})
    state.released = {T0 + 2000}

    assert state.consume_releases(now_ms=T0 + 1500) == 0  # the timer fired early
    assert state.delayed and state.released == {T0 + 2000}

    assert state.consume_releases(now_ms=T0 + 2000) == 1
    assert state.delayed == {} and state.released == set() and state.released_max == T0 + 2000
    assert [d.entry_id for d in state.dispatch("c", [(0, 1)], 10, 100)] == [0]


def test_releases_of_other_buckets_are_kept_and_buckets_before_a_consumed_one_come_out():
    state = shared("c")
    state.dispatch("c", [(0, 1), (1, 1)], 10, 100, due={0: T0 + 1000, 1: T0 + 9000})
    state.defer(5, T0 + 3000)
    state.released = {T0 + 3000, T0 + 9000}

    assert state.consume_releases(now_ms=T0 + 3000) == 2  # entries 0 (older bucket) and 5
    assert state.released == {T0 + 9000}
    assert state.delayed == {T0 + 9000: RangeSet([(1, 1)])}


def test_a_bucket_at_or_before_the_latest_consumed_release_is_not_waited_on_again():
    state = shared("c")
    state.released_max = T0 + 5000
    out = state.dispatch("c", [(0, 1), (1, 1)], 10, 100, due={0: T0 + 5000, 1: T0 + 6000})
    assert [d.entry_id for d in out] == [0]
    assert list(state.delayed) == [T0 + 6000]


def test_a_bucket_whose_timer_never_fired_is_released_once_overdue_by_the_grace():
    state = shared("c")
    state.dispatch("c", [(0, 1), (1, 1)], 10, 100, due={0: T0 + 1000, 1: T0 + 5000})

    assert state.consume_releases(T0 + 31_000, grace_ms=30_000) == 0  # not more than grace
    assert state.consume_releases(T0 + 31_001, grace_ms=30_000) == 1
    assert list(state.redeliver) == [0] and list(state.delayed) == [T0 + 5000]
    assert state.released_max == T0 + 1000
    assert state.consume_releases(T0 + 10**9) == 0  # without a grace, never


def test_a_negative_release_grace_is_refused():
    with pytest.raises(ValueError):
        TimerOptions(release_grace_ms=-1)


def test_exclusive_callers_pass_no_due_map_so_delayed_entries_go_out_at_once():
    state = CursorState.new("s", "Exclusive", last_entry_id=-1, earliest=True)
    state.add_consumer(ConsumerInfo("c", "c", 0, 0), "Exclusive")
    assert [d.entry_id for d in state.dispatch("c", [(0, 1)], 10, 100)] == [0]


def test_acknowledging_a_delayed_entry_drops_it_from_the_delayed_set():
    state = shared("c")
    state.dispatch("c", [(0, 1), (1, 1), (2, 1)], 10, 100, due={1: T0, 2: T0 + 1000})
    state.acknowledge([(1, -1)])
    assert state.delayed == {T0 + 1000: RangeSet([(2, 2)])}
    state.seek(0)
    assert state.delayed == {}


def test_a_delayed_nack_waits_in_its_bucket_with_the_redelivery_count_plus_one():
    state = shared("c")
    state.dispatch("c", [(0, 1), (1, 1)], 10, 100)

    moved = state.negative_acknowledge("c", [0, 1], bucket_of=lambda count: T0 + 2000)

    assert moved == 2
    assert state.delayed == {T0 + 2000: RangeSet([(0, 1)])}
    assert state.redelivery_counts == {0: 1, 1: 1}
    assert not state.redeliver and not state.in_flight()
    assert state.dispatch("c", [(0, 1), (1, 1)], 10, 100) == []
    state.released = {T0 + 2000}
    state.consume_releases(T0 + 2000)
    out = state.dispatch("c", [(0, 1), (1, 1)], 10, 100)
    assert [(d.entry_id, d.redelivery_count) for d in out] == [(0, 1), (1, 1)]


def test_key_shared_dispatch_defers_a_delayed_entry_and_skips_it_until_released():
    state = CursorState.new("ks", "Key_Shared", last_entry_id=-1, earliest=True)
    state.add_consumer(ConsumerInfo("c", "c", 0, 0), "Key_Shared", KeySharedOptions())
    candidates = [(0, (7,)), (1, (7,)), (2, (9,))]

    out = state.dispatch_key_shared("c", candidates, 10, 100, due={1: T0 + 1000})

    assert [d.entry_id for d in out] == [0, 2]
    assert state.delayed == {T0 + 1000: RangeSet([(1, 1)])}
    assert state.dispatch_key_shared("c", [(1, (7,))], 10, 100) == []
    state.released = {T0 + 1000}
    state.consume_releases(T0 + 1000)
    assert [d.entry_id for d in state.dispatch_key_shared("c", [(1, (7,))], 10, 100)] == [1]


# -- the cursor item ----------------------------------------------------------------------


def test_the_cursor_item_round_trips_the_delayed_set_releases_and_timer_id():
    state = shared("c")
    state.dispatch("c", [(0, 1), (1, 1), (2, 1)], 10, 100, due={0: T0 + 1000, 2: T0 + 4000})
    state.released = {T0 + 1000, T0 + 9000}
    state.released_max = T0
    state.timer_id = "abc"

    item = cursor_to_item("pk|1", state)
    assert item["rel"] == {"NS": [str(T0 + 1000), str(T0 + 9000)]}
    back = cursor_from_item(item)

    assert back.delayed == state.delayed
    assert back.released == state.released
    assert back.released_max == T0
    assert back.timer_id == "abc"


def test_a_cursor_without_releases_writes_no_empty_number_set():
    item = cursor_to_item("pk|1", shared("c"))
    assert "rel" not in item
    assert cursor_from_item(item).released == set()
