"""The in-memory TimerStarter (memory only: the AWS one starts Step Functions executions):
idempotent starts by execution name, and releases on the clock, as the timer workflow's
UpdateItem does (see test_cursor_store for that release on both backends)."""

from __future__ import annotations

import threading
import time

from magnetar_core.adapters.memory import CursorStore, MemoryTables, TimerStarter
from magnetar_core.domain.cursor.state import CursorState

PK = "persistent://c/ns/t|1"
BUCKET = 1_800_000_000_000


class Clock:
    def __init__(self, now_ms: int) -> None:
        self.now = now_ms

    def __call__(self) -> int:
        return self.now


def cursors_with(sub: str = "s") -> CursorStore:
    cursors = CursorStore(MemoryTables())
    cursors.put(PK, CursorState.new(sub, "Shared", 0, earliest=True))
    return cursors


def test_a_second_start_of_the_same_timer_reports_it_existed():
    timers = TimerStarter(cursors_with(), Clock(0))
    assert timers.start(PK, "s", "tid", BUCKET) is True
    assert timers.start(PK, "s", "tid", BUCKET) is False
    assert timers.start(PK, "s", "tid-2", BUCKET) is True  # a re-created subscription's
    assert timers.start(PK, "s", "tid", BUCKET + 1000) is True
    assert len(timers.pending()) == 3


def test_a_timer_releases_its_bucket_once_the_clock_reaches_it():
    cursors, clock = cursors_with(), Clock(BUCKET - 1)
    timers = TimerStarter(cursors, clock)
    timers.start(PK, "s", "tid", BUCKET)
    assert timers.release_due() == 0 and cursors.get(PK, "s").released == set()
    clock.now = BUCKET
    assert timers.release_due() == 1
    got = cursors.get(PK, "s")
    assert got.released == {BUCKET} and got.version == 2  # the release bumps the version
    assert timers.pending() == [] and timers.release_due() == 0
    assert timers.start(PK, "s", "tid", BUCKET) is False  # a fired timer still existed


def test_a_timer_of_a_deleted_cursor_fires_without_creating_it():
    cursors, clock = cursors_with(), Clock(BUCKET)
    timers = TimerStarter(cursors, clock)
    timers.start(PK, "gone", "tid", BUCKET)
    assert timers.release_due() == 1
    assert cursors.get(PK, "gone") is None


def test_running_timers_release_due_buckets_in_the_background():
    cursors = cursors_with()
    now = int(time.time() * 1000)
    timers = TimerStarter(cursors, lambda: int(time.time() * 1000)).run(poll_ms=10)
    try:
        timers.start(PK, "s", "tid", now + 50)
        done = threading.Event()
        deadline = time.monotonic() + 5
        while not cursors.get(PK, "s").released and time.monotonic() < deadline:
            done.wait(0.01)
        assert cursors.get(PK, "s").released == {now + 50}
        assert int(time.time() * 1000) >= now + 50
    finally:
        timers.stop()
    assert not [t for t in threading.enumerate() if t.name == "memory-timers"]
