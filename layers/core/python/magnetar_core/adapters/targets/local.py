"""Local functions: Python callables registered by name, run in-process as Lambda targets
(``magnetar local --function NAME=path/file.py:handler``).

A handler is called as Lambda calls one, ``handler(event, context)`` with the batch's JSON
as ``event`` and ``None`` as context; its return value (JSON-serializable, or None) is the
answer (status 200). An exception raises TargetFailed (the batch is retried).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from magnetar_core.domain.triggers.records import TargetAnswer, TargetFailed
from magnetar_core.domain.triggers.spec import Target

Handler = Callable[[Any, Any], Any]


class LocalFunctions:
    """A thread-safe registry of handlers by function name."""

    def __init__(
        self,
        handlers: dict[str, Handler] | None = None,
        on_register: Callable[[str], None] | None = None,
    ) -> None:
        """``on_register(name)`` is called for each function, those given included (the
        local stack makes each a function of its emulator's Lambda too)."""
        self._handlers = dict(handlers or {})
        self._lock = threading.Lock()
        self._on_register = on_register
        for name in sorted(self._handlers):
            if on_register is not None:
                on_register(name)

    def register(self, name: str, handler: Handler) -> None:
        """Make ``handler`` the function ``name`` (replacing one of that name)."""
        with self._lock:
            self._handlers[name] = handler
        if self._on_register is not None:
            self._on_register(name)

    def handlers(self) -> dict[str, Handler]:
        """The functions by name (a copy)."""
        with self._lock:
            return dict(self._handlers)

    def unregister(self, name: str) -> None:
        with self._lock:
            self._handlers.pop(name, None)

    def __contains__(self, name: object) -> bool:
        with self._lock:
            return name in self._handlers

    def invoke(self, target: Target, body: bytes, timestamp_ms: int) -> TargetAnswer:
        """Run the handler named ``target.function`` on the batch; raises TargetFailed when
        there is none, it raised, or its return value is not JSON."""
        with self._lock:
            handler = self._handlers.get(target.function or "")
        if handler is None:
            raise TargetFailed(f"No local function {target.function!r} is registered")
        try:
            result = handler(json.loads(body), None)
            return TargetAnswer(200, json.dumps(result).encode() if result is not None else b"")
        except Exception as error:  # the function's failure, whatever it is: retry the batch
            raise TargetFailed(f"Local function {target.function} raised: {error!r}") from error
