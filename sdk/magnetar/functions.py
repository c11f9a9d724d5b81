"""Pulsar Functions' Python API (``magnetar.Function``, ``magnetar.Context``): see
``magnetar_wire.functions``, where it lives so the service can run functions without the
SDK installed."""

from magnetar_wire.functions import Context, Function, IdentitySerDe, SerDe

__all__ = ["Context", "Function", "IdentitySerDe", "SerDe"]
