"""Partitioned stats (issue 14, "Stats that are right") on the memory service with a fake
clock and hand-computed expectations: the partitions' counters, sizes and backlogs summed,
the earliest publish time in any backlog, each partition under ``partitions`` unless
``perPartition=false``; and the compaction horizon and times in ``compaction``."""

from __future__ import annotations

import pytest
from edge_http import assert_error, call
from stats_support import Clock, b64, consumer_call, produce, stats, subscribe

from magnetar_core.domain.compaction import SUCCESS, CompactionState
from magnetar_core.domain.runtime import Runtime
from magnetar_local.memory_service import MemoryService

BASE = "persistent/public/default/parts"
P0, P1 = f"{BASE}-partition-0", f"{BASE}-partition-1"
T0 = 1_800_000_000_000


@pytest.fixture
def clock() -> Clock:
    return Clock(T0)


@pytest.fixture
def svc(clock):
    with MemoryService(runtime=Runtime(now_ms=clock)) as service:
        yield service


def sizes_of(svc, path: str) -> list[int]:
    return [r.size_bytes for r in svc.stores.log.range_counts(svc.key_of(path), 0, 100)]


def test_partitioned_stats_sum_the_partitions_and_keep_the_earliest_backlog(svc, clock):
    svc.create_partitioned_topic(BASE, 2)
    c0, c1 = subscribe(svc, P0, "s"), subscribe(svc, P1, "s")
    clock.now = T0 + 1_000
    produce(svc, P1, b64("x"))  # p1 entry 0, acknowledged below
    clock.now = T0 + 2_000
    batch = produce(svc, P0, b64("a"), b64("b"), b64("c"))  # p0 entry 0: a batch of 3
    clock.now = T0 + 3_000
    produce(svc, P1, b64("y"))  # p1 entry 1
    (b0,), (x, y) = sizes_of(svc, P0), sizes_of(svc, P1)
    consumer_call(svc, P0, "s", c0, "receive", {"maxMessages": 10, "waitMs": 0})
    consumer_call(svc, P0, "s", c0, "ack", {"messageIds": batch[:1]})
    got = consumer_call(svc, P1, "s", c1, "receive", {"maxMessages": 1, "waitMs": 0})
    consumer_call(svc, P1, "s", c1, "ack", {"messageIds": [got["messages"][0]["messageId"]]})

    total = stats(svc, BASE, "partitioned-stats")

    assert (total["msgInCounter"], total["bytesInCounter"]) == (5, b0 + x + y)
    # p1's receive of one message took a grant of both its entries (a receiver queue's
    # worth, as Pulsar's dispatcher sends them): both count as sent
    assert (total["msgOutCounter"], total["bytesOutCounter"]) == (5, b0 + x + y)
    assert (total["storageSize"], total["backlogSize"]) == (b0 + x + y, b0 + y)
    assert total["earliestMsgPublishTimeInBacklogs"] == T0 + 2_000  # p0's batch
    sub = total["subscriptions"]["s"]
    assert (sub["msgBacklog"], sub["msgBacklogNoDelayed"], sub["backlogSize"]) == (3, 3, b0 + y)
    assert (sub["unackedMessages"], sub["msgOutCounter"]) == (3, 5)  # y: in p1's grant
    assert sub["earliestMsgPublishTimeInBacklog"] == T0 + 2_000
    assert set(total["partitions"]) == {
        f"persistent://public/default/parts-partition-{i}" for i in (0, 1)
    }
    one = total["partitions"]["persistent://public/default/parts-partition-1"]
    assert (one["msgInCounter"], one["backlogSize"], one["earliestMsgPublishTimeInBacklogs"]) == (
        2, y, T0 + 3_000,
    )  # fmt: skip
    assert total["metadata"] == {"partitions": 2}


def test_per_partition_false_leaves_the_partitions_out_and_other_values_are_refused(svc):
    svc.create_partitioned_topic(BASE, 2)
    produce(svc, P0, b64("a"))
    url = f"{svc.url}/admin/v2/{BASE}/partitioned-stats"
    status, summed, _ = call(f"{url}?perPartition=false", method="GET")
    assert status == 200, summed
    assert "partitions" not in summed and summed["msgInCounter"] == 1
    assert "partitions" in stats(svc, BASE, "partitioned-stats")  # Pulsar's default: true
    assert_error(
        call(f"{url}?perPartition=yes", method="GET"), 400, "InvalidMessage", "perPartition"
    )


def test_compaction_stats_show_the_horizon_and_the_last_runs_times(svc):
    svc.create_partitioned_topic(BASE, 2)
    produce(svc, P0, b64("a"))
    produce(svc, P0, b64("b"))
    key = svc.key_of(P0)
    ledger = int(key.rpartition("|")[2])
    state = CompactionState(status=SUCCESS, horizon=1, started_ms=T0 - 900, finished_ms=T0 - 400)
    svc.stores.compaction.put(key, state)

    compacted = stats(svc, P0)["compaction"]
    assert compacted == {
        "lastCompactionRemovedEventCount": 0,
        "lastCompactionSucceedTimestamp": T0 - 400,
        "lastCompactionFailedTimestamp": 0,
        "lastCompactionDurationTimeInMills": 500,
        "horizon": f"{ledger}:1",
    }
    assert stats(svc, P1)["compaction"]["horizon"] is None  # never compacted
    summed = stats(svc, BASE, "partitioned-stats")["compaction"]
    assert (summed["lastCompactionSucceedTimestamp"], summed["lastCompactionDurationTimeInMills"]) == (
        T0 - 400, 500,
    )  # fmt: skip
