"""The engine of a Lambda container: built once, on the handler's first invocation, from
settings read then at the edge (``container_engine``); or injected by whoever loads the
handler module (``injected_engine``: an engine built elsewhere, e.g. on in-memory adapters,
with the console's metrics history source beside it; ``shared_engine``: one engine for
several handler modules, the function-URL front door's; ``shared_clients``: engines built
from the settings as usual, on boto3 clients made once for many containers).
``magnetar_core.api.http`` re-exports these for the handlers."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from magnetar_core.engine import Engine, metrics_history
from magnetar_core.ports import MetricsHistory
from magnetar_core.settings import Settings

HistorySource = Callable[[], MetricsHistory]
"""The console's metrics history, made on first use."""

_injected: ContextVar[tuple[Engine, HistorySource | None] | None] = ContextVar(
    "magnetar_injected_engine", default=None
)
_clients: ContextVar[Callable[[], tuple[Any, ...]] | None] = ContextVar(
    "magnetar_container_clients", default=None
)


class ContainerEngine:
    """The engine of one Lambda container (one load of a handler module), built on the first
    call from settings read then, once, at the edge — never at import — and kept for the
    container's later invocations (Lambda reuses the container). A handler module loaded
    inside ``injected_engine`` gets that engine (and that history source) instead, one loaded
    inside ``shared_engine`` that container engine's (both captured when the module is
    loaded). Calling it raises what ``Settings.from_env`` / ``Engine.build`` raise (a handler
    answers a logged 500)."""

    def __init__(self) -> None:
        injected = _injected.get()
        self._engine: Engine | None = injected[0] if injected is not None else None
        self._history: HistorySource | None = injected[1] if injected is not None else None
        self._settings: Settings | None = None
        self._shared = _shared.get()
        self._clients = _clients.get()
        self._lock = threading.Lock()

    @property
    def built(self) -> Engine | None:
        """The engine, once built (or injected); None before the first call."""
        return self._shared.built if self._shared is not None else self._engine

    def __call__(self) -> Engine:
        if self._shared is not None:
            return self._shared()
        engine = self._engine
        if engine is None:
            with self._lock:  # one build even when a local gateway shares the module
                if self._engine is None:
                    self._settings = Settings.from_env(os.environ)
                    if self._clients is None:
                        self._engine = Engine.build(self._settings)
                    else:
                        self._engine = Engine.build(self._settings, clients=self._clients())
                engine = self._engine
        return engine

    def history(self, service: str) -> MetricsHistory:
        """The console's metrics history: the injected source's, else the one the settings
        the engine was built from name (``metrics_history``; the engine built first).
        Raises LookupError for an injected engine without a history source."""
        if self._shared is not None:
            return self._shared.history(service)
        if self._history is not None:
            return self._history()
        self()
        if self._settings is None:
            raise LookupError("an injected engine came without a metrics history source")
        return metrics_history(self._settings, service)


_shared: ContextVar[ContainerEngine | None] = ContextVar("magnetar_shared_engine", default=None)


def container_engine() -> ContainerEngine:
    """A handler module's engine, built lazily on its first invocation (``ContainerEngine``):
    ``engine = http.container_engine()`` at module level, ``engine().subscriptions`` in a
    route."""
    return ContainerEngine()


@contextmanager
def injected_engine(engine: Engine, history: HistorySource | None = None) -> Iterator[Engine]:
    """Within the block (this thread / context only), ``container_engine`` makes engines that
    return ``engine``: load a handler module inside it to run the handler on an engine built
    elsewhere (e.g. on in-memory adapters) instead of one built from the environment;
    ``history``: the console's metrics history beside it (no settings are read for it)."""
    token = _injected.set((engine, history))
    try:
        yield engine
    finally:
        _injected.reset(token)


@contextmanager
def shared_clients(clients: Callable[[], tuple[Any, ...]]) -> Iterator[None]:
    """Within the block (this thread / context only), ``container_engine`` makes engines
    that build as usual, from the settings read at their first call, but on the boto3
    clients ``clients()`` returns (``(dynamodb, s3, stepfunctions)``, as ``Engine.build``
    takes them) instead of clients of their own: for many containers in one process (the
    local gateway's), where each container's own clients cost about 20 ms of CPU to make
    and a burst of concurrent requests loads a container per request. boto3 clients are
    thread-safe; each engine keeps its own caches."""
    token = _clients.set(clients)
    try:
        yield
    finally:
        _clients.reset(token)


@contextmanager
def shared_engine(engine: ContainerEngine) -> Iterator[ContainerEngine]:
    """Within the block (this thread / context only), ``container_engine`` makes engines that
    defer to ``engine``: handler modules loaded inside it share one engine per container (the
    function-URL front door's apps), built once, on the first request of any of them."""
    token = _shared.set(engine)
    try:
        yield engine
    finally:
        _shared.reset(token)
