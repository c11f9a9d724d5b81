"""The embedded local stack: moto (AWS emulator) + resources from template.yaml + an HTTP
gateway running the real Lambda handlers in-process.

Entry points: ``LocalStack`` (magnetar_local.stack), ``run(argv)`` (magnetar_local.main, the
``magnetar local`` command), pytest fixtures in magnetar_local.testing.
"""

from magnetar_local.readiness import StackError
from magnetar_local.stack import LocalStack

__all__ = ["LocalStack", "StackError"]
