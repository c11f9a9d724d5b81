"""The local stack's metrics: the handlers' EMF records collected in process and served as
Prometheus text at ``GET /metrics``.

The gateway runs every handler inside ``magnetar_core.api.metrics.emitting(registry.record)``,
so each invocation's EMF record (the very dict Lambda would print for CloudWatch) lands in
``MetricsRegistry.record`` instead of stdout. ``render`` turns the totals into Prometheus'
text format (version 0.0.4) with Pulsar's names where Pulsar has one:

======================================  =================================================
``pulsar_in_messages_total``            messages committed by producers, per topic
``pulsar_in_bytes_total``               their bytes (entries as stored), per topic
``pulsar_out_messages_total``           messages dispatched to consumers, per topic
``pulsar_out_bytes_total``              their bytes, per topic
``pulsar_msg_backlog``                  messages not acknowledged, per topic (on scrape)
``pulsar_subscription_back_log``        the same per subscription (on scrape)
``pulsar_storage_size``                 bytes stored, per topic (on scrape)
``pulsar_storage_backlog_size``         bytes after the slowest cursor, per topic (on scrape)
``magnetar_requests_total``             requests by ``route`` and ``status``
``magnetar_request_duration_ms``        histogram of the handlers' latency by ``route``
``magnetar_acks_total`` ...             acks, nacks, dead letter moves, timer starts, per
                                        topic and subscription
======================================  =================================================

Topic labels are Pulsar's: ``namespace="tenant/ns"``, ``topic="persistent://tenant/ns/t"``
(the topic the request named: a partitioned topic's base name). Backlog and storage come
from ``backlog_of`` (the stats use case) *on scrape*, for the ``MAX_SCRAPED_TOPICS`` topics
most recently produced to or consumed from: each costs one stats call's AWS requests.
"""

from __future__ import annotations

import bisect
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

log = logging.getLogger("magnetar_local.metrics")

METRICS_PATH = "/metrics"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
MAX_SCRAPED_TOPICS = 20
"""Topics whose backlog a scrape reads (the most recently active): bounds a scrape's cost."""
LATENCY_BUCKETS_MS = (1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000)

TOPIC_COUNTERS = {
    "MessagesIn": ("pulsar_in_messages_total", "Messages committed by producers"),
    "BytesIn": ("pulsar_in_bytes_total", "Bytes of the entries committed"),
    "MessagesOut": ("pulsar_out_messages_total", "Messages dispatched to consumers"),
    "BytesOut": ("pulsar_out_bytes_total", "Bytes of the entries dispatched"),
    "Acks": ("magnetar_acks_total", "Acknowledged positions"),
    "Nacks": ("magnetar_nacks_total", "Entries sent back for redelivery"),
    "DeadLetterMoves": ("magnetar_dead_letter_moves_total", "Entries moved to dead letter topics"),
    "TimerStarts": ("magnetar_timer_starts_total", "Delay timer executions started"),
}
"""EMF metric -> (Prometheus counter, help), labelled by topic (and subscription, when the
request named one)."""
BACKLOG_GAUGES = {
    "pulsar_msg_backlog": "Messages not acknowledged, summed over subscriptions",
    "pulsar_storage_size": "Bytes stored",
    "pulsar_storage_backlog_size": "Bytes after the slowest durable cursor",
    "pulsar_subscription_back_log": "Messages not acknowledged by the subscription",
}

Labels = tuple[tuple[str, str], ...]
BacklogOf = Callable[[str], Mapping[str, Any]]
"""A topic's stats (Pulsar's TopicStats: ``storageSize``, ``backlogSize``, ``subscriptions``
with ``msgBacklog``); raises for a topic that is gone."""


class MetricsRegistry:
    """Totals of the EMF records seen since start (thread-safe). ``backlog_of`` (None: no
    backlog gauges) reads a topic's stats on scrape."""

    def __init__(self, backlog_of: BacklogOf | None = None) -> None:
        self.backlog_of = backlog_of
        self._lock = threading.Lock()
        self._counters: dict[str, dict[Labels, float]] = {}
        self._latency: dict[str, tuple[list[int], list[float]]] = {}
        """route -> (count per bucket, +Inf last; [sum, count])."""
        self._topics: OrderedDict[str, None] = OrderedDict()
        """Topics produced to or consumed from, most recent last."""
        self.listeners: list[Callable[[Mapping[str, Any]], None]] = []
        """Also given every record (the console's history); must not raise nor block."""

    def record(self, emf: Mapping[str, Any]) -> None:
        """Add one EMF record (``magnetar_core.api.metrics``); a malformed one is logged.
        Each of ``listeners`` is given the record too."""
        for listener in list(self.listeners):
            listener(emf)
        try:
            values = _metric_values(emf)
        except (KeyError, TypeError, ValueError):
            log.warning("not an EMF record of ours: %.200s", emf)
            return
        route = str(emf.get("route", ""))
        topic = emf.get("topic")
        topic_labels: Labels = ()
        if isinstance(topic, str) and "://" in topic:
            namespace = topic.split("://", 1)[1].rsplit("/", 1)[0]
            topic_labels = (("namespace", namespace), ("topic", topic))
        subscription = emf.get("subscription")
        sub_labels = topic_labels + ((("subscription", str(subscription)),) if subscription else ())
        with self._lock:
            if "Requests" in values:
                status = str(emf.get("status", ""))
                self._add("magnetar_requests_total", (("route", route), ("status", status)),
                          values["Requests"])  # fmt: skip
            if "Latency" in values:
                self._observe(route, values["Latency"])
            for name, (counter, _help) in TOPIC_COUNTERS.items():
                if values.get(name) and topic_labels:
                    per_topic = name in ("MessagesIn", "BytesIn", "MessagesOut", "BytesOut")
                    self._add(counter, topic_labels if per_topic else sub_labels, values[name])
            if topic_labels and any(values.get(n) for n in ("MessagesIn", "MessagesOut")):
                self._topics.pop(topic_labels[1][1], None)
                self._topics[topic_labels[1][1]] = None
                while len(self._topics) > MAX_SCRAPED_TOPICS:
                    self._topics.popitem(last=False)

    def _add(self, name: str, labels: Labels, value: float) -> None:
        series = self._counters.setdefault(name, {})
        series[labels] = series.get(labels, 0) + value

    def _observe(self, route: str, latency_ms: float) -> None:
        buckets, totals = self._latency.setdefault(
            route, ([0] * (len(LATENCY_BUCKETS_MS) + 1), [0.0, 0.0])
        )
        buckets[bisect.bisect_left(LATENCY_BUCKETS_MS, latency_ms)] += 1
        totals[0] += latency_ms
        totals[1] += 1

    def recent_topics(self) -> list[str]:
        """The topics most recently produced to or consumed from (at most
        ``MAX_SCRAPED_TOPICS``), least recent first."""
        with self._lock:
            return list(self._topics)

    def value(self, name: str, **labels: str) -> float:
        """The total of counter ``name`` with exactly these labels (0 when never seen)."""
        with self._lock:
            return self._counters.get(name, {}).get(tuple(labels.items()), 0)

    def render(self) -> str:
        """Everything in Prometheus' text format, the backlog of recent topics read now."""
        with self._lock:
            counters = {name: dict(series) for name, series in self._counters.items()}
            latency = {route: (list(b), list(t)) for route, (b, t) in self._latency.items()}
            topics = list(self._topics)
        lines: list[str] = []
        helps = {counter: text for counter, text in TOPIC_COUNTERS.values()}
        helps["magnetar_requests_total"] = "Requests by route and status"
        for name in sorted(counters):
            lines += [f"# HELP {name} {helps.get(name, name)}", f"# TYPE {name} counter"]
            lines += [f"{name}{_labels(k)} {_number(v)}" for k, v in sorted(counters[name].items())]
        if latency:
            lines += _histogram("magnetar_request_duration_ms", latency)
        lines += self._backlog(topics)
        return "\n".join(lines) + "\n"

    def _backlog(self, topics: list[str]) -> list[str]:
        if self.backlog_of is None or not topics:
            return []
        series: dict[str, list[str]] = {name: [] for name in BACKLOG_GAUGES}
        for topic in topics:
            try:
                stats = self.backlog_of(topic)
            except Exception as exc:  # a topic deleted meanwhile, a fault: left out
                log.debug("no backlog of %s on scrape: %s", topic, exc)
                continue
            labels = (("namespace", topic.split("://", 1)[1].rsplit("/", 1)[0]), ("topic", topic))
            subs = stats.get("subscriptions") or {}
            backlog = sum(int(s.get("msgBacklog", 0)) for s in subs.values())
            series["pulsar_msg_backlog"].append(f"pulsar_msg_backlog{_labels(labels)} {backlog}")
            for gauge, field in (("pulsar_storage_size", "storageSize"),
                                 ("pulsar_storage_backlog_size", "backlogSize")):  # fmt: skip
                value = int(stats.get(field, 0))
                series[gauge].append(f"{gauge}{_labels(labels)} {value}")
            for sub, sub_stats in sorted(subs.items()):
                sub_labels = labels + (("subscription", sub),)
                value = int(sub_stats.get("msgBacklog", 0))
                series["pulsar_subscription_back_log"].append(
                    f"pulsar_subscription_back_log{_labels(sub_labels)} {value}"
                )
        lines: list[str] = []
        for name, rows in series.items():
            if rows:
                lines += [f"# HELP {name} {BACKLOG_GAUGES[name]}", f"# TYPE {name} gauge", *rows]
        return lines


def _metric_values(emf: Mapping[str, Any]) -> dict[str, float]:
    """``{metric name: value}`` of an EMF record (a list of values is summed)."""
    out: dict[str, float] = {}
    for directive in emf["_aws"]["CloudWatchMetrics"]:
        for metric in directive["Metrics"]:
            raw = emf[metric["Name"]]
            out[metric["Name"]] = float(sum(raw) if isinstance(raw, list) else raw)
    return out


def _histogram(name: str, latency: dict[str, tuple[list[int], list[float]]]) -> list[str]:
    lines = [f"# HELP {name} Handler latency in milliseconds", f"# TYPE {name} histogram"]
    for route, (buckets, (total, count)) in sorted(latency.items()):
        running = 0
        bounds = [*map(str, LATENCY_BUCKETS_MS), "+Inf"]
        for bound, hits in zip(bounds, buckets, strict=True):
            running += hits
            lines.append(f"{name}_bucket{_labels((('route', route), ('le', bound)))} {running}")
        lines.append(f"{name}_sum{_labels((('route', route),))} {_number(total)}")
        lines.append(f"{name}_count{_labels((('route', route),))} {_number(count)}")
    return lines


def _labels(labels: Labels) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in labels) + "}"


def _escape(value: str) -> str:
    """A label value as Prometheus' text format quotes it (backslash, quote, newline)."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def engine_backlog(new_engine: Callable[[], Any]) -> BacklogOf:
    """``BacklogOf`` on the stats use case (``admin.stats``) of an engine made by
    ``new_engine`` on the first scrape (one of its own: scrapes run on the gateway's
    threads): a partitioned topic's summed stats, else the topic's own."""
    from magnetar_core.domain.errors import TopicNotFound
    from magnetar_wire.names import TopicName

    engines: list[Any] = []
    lock = threading.Lock()

    def backlog_of(topic: str) -> Mapping[str, Any]:
        with lock:
            if not engines:
                engines.append(new_engine())
            engine = engines[0]
            name = TopicName.parse(topic)
            try:
                return engine.admin.stats(name, partitioned=False)
            except TopicNotFound:
                return engine.admin.stats(name, partitioned=True)

    return backlog_of
