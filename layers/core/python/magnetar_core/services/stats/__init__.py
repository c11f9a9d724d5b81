"""Topic statistics in the shape of Pulsar's TopicStats (a subset), from the index, the
cursors, the ledger's expired totals and its compaction state.

Counts are of messages, as Pulsar documents them: ``msgInCounter`` sums the per-entry
message counts (a batch of n counts n, a chunked message once, markers 0) and
``bytesInCounter`` the entries' bytes, each cumulative across expiry: the index counts the
entries above the expired totals' ``through``, the totals (``$expired``, folded by the
expire job before it deletes items: ``services.expired_totals``) those at or below it.
``msgOutCounter``/``bytesOutCounter`` are the subscriptions' (``OutCounters``, kept in each
cursor: a deleted subscription's counts go with it). ``storageSize`` is the bytes of the
items still stored, ``backlogSize`` those after the slowest durable cursor's mark-delete
(Pulsar's estimated backlog size). Rates are per second over the last completed minute:
in, from the entries' publish times (the producers' clocks); out, from the cursors'
counters.

The cursors are read before the index, so every entry a cursor knows of was committed when
the index is read; should it still be missing (an entry expired meanwhile), it counts by
what the cursor recorded of it. The totals are read after the index: an expire run between
the two reads moves ``through`` over items the index still listed, never the reverse, so
nothing is counted twice or missed. No count is ever below zero.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from magnetar_core.domain.compaction import ERROR, SUCCESS, CompactionState
from magnetar_core.domain.counters import EntryCounts, last_window, per_second
from magnetar_core.domain.cursor.grants import fold_grants, hashes_loader
from magnetar_core.domain.topic import TopicMeta
from magnetar_core.ports import CompactionStore, CursorStore, LogStore, ProducerStateStore
from magnetar_core.services.stats.subscription import subscription_stats
from magnetar_core.services.stats.sums import partitioned
from magnetar_core.services.topics import PartitionRef, Topics
from magnetar_wire.ids import format_message_id


class Stats:
    """Computes stats; costs, per partition, one cursor query, one paginated index query,
    and two item reads (expired totals, compaction state). ``now_ms``: the clock of rates."""

    def __init__(
        self,
        topics: Topics,
        log: LogStore,
        cursors: CursorStore,
        producers: ProducerStateStore,
        compaction: CompactionStore,
        now_ms: Callable[[], int],
    ) -> None:
        self._topics = topics
        self._log = log
        self._cursors = cursors
        self._producers = producers
        self._compaction = compaction
        self._now_ms = now_ms

    def partition_stats(self, ref: PartitionRef) -> dict[str, Any]:
        """Stats of one log (a non-partitioned topic or one partition)."""
        cursors = self._cursors.list(ref.key)  # first: see the module's docstring
        for cursor in cursors:  # acks still on consumers' grant items count as done
            grant_of = partial(self._cursors.grant, ref.key, cursor.subscription)
            fold_grants(
                cursor, grant_of, hashes_loader(lambda ids: self._log.get_many(ref.key, ids))
            )
        head = self._log.head(ref.key)
        stored = self._log.range_counts(ref.key, 0, head) if head >= 0 else []
        expired = self._producers.expired_totals(ref.key)  # after the index: see above
        rows = [r for r in stored if r.entry_id > expired.through]
        messages = [r for r in rows if r.messages > 0]
        now = self._now_ms()
        subs = {
            c.subscription: subscription_stats(
                c, messages, ref.ledger_id, ref.partition, str(ref.topic), now
            )
            for c in cursors
        }
        last = max((r.entry_id for r in messages), default=-1)
        rate_in, throughput_in = _rates_in(rows, now)
        durable = [c.mark_delete for c in cursors if c.durable]
        slowest = min(durable) if durable else None
        earliest = [s["earliestMsgPublishTimeInBacklog"] for s in subs.values()]
        return {
            "msgRateIn": rate_in,
            "msgThroughputIn": throughput_in,
            "msgRateOut": sum(s["msgRateOut"] for s in subs.values()),
            "msgThroughputOut": sum(s["msgThroughputOut"] for s in subs.values()),
            "averageMsgSize": throughput_in / rate_in if rate_in else 0.0,
            "msgInCounter": expired.messages + sum(r.messages for r in rows),
            "bytesInCounter": expired.size_bytes + sum(r.size_bytes for r in rows),
            "msgOutCounter": sum(s["msgOutCounter"] for s in subs.values()),
            "bytesOutCounter": sum(s["bytesOutCounter"] for s in subs.values()),
            "entriesCount": sum(1 for r in stored if r.size_bytes > 0),  # markers: no bytes
            "storageSize": sum(r.size_bytes for r in stored),
            "backlogSize": sum(r.size_bytes for r in stored if r.entry_id > slowest)
            if slowest is not None
            else 0,
            "earliestMsgPublishTimeInBacklogs": min((t for t in earliest if t), default=0),
            "lastMessageId": format_message_id(ref.ledger_id, last, ref.partition, -1)
            if last >= 0
            else None,
            "compaction": _compaction(self._compaction.get(ref.key), ref.ledger_id),
            "subscriptions": subs,
        }

    def topic_stats(self, meta: TopicMeta) -> dict[str, Any]:
        """Stats of a topic; for a partitioned one, summed with ``partitions`` per partition."""
        refs = self._topics.partitions_of(meta)
        per = {str(ref.topic): self.partition_stats(ref) for ref in refs}
        if meta.partitions == 0:
            return per[str(meta.name)]
        return partitioned(per, meta.partitions)


def _rates_in(rows: list[EntryCounts], now_ms: int) -> tuple[float, float]:
    """``(messages/s, bytes/s)`` published in the last completed minute, by the entries'
    earliest publish times."""
    start, end = last_window(now_ms)
    recent = [r for r in rows if start <= r.publish_ms < end]
    return per_second(sum(r.messages for r in recent)), per_second(
        sum(r.size_bytes for r in recent)
    )


def _compaction(state: CompactionState, ledger: int) -> dict[str, Any]:
    """Pulsar's CompactionStats of the last run the compaction state remembers (a run under
    way forgets the times of the one before), and ``horizon``: the last entry the compacted
    view covers (None: never compacted). Removed events are not recorded: 0."""
    done = state.finished_ms > 0
    return {
        "lastCompactionRemovedEventCount": 0,
        "lastCompactionSucceedTimestamp": state.finished_ms if state.status == SUCCESS else 0,
        "lastCompactionFailedTimestamp": state.finished_ms if state.status == ERROR else 0,
        "lastCompactionDurationTimeInMills": state.finished_ms - state.started_ms if done else 0,
        "horizon": f"{ledger}:{state.horizon}" if state.horizon >= 0 else None,
    }
