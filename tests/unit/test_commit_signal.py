"""The commit signal (in memory) and the adaptive check interval: a commit wakes a waiting
long-poll, never too late (no lost wake between the check and the wait), and where nothing
can wake it (Lambda) the head is checked often right after activity and less when idle."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import pytest

from magnetar_core.adapters.memory import LogStore as MemoryLog
from magnetar_core.adapters.memory import MemoryTables, memory_stores
from magnetar_core.adapters.memory.commit_signal import CommitSignal
from magnetar_core.domain.check_interval import CheckInterval
from magnetar_core.domain.runtime import Runtime
from magnetar_core.engine import Engine
from magnetar_local.memory_service import memory_settings
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.names import TopicName

KEY = "persistent://public/default/t|1"
LONG_MS = 30_000  # a wait that must not run out in a passing test


def await_true(condition, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        threading.Event().wait(0.001)


def test_a_commit_before_the_wait_ends_it_at_once():
    signal = CommitSignal()
    seen = signal.version(KEY)
    signal.notify(KEY)  # between the check and the wait
    started = time.monotonic()
    assert signal.wait(KEY, seen, LONG_MS) is True
    assert time.monotonic() - started < 1.0


def test_a_wait_without_a_commit_times_out_false():
    signal = CommitSignal()
    assert signal.wait(KEY, signal.version(KEY), 1) is False


def test_a_commit_to_another_key_does_not_wake_the_wait():
    signal = CommitSignal()
    seen = signal.version(KEY)
    signal.notify("persistent://public/default/other|1")
    assert signal.wait(KEY, seen, 1) is False


def test_a_commit_from_another_thread_wakes_a_blocked_wait():
    signal = CommitSignal()
    seen = signal.version(KEY)
    result: list[bool] = []
    waiter = threading.Thread(target=lambda: result.append(signal.wait(KEY, seen, LONG_MS)))
    waiter.start()
    await_true(lambda: signal.waiting(KEY) == 1)
    signal.notify(KEY)
    waiter.join(timeout=5)
    assert result == [True]


def test_keys_beyond_the_bound_are_dropped_without_losing_a_wake():
    signal = CommitSignal(max_keys=2)
    seen = signal.version(KEY)
    for other in ("a|1", "b|1", "c|1"):
        signal.version(other)  # pushes KEY out
    assert signal.remembered() == 2
    signal.notify(KEY)
    assert signal.wait(KEY, seen, 0) is True


def test_closing_the_signal_wakes_every_waiter():
    signal = CommitSignal()
    result: list[bool] = []
    waiter = threading.Thread(target=lambda: result.append(signal.wait(KEY, 0, LONG_MS)))
    waiter.start()
    await_true(lambda: signal.waiting(KEY) == 1)
    signal.close()
    waiter.join(timeout=5)
    assert result == [True]


def test_the_interval_is_short_after_activity_and_backs_off_to_the_maximum():
    interval = CheckInterval(min_ms=20, max_ms=100, idle_fraction=0.25)
    assert [interval.pause_ms(i) for i in (None, 0, 80, 200, 400, 10_000)] == [
        100, 20, 20, 50, 100, 100,
    ]  # fmt: skip


@pytest.mark.parametrize("bounds", [(0, 100), (200, 100)])
def test_an_interval_with_bounds_out_of_order_is_refused(bounds):
    with pytest.raises(ValueError, match="RECEIVE_CHECK_MIN_INTERVAL_MS"):
        CheckInterval(*bounds)


class FakeTime:
    """One clock for epoch and monotonic ms; ``sleep_ms`` records the pause and moves it."""

    def __init__(self) -> None:
        self.ms = 1_000_000.0
        self.pauses: list[float] = []

    def sleep_ms(self, ms: float) -> None:
        self.pauses.append(ms)
        self.ms += ms

    def runtime(self) -> Runtime:
        return Runtime(
            now_ms=lambda: int(self.ms), monotonic_ms=lambda: self.ms, sleep_ms=self.sleep_ms
        )


def test_a_polling_long_poll_checks_often_right_after_a_delivery_and_less_when_idle():
    fake = FakeTime()
    engine = Engine.assemble(
        replace(memory_settings(), receive_check_interval_ms=100), memory_stores(), fake.runtime()
    )
    waits = engine.subscriptions.dispatch.waits
    deadline = fake.ms + 60_000
    assert waits.until_more(KEY, 0, deadline, waits.version(KEY), None) is True  # 10 checks
    assert fake.pauses == [100] * 10  # nothing happened yet: the full interval
    fake.pauses.clear()
    waits.active(KEY)
    waits.until_more(KEY, 0, deadline, waits.version(KEY), None)
    # 20 ms for the first 80 ms after it, then a quarter of the time since
    assert fake.pauses == [20, 20, 20, 20, 20, 25, 31.25, 39.0625, 48.828125, 61.03515625]


class RecordedSignal(CommitSignal):
    """A commit signal that records how each wait ended: True when a commit ended it."""

    def __init__(self) -> None:
        super().__init__()
        self.woken: list[bool] = []

    def wait(self, pk: str, seen: int, timeout_ms: float) -> bool:
        ended_by_commit = super().wait(pk, seen, timeout_ms)
        self.woken.append(ended_by_commit)
        return ended_by_commit


class CommitAfterRead(MemoryLog):
    """A log on which, once armed, a commit lands right after the dispatch's read."""

    def __init__(self, tables) -> None:
        super().__init__(tables)
        self.commit = None

    def read_from(self, pk, start, limit):
        found = super().read_from(pk, start, limit)
        commit, self.commit = self.commit, None
        if commit is not None and not found:
            commit()  # after the read, before the wait: the race a lost wake would lose
        return found


def test_a_commit_between_the_dispatch_read_and_the_wait_is_not_lost():
    tables = MemoryTables()
    log = CommitAfterRead(tables)
    stores = replace(memory_stores(tables), log=log)
    settings = memory_settings(receive_check_interval_ms=5_000)
    signal = RecordedSignal()
    engine = Engine.assemble(settings, stores, signal=signal)
    engine.tenants.initialize_cluster()
    topic = TopicName.parse("persistent://public/default/race")
    handle = engine.subscriptions.subscribe(topic, "s", "c", "Shared", earliest=True)
    entry = encode_entry([EntryMessage(b"x", 0, 1)], producer_name="p")
    log.commit = lambda: engine.producer.publish(topic, entry)
    delivered = engine.subscriptions.receive(topic, "s", handle.consumer_id, 10, 10_000)
    assert [d.entry_id for d in delivered] == [0]
    assert signal.woken == [True]  # the one wait ended by the commit, not by a head check


def test_commit_signal_setting_names_the_shared_local_signal_or_polling_and_nothing_else():
    from magnetar_core.engine import commit_signal_of
    from magnetar_local.commit_signal import SHARED

    assert commit_signal_of(memory_settings(commit_signal="local")) is SHARED
    assert commit_signal_of(memory_settings(commit_signal="poll")) is None
    with pytest.raises(ValueError, match="COMMIT_SIGNAL must be poll or local, not 'push'"):
        commit_signal_of(memory_settings(commit_signal="push"))
