"""The embedded local stack: moto (AWS emulator) + resources from template.yaml + an HTTP
gateway running the real Lambda handlers in-process.

Entry points: ``LocalStack`` (magnetar_local.stack), ``run(argv)`` (magnetar_local.main, the
``magnetar local`` command), pytest fixtures in magnetar_local.testing.

The names load on first use (PEP 562): the processes that import one module of the package
without the stack do not import the gateway, the handlers and the engine with it: the
emulator's (``magnetar_local.moto_boot``: 1.5 CPU-s at each start of the emulator), ``magnetar
jobs run``'s launcher and Spark's Python worker daemon (``magnetar_local.spark_daemon``: about
0.3 CPU-s each time), measured.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from magnetar_wire.lazy import lazy_names

if TYPE_CHECKING:
    from magnetar_local.readiness import StackError
    from magnetar_local.stack import LocalStack

__all__ = ["LocalStack", "StackError"]

_LAZY = {"LocalStack": ".stack", "StackError": ".readiness"}
"""name -> the module defining it"""

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
