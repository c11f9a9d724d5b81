"""The incremental expire run's per-ledger window (pure: no JVM, no AWS): which index rows
it reads, and how few."""

from __future__ import annotations

from collections.abc import Iterator

from magnetar_jobs.expire_window import (
    CursorBound,
    LedgerPolicy,
    segment_last_eid,
    ttl_mark,
    window,
)

NOW = 1_700_000_000_000
MINUTE = 60_000
PK = "persistent://t/ns/a|1"


def row(eid, pt1=NOW - MINUTE, *, obj="", length=100, n=1):
    """One index row in ``catalog.INDEX_COLUMNS`` order."""
    return (PK, eid, obj, 0, length, n, pt1, pt1, 0, False, False, None)


class Ledger:
    """Index rows served from memory, counting the rows a reader pulled."""

    def __init__(self, rows) -> None:
        self.rows = sorted(rows, key=lambda r: r[1])
        self.pulled = 0

    def read(self, start: int) -> Iterator[tuple]:
        for r in self.rows:
            if r[1] >= start:
                self.pulled += 1
                yield r


def policy(*cursors, ttl=0, minutes=0, mb=0):
    return LedgerPolicy(NOW, ttl, minutes, mb, tuple(cursors))


def durable(md):
    return CursorBound(True, True, md)


def eids(rows):
    return [r[1] for r in rows]


def test_a_ledger_whose_acknowledged_prefix_is_gone_is_read_up_to_its_first_item_only():
    ledger = Ledger([row(e) for e in range(100, 1000)])  # 0..99 deleted by the last run
    found = window(policy(durable(99)), ledger.read)
    assert (eids(found), ledger.pulled) == ([100], 1)


def test_newly_acknowledged_entries_are_read_up_to_the_first_one_still_held():
    ledger = Ledger([row(e) for e in range(100, 1000)])
    found = window(policy(durable(149)), ledger.read)
    assert eids(found) == list(range(100, 151))


def test_a_ledger_whose_every_entry_may_go_is_read_to_its_head():
    ledger = Ledger([row(e) for e in range(5)])
    assert eids(window(policy(durable(4)), ledger.read)) == [0, 1, 2, 3, 4]


def test_time_retention_stops_the_window_at_the_first_entry_it_still_keeps():
    old, young = NOW - 120 * MINUTE, NOW - 10 * MINUTE
    ledger = Ledger([row(e, old) for e in range(10)] + [row(e, young) for e in range(10, 500)])
    found = window(policy(durable(499), minutes=60, mb=-1), ledger.read)
    assert eids(found) == list(range(11))


def test_infinite_retention_reads_one_item():
    ledger = Ledger([row(e) for e in range(500)])
    found = window(policy(durable(499), minutes=-1, mb=-1), ledger.read)
    assert eids(found) == [0]


def test_size_retention_reads_the_whole_ledger():
    ledger = Ledger([row(e) for e in range(50)])
    found = window(policy(durable(49), minutes=-1, mb=10), ledger.read)
    assert len(found) == 50


def test_the_ttl_scan_reads_from_the_lowest_mark_delete_to_the_first_unexpired_entry():
    old, young = NOW - 10 * MINUTE, NOW - 1_000
    ledger = Ledger([row(e, old) for e in range(300)] + [row(e, young) for e in range(300, 900)])
    found = window(policy(durable(199), ttl=60), ledger.read)
    assert ttl_mark(found, NOW - 60_000) == 299
    assert eids(found) == list(range(301))  # deletion: 0..299 once the TTL moved the cursor


def test_markers_never_stop_the_window():
    rows = [row(e) for e in range(3)] + [row(3, n=0, length=0), row(4, n=0, length=0), row(5)]
    ledger = Ledger(rows)
    found = window(policy(durable(2)), ledger.read)
    assert eids(found) == [0, 1, 2, 3, 4, 5]


def test_the_window_covers_every_member_of_a_segment_a_deletable_entry_belongs_to():
    segment = "segments/persistent/t/ns/a/1/0-9"
    rows = [row(e, obj=segment, length=10) for e in range(10) if e != 4]
    rows += [row(4)] + [row(e) for e in range(10, 50)]  # 4: not in the segment, stops
    found = window(policy(durable(3)), Ledger(rows).read)
    assert eids(found) == list(range(10))  # 0..3 may go: the segment's members up to 9


def test_a_stop_row_inside_the_segment_needs_no_more_of_it():
    segment = "segments/persistent/t/ns/a/1/0-99"
    ledger = Ledger([row(e, obj=segment, length=10) for e in range(100)])
    assert eids(window(policy(durable(3)), ledger.read)) == [0, 1, 2, 3, 4]
    assert eids(window(policy(durable(-1)), ledger.read)) == [0]


def test_entries_sharing_an_object_with_deletable_ones_are_read_with_them():
    shared = "entries/x/shared"
    rows = [row(0, obj=shared), row(1, obj=shared), row(2), row(3, obj=shared)]
    rows += [row(e, obj=f"entries/x/{e}") for e in range(4, 20)]
    found = window(policy(durable(1)), Ledger(rows).read)
    assert eids(found) == [0, 1, 2, 3]


def test_a_live_reader_holds_and_a_lapsed_one_does_not():
    ledger = Ledger([row(e) for e in range(100)])
    reader = CursorBound(False, True, 20)
    assert eids(window(policy(durable(60), reader), ledger.read)) == list(range(22))
    lapsed = CursorBound(False, False, 20)
    assert eids(window(policy(durable(60), lapsed), ledger.read)) == list(range(62))


def test_segment_keys_name_their_last_member():
    assert segment_last_eid("segments/persistent/t/ns/a-partition-1/3/17-42") == 42
    assert segment_last_eid("entries/persistent/t/ns/a/abc-def") is None
