"""The embedded local stack: moto (AWS emulator) + resources from template.yaml + an HTTP
gateway running the real Lambda handlers in-process.

Entry points: ``LocalStack`` (magnetar_local.stack), ``run(argv)`` (magnetar_local.main, the
``magnetar local`` command), pytest fixtures in magnetar_local.testing.

The names load on first use (PEP 562): the processes that import one module of the package
without the stack, the emulator's (``magnetar_local.moto_boot``) above all, do not import
the gateway, the handlers and the engine (1.5 CPU-seconds at each start of the emulator).
"""

from magnetar_wire.lazy import lazy_names

__all__ = ["LocalStack", "StackError"]

_LAZY = {"LocalStack": ".stack", "StackError": ".readiness"}
"""name -> the module defining it"""

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
