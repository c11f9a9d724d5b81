"""The gateway of a ``MemoryService``: the real handlers, each container loaded with an engine
on the service's in-memory stores injected (``magnetar_core.api.http.injected_engine``), and
the service's metrics history beside it (the console's charts)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Protocol

from magnetar_core.api.http import injected_engine
from magnetar_core.engine import Engine
from magnetar_core.ports import MetricsHistory
from magnetar_local.events import HttpRequest, HttpResponse
from magnetar_local.gateway import Gateway
from magnetar_local.handlers import Handler, HandlerLoader, load_container
from magnetar_local.template import FunctionSpec, LocalTemplate

__all__ = ["EngineLoader", "MemoryGateway", "ServiceSide"]

_FRONT_APPS = "magnetar_front_"
"""The modules ``magnetar_core.api.front_door.load_handler_module`` names by default."""


class ServiceSide(Protocol):
    """What the gateway needs of its service (a ``MemoryService``): fresh engines on its
    stores, its metrics history, and its request path (recording, injected errors) around
    an invoke."""

    def new_engine(self) -> Engine: ...

    def metrics_history(self) -> MetricsHistory: ...

    def handle(
        self, request: HttpRequest, invoke: Callable[[HttpRequest], HttpResponse]
    ) -> HttpResponse: ...


class EngineLoader(HandlerLoader):
    """Loads each handler container with an engine of ``new_engine`` injected, and
    ``history`` as its metrics history source (the console's)."""

    def __init__(
        self,
        functions: dict[str, FunctionSpec],
        new_engine: Callable[[], Engine],
        history: Callable[[], MetricsHistory],
    ) -> None:
        super().__init__(functions)
        self._new_engine = new_engine
        self._history = history
        self._modules: list[str] = []  # the containers' modules in sys.modules

    def _load(self, spec: FunctionSpec, serial: int = 0) -> Handler:  # type: ignore[override]
        before = set(sys.modules)
        with injected_engine(self._new_engine(), self._history):
            # a name of its own: the emulator stack's gateway may load the same functions
            handler, module = load_container(spec, f"memory{serial}")
        # and the apps a data-plane container loads for its front door (magnetar_front_*)
        loaded = [name for name in list(sys.modules) if name not in before]
        self._modules += [module, *(name for name in loaded if name.startswith(_FRONT_APPS))]
        return handler

    def unload(self) -> None:
        """Take the modules of the containers loaded so far out of ``sys.modules`` (containers
        still held keep working: their handlers hold their globals). A stopped service's
        engines, stores and routes can then be freed: kept there, every service a process had
        started stayed alive (measured: 1,282 engines and 770,000 objects after the unit
        tests in one process, which made each full garbage collection 0.25 CPU-s: 13 CPU-s
        of collections over the run)."""
        for name in self._modules:
            sys.modules.pop(name, None)
        self._modules.clear()


class MemoryGateway(Gateway):
    """The local gateway in front of a ``MemoryService`` (its ``ServiceSide``): its requests go through
    ``service.handle`` (recording, injected errors) to handlers loaded by ``EngineLoader``."""

    poll_interval_s = 0.01  # a test service stops at the end of every test

    def __init__(self, service: ServiceSide, template: LocalTemplate) -> None:
        super().__init__(template.routes, template.functions)
        self.service = service
        self.loader: EngineLoader = EngineLoader(
            template.functions, service.new_engine, service.metrics_history
        )

    def invoke(self, request: HttpRequest) -> HttpResponse:
        return self.service.handle(request, super().invoke)

    def stop(self) -> None:
        """Stop serving and let the service's containers go (``EngineLoader.unload``)."""
        super().stop()
        self.loader.unload()
