"""Topic statistics in the shape of Pulsar's TopicStats (a subset), from the index and cursors.

Counts are of messages, as Pulsar documents them: ``msgInCounter`` sums the index's
per-entry message counts (a batch of n counts n, a chunked message once, markers 0) and
``bytesInCounter`` the entries' bytes; ``msgBacklog`` counts the messages not yet
acknowledged (a partly acknowledged batch counts the indexes left). The cursors are read
before the index, so every entry a cursor knows of was committed when the index is read;
should it still be missing (an entry expired meanwhile), it counts by what the cursor
recorded of it. No count is ever below zero.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from magnetar_core.domain.cursor.state import FAILOVER, CursorState
from magnetar_core.domain.dispatchers import failover_active
from magnetar_core.domain.topic import TopicMeta
from magnetar_core.ports import CursorStore, LogStore
from magnetar_core.services.topics import PartitionRef, Topics
from magnetar_wire.ids import format_message_id


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Stats:
    """Computes stats; costs one paginated index query and one cursor query per partition."""

    def __init__(self, topics: Topics, log: LogStore, cursors: CursorStore) -> None:
        self._topics = topics
        self._log = log
        self._cursors = cursors

    def partition_stats(self, ref: PartitionRef) -> dict[str, Any]:
        """Stats of one log (a non-partitioned topic or one partition)."""
        cursors = self._cursors.list(ref.key)  # first: see the module's docstring
        head = self._log.head(ref.key)
        rows = self._log.range_counts(ref.key, 0, head) if head >= 0 else []
        counts = {entry_id: count for entry_id, count, _ in rows if count > 0}
        head = max(counts, default=-1)
        return {
            "msgInCounter": sum(counts.values()),
            "bytesInCounter": sum(size for _, _, size in rows),
            "entriesCount": sum(1 for _, _, size in rows if size > 0),  # markers: no bytes
            "lastMessageId": format_message_id(ref.ledger_id, head, ref.partition, -1)
            if head >= 0
            else None,
            "subscriptions": {
                c.subscription: _subscription_stats(
                    c, counts, ref.ledger_id, ref.partition, str(ref.topic)
                )
                for c in cursors
            },
        }

    def topic_stats(self, meta: TopicMeta) -> dict[str, Any]:
        """Stats of a topic; for a partitioned one, summed with ``partitions`` per partition."""
        refs = self._topics.partitions_of(meta)
        per = {str(ref.topic): self.partition_stats(ref) for ref in refs}
        if meta.partitions == 0:
            return per[str(meta.name)]
        total: dict[str, Any] = {
            "msgInCounter": 0,
            "bytesInCounter": 0,
            "entriesCount": 0,
            "subscriptions": {},
            "partitions": per,
            "metadata": {"partitions": meta.partitions},
        }
        for stats in per.values():
            total["msgInCounter"] += stats["msgInCounter"]
            total["entriesCount"] += stats["entriesCount"]
            total["bytesInCounter"] += stats["bytesInCounter"]
            for name, sub in stats["subscriptions"].items():
                into = total["subscriptions"].setdefault(
                    name,
                    {
                        "type": sub["type"],
                        "msgBacklog": 0,
                        "unackedMessages": 0,
                        "msgDelayed": 0,
                        "consumers": [],
                    },
                )
                into["msgBacklog"] += sub["msgBacklog"]
                into["unackedMessages"] += sub["unackedMessages"]
                into["msgDelayed"] += sub["msgDelayed"]
                into["consumers"].extend(sub["consumers"])
        return total


def _unacked_in(state: CursorState, entry_id: int, messages: int) -> int:
    """Messages of an entry of ``messages`` messages not acknowledged (at least 0)."""
    acked = state.batch_acks.get(entry_id, ())
    return max(0, messages - sum(1 for i in acked if 0 <= i < messages))


def _subscription_stats(
    state: CursorState, counts: dict[int, int], ledger: int, partition: int, topic: str
) -> dict[str, Any]:
    backlog = sum(
        _unacked_in(state, e, n)
        for e, n in counts.items()
        if e > state.mark_delete and e not in state.acked
    )
    consumers: list[dict[str, Any]] = []
    ks = state.key_shared
    for cid, info in sorted(state.consumers.items(), key=lambda kv: kv[1].name):
        unacked = max(0, state.unacked_messages(cid))  # by the sizes recorded at dispatch
        consumer: dict[str, Any] = {
            "consumerName": info.name,
            "consumerId": cid,
            "unackedMessages": unacked,
            "connectedSince": _iso(info.connected_ms),
        }
        if ks is not None:
            ranges = ks.selector.ranges().get(cid, [])
            consumer["keyHashRangeArrays"] = [list(r) for r in ranges]
            consumer.update(ks.draining.stats(cid))
        consumers.append(consumer)
    active = (
        failover_active(state.consumers, partition, topic) if state.sub_type == FAILOVER else None
    )
    out: dict[str, Any] = {
        "type": state.sub_type,
        "activeConsumerName": state.consumers[active].name if active else None,
        "msgBacklog": backlog,
        "unackedMessages": sum(c["unackedMessages"] for c in consumers),
        "markDeletePosition": f"{ledger}:{state.mark_delete}",
        "readPosition": f"{ledger}:{state.read_position}",
        "msgRedeliverPending": len(state.redeliver),
        "msgDelayed": state.delayed_count(),  # entries, as msgBacklog counts them
        "consumers": consumers,
    }
    if ks is not None:
        out["keySharedMode"] = ks.mode
        out["allowOutOfOrderDelivery"] = ks.draining.allow_out_of_order_delivery
    return out
