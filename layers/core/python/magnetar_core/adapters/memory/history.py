"""``MinuteHistory``: a ``MetricsHistory`` kept in memory, per topic and minute, bounded to
the last ``WINDOW_MS`` (the local stack's; tests' too).

``add(topic, name, value, at_ms)`` sums a count (``MessagesIn``, ``MessagesOut``: what the
handlers' EMF records carry) into the minute of ``at_ms``; ``sample(topic, name, value,
at_ms)`` sets a gauge (``msgBacklog``) of that minute to its latest value. Minutes older than
the window are dropped as new ones arrive, so memory is bounded by the topics seen in the
last hour. Thread-safe; time is passed in (epoch ms).
"""

from __future__ import annotations

import threading
from collections import defaultdict

from magnetar_core.ports import HISTORY_PERIOD_MS, HISTORY_WINDOW_MS, History, Point

WINDOW_MS = HISTORY_WINDOW_MS
RATES = {"MessagesIn": "msgRateIn", "MessagesOut": "msgRateOut"}
"""Counts kept -> the rate series (messages per second over the minute) they give."""
GAUGES = ("msgBacklog",)


class MinuteHistory:
    """Per-minute counts and gauges of topics (see the module's docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._minutes: dict[str, dict[str, dict[int, float]]] = defaultdict(
            lambda: defaultdict(dict)
        )
        """topic -> series name -> minute start (epoch ms) -> value."""

    def add(self, topic: str, name: str, value: float, at_ms: int) -> None:
        """Add ``value`` to count ``name`` (a key of ``RATES``; others are ignored) of
        ``topic`` in the minute of ``at_ms``."""
        if name not in RATES:
            return
        minute = at_ms - at_ms % HISTORY_PERIOD_MS
        with self._lock:
            series = self._minutes[topic][RATES[name]]
            series[minute] = series.get(minute, 0) + value
            self._trim(topic, minute)

    def sample(self, topic: str, name: str, value: float, at_ms: int) -> None:
        """Set gauge ``name`` (``msgBacklog``) of ``topic`` in the minute of ``at_ms``."""
        if name not in GAUGES:
            raise ValueError(f"not a gauge of the history: {name!r}")
        minute = at_ms - at_ms % HISTORY_PERIOD_MS
        with self._lock:
            self._minutes[topic][name][minute] = value
            self._trim(topic, minute)

    def _trim(self, topic: str, newest_minute: int) -> None:
        oldest = newest_minute - WINDOW_MS
        for series in self._minutes[topic].values():
            for minute in [m for m in series if m < oldest]:
                del series[minute]

    def history(self, topic: str, start_ms: int, end_ms: int) -> History:
        """The topic's minutes in ``[start_ms, end_ms)``: rates in messages per second
        (the minute's count / 60), the backlog as last sampled in each minute."""
        with self._lock:
            kept = {name: dict(series) for name, series in self._minutes.get(topic, {}).items()}
        series: dict[str, list[Point]] = {name: [] for name in (*RATES.values(), *GAUGES)}
        for name, minutes in kept.items():
            scale = 1000 / HISTORY_PERIOD_MS if name in RATES.values() else 1
            series[name] = [
                (minute, value * scale)
                for minute, value in sorted(minutes.items())
                if start_ms - HISTORY_PERIOD_MS < minute < end_ms
            ]
        return History(scope="topic", period_ms=HISTORY_PERIOD_MS, series=series)
