"""The stats' counter records, pure (``domain.counters``): dispatch counters keep the last
completed minute whichever minute the last dispatch fell in; expired totals fold only the
rows they do not cover yet."""

from __future__ import annotations

from magnetar_core.domain.counters import EntryCounts, ExpiredTotals, OutCounters

T0 = 1_800_000_000_000  # a minute's start (epoch ms)
MINUTE = 60_000


def test_the_last_completed_minute_is_the_current_record_or_the_previous_one_or_nothing():
    out = OutCounters()
    out.record(3, 300, T0 + 5_000)
    assert out.last_window(T0 + 59_999) == (0, 0)  # the minute is not over
    assert out.last_window(T0 + MINUTE) == (3, 300)
    out.record(2, 200, T0 + MINUTE + 5_000)
    assert out.last_window(T0 + MINUTE + 10_000) == (3, 300)  # the previous minute's
    assert out.last_window(T0 + 2 * MINUTE) == (2, 200)
    assert out.last_window(T0 + 3 * MINUTE) == (0, 0)  # nothing in the minute before
    out.record(1, 100, T0 + 5 * MINUTE)  # after a gap: no previous minute to carry
    assert out.last_window(T0 + 5 * MINUTE + 1) == (0, 0)
    assert (out.messages, out.size_bytes) == (6, 600)
    assert OutCounters.from_list(out.to_list()) == out


def test_expired_totals_fold_only_rows_past_what_they_cover_and_never_go_back():
    rows = [EntryCounts(e, 2, 100, 0) for e in range(6)] + [EntryCounts(6, 0, 0, 0)]  # a marker
    first = ExpiredTotals().fold(rows, 2)
    assert first == ExpiredTotals(2, 6, 300, 3)
    assert first.fold(rows, 6) == ExpiredTotals(6, 12, 600, 6)  # the marker: no entry
    assert first.fold(rows, 1) is first
