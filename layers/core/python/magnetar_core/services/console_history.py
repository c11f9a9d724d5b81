"""The console's charts: a topic's rates and backlog over the last hour.

The past comes from the ``MetricsHistory`` port (CloudWatch on AWS, the local stack's
in-memory minutes locally); the backlog of *now* is read from the topic's stats and added
as the last point, so the backlog chart ends at the truth even where the source keeps no
backlog (CloudWatch: see ``adapters.aws.history``). The topic must exist (TopicNotFound).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from magnetar_core.ports import HISTORY_WINDOW_MS, MetricsHistory
from magnetar_wire.names import TopicName

StatsOf = Callable[[TopicName], Mapping[str, Any]]
"""A topic's Pulsar TopicStats (summed over partitions for a partitioned topic); raises
TopicNotFound."""


class ConsoleHistory:
    """``history(topic)``: the JSON body of ``GET /console/api/history/...``."""

    def __init__(
        self, source: Callable[[], MetricsHistory], stats_of: StatsOf, now_ms: Callable[[], int]
    ) -> None:
        self._source = source
        self._stats_of = stats_of
        self._now_ms = now_ms

    def history(self, topic: TopicName) -> dict[str, Any]:
        """``{"topic", "scope", "periodMs", "startMs", "endMs", "series": {name: [[ms,
        value], ...]}}`` over the last hour: ``msgRateIn`` / ``msgRateOut`` in messages per
        second, ``msgBacklog`` in messages ending with now's. Raises TopicNotFound,
        StorageFault, TooManyRequests."""
        stats = self._stats_of(topic)
        now_ms = self._now_ms()
        start_ms = now_ms - HISTORY_WINDOW_MS
        past = self._source().history(str(topic), start_ms, now_ms + 1)
        series = {
            name: [[at, value] for at, value in points] for name, points in past.series.items()
        }
        subscriptions = stats.get("subscriptions") or {}
        backlog = sum(int(s.get("msgBacklog", 0)) for s in subscriptions.values())
        series.setdefault("msgBacklog", []).append([now_ms, backlog])
        return {
            "topic": str(topic),
            "scope": past.scope,
            "periodMs": past.period_ms,
            "startMs": start_ms,
            "endMs": now_ms,
            "series": series,
        }
