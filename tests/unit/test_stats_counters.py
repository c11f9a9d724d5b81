"""Cumulative counters and rates of the stats (issue 14, "Stats that are right"), on the
memory service with a fake clock and hand-computed expectations: ``msgInCounter`` and
``bytesInCounter`` never go down when the expire job deletes old entries (it folds them into
the ledger's expired totals first: ``fold_expired``, called here as the job calls it, then
the items are deleted as the job deletes them); ``msgOutCounter``/``bytesOutCounter`` count
every dispatch, redeliveries again; rates are over the last completed minute."""

from __future__ import annotations

import pytest
from stats_support import Clock, b64, close, consumer_call, produce, stats, subscribe

from magnetar_core.domain.runtime import Runtime
from magnetar_core.services.expired_totals import fold_expired
from magnetar_local.memory_service import MemoryService

PATH = "persistent/public/default/counted"
MINUTE_MS = 60_000
T0 = 1_800_000_000_000  # a minute's start (epoch ms)


@pytest.fixture
def clock() -> Clock:
    return Clock(T0 + 5_000)


@pytest.fixture
def svc(clock):
    with MemoryService(runtime=Runtime(now_ms=clock)) as service:
        yield service


def entry_sizes(svc, path: str) -> dict[int, int]:
    key = svc.key_of(path)
    return {r.entry_id: r.size_bytes for r in svc.stores.log.range_counts(key, 0, 1_000)}


def expire_through(svc, path: str, through: int, delete: bool = True) -> None:
    """What the expire job does to a ledger's prefix: fold, then delete the index items."""
    key = svc.key_of(path)
    fold_expired(svc.stores.log, svc.stores.producer_state, key, through)
    if delete:
        with svc.tables.lock:
            for entry_id in range(through + 1):
                svc.tables.log.delete(key, entry_id)


def test_in_counters_stay_cumulative_when_the_expire_job_deletes_acknowledged_entries(svc):
    consumer = subscribe(svc, PATH, "s")
    produce(svc, PATH, b64("a"), b64("b"), b64("c"))  # entry 0: a batch of 3
    produce(svc, PATH, b64("d"))  # entry 1
    produce(svc, PATH, b64("e"))  # entry 2
    sizes = entry_sizes(svc, PATH)
    got = consumer_call(svc, PATH, "s", consumer, "receive", {"maxMessages": 10, "waitMs": 0})
    ids = [m["messageId"] for m in got["messages"]]
    consumer_call(svc, PATH, "s", consumer, "ack", {"messageIds": ids[:4]})  # entries 0, 1
    before = stats(svc, PATH)
    assert (before["msgInCounter"], before["bytesInCounter"]) == (5, sum(sizes.values()))
    assert (before["storageSize"], before["entriesCount"]) == (sum(sizes.values()), 3)

    expire_through(svc, PATH, 1, delete=False)  # a run that died between fold and delete
    crashed = stats(svc, PATH)
    assert (crashed["msgInCounter"], crashed["bytesInCounter"]) == (5, sum(sizes.values()))
    expire_through(svc, PATH, 1)  # the next run: folds nothing twice, deletes

    after = stats(svc, PATH)
    assert (after["msgInCounter"], after["bytesInCounter"]) == (5, sum(sizes.values()))
    assert (after["storageSize"], after["entriesCount"]) == (sizes[2], 1)
    assert after["subscriptions"]["s"]["msgBacklog"] == 1
    produce(svc, PATH, b64("f"))
    assert stats(svc, PATH)["msgInCounter"] == 6


def test_out_counters_count_every_dispatch_and_sum_over_subscriptions(svc):
    first = subscribe(svc, PATH, "s")
    other = subscribe(svc, PATH, "t")
    for i in range(5):
        produce(svc, PATH, b64(f"m{i}"))
    sizes = entry_sizes(svc, PATH)
    consumer_call(svc, PATH, "s", first, "receive", {"maxMessages": 3, "waitMs": 0})
    close(svc, PATH, "s", first)  # entries 0-2 go back for redelivery
    second = subscribe(svc, PATH, "s")
    consumer_call(svc, PATH, "s", second, "receive", {"maxMessages": 10, "waitMs": 0})
    consumer_call(svc, PATH, "t", other, "receive", {"maxMessages": 1, "waitMs": 0})

    got = stats(svc, PATH)
    s, t = got["subscriptions"]["s"], got["subscriptions"]["t"]
    # a receive of fewer messages than a grant (up to 32 entries, a fair share) dispatches
    # the whole grant to its consumer, as Pulsar's dispatcher fills a receiver queue: "s"
    # sent 0-4 twice (the grant of the closed consumer came back), "t" 0-4 once
    assert (s["msgOutCounter"], s["bytesOutCounter"]) == (10, 2 * sum(sizes.values()))
    assert (t["msgOutCounter"], t["bytesOutCounter"]) == (5, sum(sizes.values()))
    assert got["msgOutCounter"] == 15
    assert got["bytesOutCounter"] == s["bytesOutCounter"] + t["bytesOutCounter"]


def test_rates_are_per_second_over_the_last_completed_minute(svc, clock):
    consumer = subscribe(svc, PATH, "s")
    produce(svc, PATH, *(b64(f"m{i}") for i in range(6)))  # one entry of 6, at T0 + 5 s
    size = entry_sizes(svc, PATH)[0]
    consumer_call(svc, PATH, "s", consumer, "receive", {"maxMessages": 10, "waitMs": 0})
    now = stats(svc, PATH)
    assert (now["msgRateIn"], now["msgRateOut"]) == (0.0, 0.0)  # the minute is not over

    clock.now = T0 + MINUTE_MS + 1_000
    done = stats(svc, PATH)
    assert (done["msgRateIn"], done["msgThroughputIn"]) == (0.1, size / 60)
    assert (done["msgRateOut"], done["msgThroughputOut"]) == (0.1, size / 60)
    assert done["subscriptions"]["s"]["msgRateOut"] == 0.1
    assert done["averageMsgSize"] == size / 6

    clock.now = T0 + 2 * MINUTE_MS
    assert stats(svc, PATH)["msgRateIn"] == stats(svc, PATH)["msgRateOut"] == 0.0
