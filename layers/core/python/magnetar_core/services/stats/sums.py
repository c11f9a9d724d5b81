"""Pulsar's PartitionedTopicStats: the partitions' stats added up (counters, sizes, rates
and backlogs summed; earliest publish times the earliest non-zero one; compaction times the
latest), subscriptions merged by name, consumers listed together."""

from __future__ import annotations

from typing import Any

TOPIC_SUMS = (
    "msgRateIn", "msgThroughputIn", "msgRateOut", "msgThroughputOut",
    "msgInCounter", "bytesInCounter", "msgOutCounter", "bytesOutCounter",
    "entriesCount", "storageSize", "backlogSize",
)  # fmt: skip
SUBSCRIPTION_SUMS = (
    "msgBacklog", "msgBacklogNoDelayed", "backlogSize", "unackedMessages", "msgDelayed",
    "msgOutCounter", "bytesOutCounter", "msgRateOut", "msgThroughputOut",
    "msgRedeliverPending",
)  # fmt: skip


def _earliest(a: int, b: int) -> int:
    """The earlier of two publish times, 0 meaning none."""
    return min(a, b) if a and b else a or b


def add_compaction(into: dict[str, Any], stats: dict[str, Any]) -> None:
    """Add one partition's compaction stats: removed events summed, times the latest."""
    into["lastCompactionRemovedEventCount"] += stats["lastCompactionRemovedEventCount"]
    for name in (
        "lastCompactionSucceedTimestamp",
        "lastCompactionFailedTimestamp",
        "lastCompactionDurationTimeInMills",
    ):
        into[name] = max(into[name], stats[name])


def partitioned(per: dict[str, dict[str, Any]], partitions: int) -> dict[str, Any]:
    """The sum of the partitions' stats ``per`` (by partition topic name), with ``per``
    under ``partitions`` and ``metadata.partitions``."""
    total: dict[str, Any] = dict.fromkeys(TOPIC_SUMS, 0)
    total.update(
        averageMsgSize=0.0,
        earliestMsgPublishTimeInBacklogs=0,
        compaction={
            "lastCompactionRemovedEventCount": 0,
            "lastCompactionSucceedTimestamp": 0,
            "lastCompactionFailedTimestamp": 0,
            "lastCompactionDurationTimeInMills": 0,
        },
        subscriptions={},
        partitions=per,
        metadata={"partitions": partitions},
    )
    for stats in per.values():
        for name in TOPIC_SUMS:
            total[name] += stats[name]
        total["earliestMsgPublishTimeInBacklogs"] = _earliest(
            total["earliestMsgPublishTimeInBacklogs"], stats["earliestMsgPublishTimeInBacklogs"]
        )
        add_compaction(total["compaction"], stats["compaction"])
        for name, sub in stats["subscriptions"].items():
            into = total["subscriptions"].setdefault(
                name,
                {
                    "type": sub["type"],
                    "isDurable": sub["isDurable"],
                    **dict.fromkeys(SUBSCRIPTION_SUMS, 0),
                    "earliestMsgPublishTimeInBacklog": 0,
                    "consumers": [],
                },
            )
            for field in SUBSCRIPTION_SUMS:
                into[field] += sub[field]
            into["earliestMsgPublishTimeInBacklog"] = _earliest(
                into["earliestMsgPublishTimeInBacklog"], sub["earliestMsgPublishTimeInBacklog"]
            )
            into["consumers"].extend(sub["consumers"])
    if total["msgRateIn"]:
        total["averageMsgSize"] = total["msgThroughputIn"] / total["msgRateIn"]
    return total
