"""The local stack's metrics history: what the console's charts draw locally
(``METRICS_HISTORY=local``; on AWS CloudWatch keeps it: ``adapters.aws.history``).

``LocalHistory`` keeps a ``MinuteHistory`` (per topic and minute, the last hour) fed by the
gateway's EMF records (``record``: messages in and out, at the record's timestamp) and by a
sampler thread that reads the backlog of the recently active topics once a minute
(``sample_every_s``) through ``backlog_of`` (the stats use case, as ``GET /metrics``).
``start`` makes it the process's ``current()`` one, which the console's handler asks for
(``magnetar_core.engine.metrics_history``); ``stop`` ends the sampler and forgets it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from magnetar_core.adapters.memory.history import RATES, MinuteHistory

log = logging.getLogger("magnetar_local.history")
_current: list[LocalHistory] = []
_lock = threading.Lock()


def current() -> MinuteHistory:
    """The history of the most recently started local stack of this process; raises
    LookupError when none runs."""
    with _lock:
        if not _current:
            raise LookupError("no local stack keeps a metrics history in this process")
        return _current[-1].minutes


class LocalHistory:
    """A ``MinuteHistory`` fed by EMF records and a backlog sampler (module docstring).
    ``topics()`` lists the topics to sample; ``backlog_of(topic)`` returns its stats
    (Pulsar's TopicStats). ``now_ms`` is the sampler's clock (epoch ms)."""

    def __init__(
        self,
        topics: Callable[[], list[str]],
        backlog_of: Callable[[str], Mapping[str, Any]],
        sample_every_s: float = 60.0,
        now_ms: Callable[[], int] = lambda: int(time.time() * 1000),
    ) -> None:
        self.minutes = MinuteHistory()
        self._topics = topics
        self._backlog_of = backlog_of
        self._every_s = sample_every_s
        self._now_ms = now_ms
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def record(self, emf: Mapping[str, Any]) -> None:
        """Add an EMF record's ``MessagesIn`` / ``MessagesOut`` to its topic's minute (a
        record naming no topic, or not ours, adds nothing; never raises)."""
        try:
            topic = emf.get("topic")
            if not isinstance(topic, str) or "://" not in topic:
                return
            at_ms = int(emf["_aws"]["Timestamp"])
            for name in RATES:
                value = emf.get(name)
                if value:
                    self.minutes.add(topic, name, float(sum(value) if isinstance(value, list) else value), at_ms)  # fmt: skip
        except (KeyError, TypeError, ValueError):
            log.debug("not an EMF record of ours: %.200s", emf)

    def sample(self) -> None:
        """Read the backlog of every recent topic now (a topic that fails is left out)."""
        at_ms = self._now_ms()
        for topic in self._topics():
            try:
                stats = self._backlog_of(topic)
            except Exception as exc:  # a topic deleted meanwhile, a fault: no sample
                log.debug("no backlog sample of %s: %s", topic, exc)
                continue
            subscriptions = stats.get("subscriptions") or {}
            backlog = sum(int(s.get("msgBacklog", 0)) for s in subscriptions.values())
            self.minutes.sample(topic, "msgBacklog", backlog, at_ms)

    def start(self) -> LocalHistory:
        """Sample every ``sample_every_s`` in a daemon thread; become ``current()``."""
        self._thread = threading.Thread(target=self._run, name="local-history", daemon=True)
        self._thread.start()
        with _lock:
            _current.append(self)
        return self

    def stop(self) -> None:
        """End the sampler (within one sample) and stop being ``current()`` (idempotent)."""
        self._stop.set()
        with _lock:
            if self in _current:
                _current.remove(self)
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.wait(self._every_s):
            try:
                self.sample()
            except Exception:  # the sampler never dies of one bad round
                log.exception("the backlog sample failed")
