"""Pulsar Functions' Python API (``magnetar.Function``, ``magnetar.Context``, the SerDes):
see ``magnetar_wire.functions``, where it lives so the service can run functions without the
SDK installed. ``PickleSerDe`` (pulsar-client's, for programs that name it) is here."""

import pickle
from typing import Any

from magnetar_wire.functions import Context, Function, IdentitySerDe, SerDe

__all__ = ["Context", "Function", "IdentitySerDe", "PickleSerDe", "SerDe"]


class PickleSerDe(SerDe):
    """pulsar-client's ``PickleSerDe``: Python objects as ``pickle`` bytes. Deserialize only
    bytes you trust (unpickling runs code)."""

    def serialize(self, input: Any) -> bytes:  # noqa: A002 - Pulsar's parameter name
        return pickle.dumps(input)

    def deserialize(self, input_bytes: bytes) -> Any:
        return pickle.loads(input_bytes)  # noqa: S301 - pulsar-client's behaviour, documented
