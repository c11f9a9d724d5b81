"""The embedded local stack: moto (AWS emulator) + resources from template.yaml + an HTTP
gateway running the real Lambda handlers in-process.

Entry points: ``LocalStack`` (magnetar_local.stack), ``run(argv)`` (magnetar_local.main, the
``magnetar local`` command), pytest fixtures in magnetar_local.testing.

``LocalStack`` and ``StackError`` are imported on first use: a process that imports one module
of this package (``magnetar jobs run``'s launcher, Spark's Python worker daemon
``magnetar_local.spark_daemon``) does not import the stack, the gateway and the engine with
it (about 0.3 CPU-s each time, measured).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from magnetar_local.readiness import StackError
    from magnetar_local.stack import LocalStack

__all__ = ["LocalStack", "StackError"]

_LAZY = {"LocalStack": "magnetar_local.stack", "StackError": "magnetar_local.readiness"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
