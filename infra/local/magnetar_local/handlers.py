"""Loading the real handlers in-process, as Lambda runs them: the handlers' environment in
``os.environ`` and a pool of *containers* (separate loads of a handler module) per function.

Every handler runs in this process and shares one ``os.environ``: the gateway applies the
union of the functions' resolved environments (today they are all the Globals) plus the
emulator endpoint and fake credentials before loading any handler. Each ``functions/<name>/
app.py`` is loaded under its own module name (they are all called ``app``). A handler
directory should hold only ``app.py``: sibling modules would share one ``sys.modules``.
``HandlerLoader.invoke`` runs one request as API Gateway answers for a Lambda. A handler that
raises ``InvocationAbandoned`` ends as a timed-out or crashed Lambda does: its container is
thrown away and the answer is a 504 (fault injection uses it).
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

from magnetar_core.api.front_door import load_handler_module
from magnetar_local.events import (
    HttpResponse,
    InvalidLambdaResponse,
    json_response,
    to_http_response,
)
from magnetar_local.template import FunctionSpec, RouteSpec

__all__ = ["Handler", "HandlerLoader", "InvocationAbandoned", "apply_handler_environment"]

log = logging.getLogger("magnetar_local.gateway")  # the gateway's log, as before the split
_MODULES = itertools.count(1)
"""Loads of handler modules in this process: part of each module's name."""

Handler = Callable[[dict[str, Any], Any], Any]


def apply_handler_environment(
    functions: Mapping[str, FunctionSpec], extra: Mapping[str, str]
) -> dict[str, str]:
    """Set ``os.environ`` for the handlers; returns what was set.

    Later functions win where two functions define a variable differently (logged).
    """
    merged: dict[str, str] = {}
    for spec in functions.values():
        for name, value in spec.environment.items():
            if name in merged and merged[name] != value:
                log.warning("%s differs between functions; using %s's value", name, spec.logical_id)
            merged[name] = value
    merged.update(extra)
    os.environ.update(merged)
    return merged


def _handler_path(spec: FunctionSpec) -> Path:
    """``app.lambda_handler`` in ``functions/x/`` -> ``functions/x/app.py``."""
    return spec.code_dir / (spec.handler.rpartition(".")[0].replace(".", "/") + ".py")


class InvocationAbandoned(BaseException):  # noqa: N818 - not an error the handler may catch
    """Raised inside a handler: this invocation ends here, as a Lambda that times out or
    crashes ends (not an ``Exception``, so no ``except Exception`` in the engine catches it).
    The gateway answers 504 as API Gateway does and discards the container."""


class HandlerLoader:
    """Loads handlers as Lambda runs them: one request at a time per *container*.

    Each container is a separate load of the handler module (its own module globals:
    resolver, engine, caches). A request borrows an idle container of its function or
    loads a new one, so concurrent requests never share a resolver; Lambda scales out the
    same way. Powertools keeps the current event in a class attribute shared by every
    resolver of the process: the handlers' resolver (``magnetar_core.api.http._Resolver``)
    keeps it per instance, or concurrent containers would read each other's requests.
    ``container_context(spec)`` (a context-manager factory, given the function's spec) wraps
    every container load: e.g. ``injected_engine`` to run new containers on an engine built
    elsewhere.
    """

    def __init__(self, functions: Mapping[str, FunctionSpec]) -> None:
        self.functions = dict(functions)
        self.container_context: Callable[[FunctionSpec], AbstractContextManager[Any]] = (
            lambda spec: nullcontext()
        )
        self._registered: dict[str, Handler] = {}
        self._idle: dict[str, list[Handler]] = {}
        self._loaded = 0
        self._generation = 0  # forget() starts a new one: older containers are not reused
        self._lock = threading.Lock()
        self._load_lock = threading.Lock()  # module loads touch sys.path: one at a time

    def register(self, name: str, handler: Handler, spec: FunctionSpec | None = None) -> None:
        """Use ``handler`` for function ``name`` (tests register small handlers this way)."""
        with self._lock:
            self._registered[name] = handler
            if spec is not None:
                self.functions[name] = spec

    def available(self, name: str) -> bool:
        """True when function ``name`` has a registered handler or an existing handler file."""
        spec = self.functions.get(name)
        return name in self._registered or (spec is not None and _handler_path(spec).is_file())

    def containers(self, name: str) -> int:
        """How many idle containers function ``name`` has now."""
        with self._lock:
            return len(self._idle.get(name, ()))

    @contextmanager
    def lease(self, name: str) -> Iterator[Handler]:
        """Borrow a container of function ``name`` for one request.

        Raises FileNotFoundError if its handler file is missing.
        """
        with self._lock:
            registered = self._registered.get(name)
            idle = self._idle.setdefault(name, [])
            handler = registered or (idle.pop() if idle else None)
            self._loaded += handler is None
            serial, generation = self._loaded, self._generation
        if handler is None:
            spec = self.functions[name]
            with self._load_lock, self.container_context(spec):
                handler = self._load(spec, serial)
        abandoned = False
        try:
            yield handler
        except InvocationAbandoned:
            abandoned = True  # a crashed or timed-out Lambda's container is gone
            raise
        finally:
            if registered is None and not abandoned:
                with self._lock:
                    if generation == self._generation:
                        self._idle.setdefault(name, []).append(handler)

    def invoke(
        self, name: str, event: dict[str, Any], context: Any, route: RouteSpec
    ) -> HttpResponse:
        """Run one request of ``route`` on a container of function ``name``, as API Gateway
        answers for a Lambda: the handler's answer as HTTP; 504 when it is abandoned (timed
        out or crashed: its container is gone); a 502 in our error shape when it raises or
        answers malformed, logged with the event's request id."""
        request_id = event["requestContext"]["requestId"]
        try:
            with self.lease(name) as handler:
                result = handler(event, context)
            return to_http_response(result)
        except InvocationAbandoned:
            log.warning(
                "request %s (Lambda request %s): %s abandoned (timed out or crashed)",
                request_id, context.aws_request_id, route.function,
            )  # fmt: skip
            return json_response(504, {"message": "Endpoint request timed out"})
        except InvalidLambdaResponse:
            log.exception(
                "request %s (Lambda request %s): %s returned a malformed response",
                request_id, context.aws_request_id, route.function,
            )  # fmt: skip
            return _internal_error(request_id)
        except Exception:
            log.exception(
                "request %s (Lambda request %s): %s failed on %s",
                request_id, context.aws_request_id, route.function, route.route_key,
            )  # fmt: skip
            return _internal_error(request_id)

    def forget(self) -> None:
        """Drop every container: idle ones now, busy ones when their request ends; the next
        requests load new ones (cold starts)."""
        with self._lock:
            self._idle.clear()
            self._generation += 1

    def get(self, name: str) -> Handler:
        """A handler of function ``name`` for a single caller (tests, events replay)."""
        with self.lease(name) as handler:
            return handler

    @staticmethod
    def _load(spec: FunctionSpec, serial: int = 0) -> Handler:
        return load_container(spec, serial)[0]


def load_container(spec: FunctionSpec, serial: int | str = 0) -> tuple[Handler, str]:
    """A new container of function ``spec``: its handler, and the name of its module in
    ``sys.modules`` (``magnetar_fn_<logical id>_<serial>_<n>``)."""
    path, attribute = _handler_path(spec), spec.handler.rpartition(".")[2]
    if not path.is_file():
        raise FileNotFoundError(f"{spec.logical_id}: handler file {path} does not exist")
    # unique in the process, not only in this loader: another gateway's container of the
    # same serial would replace this one in sys.modules, hiding its engine from tests
    # that find containers' engines there (jobs_in_process)
    module_name = f"magnetar_fn_{spec.logical_id.lower()}_{serial}_{next(_MODULES)}"
    module = load_handler_module(path, module_name, spec.code_dir)
    return getattr(module, attribute), module_name


def _internal_error(request_id: str) -> HttpResponse:
    """API Gateway's 502 for a failed function, in our error shape."""
    message = (
        f"Internal Server Error; the gateway log has the details under request id {request_id}"
    )
    return json_response(502, {"error": "UnknownError", "message": message})
