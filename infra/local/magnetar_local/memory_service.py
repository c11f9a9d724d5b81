"""``MemoryService``: the real engine on in-memory adapters behind the real HTTP handlers.

The service the SDK's tests talk to, in-process and without the emulator: the handlers of
``functions/*/app.py`` (the template's routes, payload 2.0 events, one container per
concurrent request, as the local gateway runs them) on engines assembled from
``memory_stores()`` and an in-memory ``TimerStarter``, shared by every container as DynamoDB
and S3 are. Presigned entry URLs are served here too (``/_objects/<key>``). For tests it
records every request (``recorded``, ``wait_for``) and can answer one with an injected
error (``fail_next``) or stall it (``delay``)::

    with MemoryService() as svc:
        client = magnetar.Client(svc.url)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from magnetar_core.adapters.memory import (
    CursorStore,
    EntryStore,
    MemoryTables,
    TimerStarter,
    memory_stores,
)
from magnetar_core.adapters.memory.commit_signal import CommitSignal
from magnetar_core.domain.errors import StorageFault
from magnetar_core.domain.runtime import LedgerIds, Runtime, numbered_ledgers
from magnetar_core.engine import Engine
from magnetar_core.ports import MetricsHistory
from magnetar_core.settings import Settings
from magnetar_local.events import HttpRequest, HttpResponse, json_response
from magnetar_local.history import LocalHistory
from magnetar_local.memory_gateway import MemoryGateway
from magnetar_local.metrics import engine_backlog
from magnetar_local.recorded import OBJECTS_PATH, Recorded, RequestRecorder
from magnetar_local.template import DEFAULT_TEMPLATE, LocalTemplate
from magnetar_local.tenancy import ensure_namespaces
from magnetar_wire.names import TopicName

__all__ = ["MemoryService", "Recorded", "memory_settings", "sdk_threads"]


def memory_settings(**changes: Any) -> Settings:
    """Settings of an in-memory service: no tables or bucket to name, policies never cached,
    long polls that look at the stores every 10 ms, webhooks to local servers allowed (as
    the local stack); ``changes`` override any field."""
    base = Settings(
        topics_table="memory-topics",
        log_table="memory-log",
        cursors_table="memory-cursors",
        entries_bucket="memory-entries",
        receive_check_interval_ms=10,
        policy_cache_ms=0,
        trigger_private_webhooks=True,
    )
    return replace(base, **changes)


def sdk_threads() -> list[threading.Thread]:
    """Live threads the SDK started (every SDK thread is named ``magnetar-...``): after
    ``close()`` / ``shutdown()`` this must be empty, whatever else runs in the process."""
    return [t for t in threading.enumerate() if t.name.startswith("magnetar-")]


class _Clock:
    """The runtime's clock and sleep, with a stop: once stopped, sleeps return at once and
    the monotonic clock jumps far ahead, so server-side long polls end with the service."""

    def __init__(self) -> None:
        self.stopped = threading.Event()

    def sleep_ms(self, ms: float) -> None:
        self.stopped.wait(max(ms, 0) / 1000)

    def monotonic_ms(self) -> float:
        return time.monotonic() * 1000 + (1e12 if self.stopped.is_set() else 0)


class MemoryService(RequestRecorder):
    """The service on ``127.0.0.1`` (a free port); ``url`` after ``start``; every request
    recorded for tests (``RequestRecorder``: ``recorded``, ``wait_for``, ``fail_next``...).

    ``settings`` default to ``memory_settings()``; ``runtime`` is the engines' runtime (its
    sleeps and monotonic clock are made stoppable). ``engine`` is one more engine on the
    same stores, for tests that arrange state directly (like another Lambda container).
    """

    def __init__(
        self,
        settings: Settings | None = None,
        runtime: Runtime | None = None,
        template: Path | str = DEFAULT_TEMPLATE,
    ) -> None:
        self.settings = settings or memory_settings()
        self._clock = _Clock()
        runtime = runtime or Runtime()
        self.runtime = replace(
            runtime,
            sleep_ms=self._clock.sleep_ms,
            monotonic_ms=self._clock.monotonic_ms,
            # ledgers numbered 1, 2, ... per topic, so tests can name ids (unless a test
            # passes its own source): the service's epoch-ms ones are tested on their own
            new_ledger_id=numbered_ledgers
            if isinstance(runtime.new_ledger_id, LedgerIds)
            else runtime.new_ledger_id,
        )
        self.tables = MemoryTables()
        self.stores = memory_stores(self.tables, now_ms=self.runtime.now_ms)
        # The bundle is typed by the ports; two of its memory adapters are driven directly
        # here (the timers release through the cursor store, objects are served by URL).
        cursors, entries = self.stores.cursors, self.stores.entries
        assert isinstance(cursors, CursorStore) and isinstance(entries, EntryStore)
        self._entries = entries
        super().__init__(read_object=self.stores.entries.get)
        self.timers = TimerStarter(cursors, self.runtime.now_ms)
        self.signal = CommitSignal()  # a commit in one container wakes the others' long-polls
        self.gateway = MemoryGateway(self, _template(template))
        metrics = self.gateway.metrics
        metrics.backlog_of = engine_backlog(self.new_engine)
        # the console's charts: the gateway's EMF records (no backlog sampler thread: the
        # console ends the backlog series with the stats of now)
        self.history = LocalHistory(metrics.recent_topics, metrics.backlog_of)
        metrics.listeners.append(self.history.record)
        self._engine: Engine | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> MemoryService:
        """Initialize the cluster (``public``, ``public/default``), bind, serve in a daemon
        thread and run the timers. Returns self."""
        self.engine.tenants.initialize_cluster()
        self.gateway.start()
        self._entries.base_url = self.url + OBJECTS_PATH
        self.timers.run(poll_ms=20)
        return self

    def stop(self) -> None:
        """Stop serving; server-side waits (long polls) end at once (idempotent)."""
        self._clock.stopped.set()
        self.signal.close()
        self.wake_waiters()
        self.timers.stop()
        self.gateway.stop()

    def __enter__(self) -> MemoryService:
        return self.start() if self.gateway.server is None else self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:41234``."""
        return self.gateway.url

    # ------------------------------------------------------------------ the engine

    def new_engine(self) -> Engine:
        """An engine on the service's stores, timers and commit signal (one per handler
        container)."""
        return Engine.assemble(
            self.settings, self.stores, self.runtime, self.timers, signal=self.signal
        )

    def metrics_history(self) -> MetricsHistory:
        """The console's metrics history of this service (``history``'s minutes)."""
        return self.history.minutes

    @property
    def engine(self) -> Engine:
        """The tests' own engine on the service's stores (made on first use)."""
        if self._engine is None:
            self._engine = self.new_engine()
        return self._engine

    def configure(self, **changes: Any) -> None:
        """Change settings (``Settings`` field names); containers loaded from now on use
        them (call it before the requests it should affect)."""
        self.settings = replace(self.settings, **changes)
        self._engine = None
        self.gateway.loader.forget()

    def create_namespaces(self, *namespaces: str) -> None:
        """Create each ``tenant/namespace`` (and its tenant) unless it exists: topics are
        created only inside an existing namespace."""
        ensure_namespaces(self.engine, *namespaces)

    def create_partitioned_topic(self, topic: str, partitions: int) -> None:
        """Create ``topic`` (a full name or ``domain/tenant/namespace/name``) partitioned."""
        self.engine.admin.create_topic(topic_name(topic), partitions)

    def key_of(self, topic: str) -> str:
        """The store key (partition ledger) of an existing topic or partition, for tests
        that arrange or inspect stored state (cursors, the producer lease)."""
        ref = self.engine.topics.resolve(topic_name(topic), create=False, allow_non_persistent=True)
        return ref.key

    # ------------------------------------------------------------------ requests

    def handle(
        self, request: HttpRequest, invoke: Callable[[HttpRequest], HttpResponse]
    ) -> HttpResponse:
        """Record ``request``, answer an injected error or stall it (``RequestRecorder``),
        then serve it: entry objects here, everything else by ``invoke`` (the handlers)."""
        kind, injected = self.record(request)
        if injected is not None:
            return injected
        if kind in ("s3_put", "s3_get"):
            return self._object(request)
        return invoke(request)

    def _object(self, request: HttpRequest) -> HttpResponse:
        entries = self._entries
        key = entries.key_of(request.raw_path)
        if key is None:
            return json_response(404, {"error": "NoSuchKey", "message": request.raw_path})
        if request.method == "PUT":
            entries.put(key, request.body)
            return HttpResponse(200)
        try:
            data = entries.get(key)
        except StorageFault as exc:
            return json_response(404, {"error": "NoSuchKey", "message": str(exc)})
        return HttpResponse(200, [("Content-Type", "application/octet-stream")], data)


_TEMPLATES: dict[Path, LocalTemplate] = {}
_TEMPLATES_LOCK = threading.Lock()


def _template(path: Path | str) -> LocalTemplate:
    """The resolved template (parsed once per process: services only read it)."""
    key = Path(path).resolve()
    with _TEMPLATES_LOCK:
        if key not in _TEMPLATES:
            _TEMPLATES[key] = LocalTemplate(key)
        return _TEMPLATES[key]


def topic_name(topic: str) -> TopicName:
    """``persistent/public/default/t`` (a path) or a full topic name, as a TopicName."""
    return TopicName.parse(topic if "://" in topic else topic.replace("/", "://", 1))
