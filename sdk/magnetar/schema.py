"""Minimal schemas: ``BytesSchema`` (the default) and ``StringSchema``, as in ``pulsar.schema``.

Magnetar has no schema registry; a schema only encodes and decodes payloads client-side.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

__all__ = ["BytesSchema", "Schema", "StringSchema"]


class Schema(ABC):
    """Base class: ``encode(obj) -> bytes`` and ``decode(data) -> obj``."""

    @abstractmethod
    def encode(self, obj: Any) -> bytes:
        """Serialize ``obj``."""

    @abstractmethod
    def decode(self, data: bytes) -> Any:
        """Deserialize ``data``."""

    def _validate_object_type(self, obj: Any, expected: type) -> None:
        if not isinstance(obj, expected):
            raise TypeError(
                f"Invalid object type '{type(obj).__name__}' for {type(self).__name__}: "
                f"expected '{expected.__name__}'"
            )


class BytesSchema(Schema):
    """Payloads are ``bytes`` as given (``bytearray``/``memoryview`` are accepted too)."""

    def encode(self, obj: Any) -> bytes:
        """Return ``obj`` as bytes; raise ``TypeError`` if it is not bytes."""
        if isinstance(obj, (bytearray, memoryview)):
            return bytes(obj)
        self._validate_object_type(obj, bytes)
        return obj

    def decode(self, data: bytes) -> bytes:
        """Return ``data`` unchanged."""
        return data


class StringSchema(Schema):
    """Payloads are ``str``, UTF-8 encoded."""

    def encode(self, obj: Any) -> bytes:
        """UTF-8 encode ``obj``; raise ``TypeError`` if it is not a str."""
        self._validate_object_type(obj, str)
        return obj.encode("utf-8")

    def decode(self, data: bytes) -> str:
        """UTF-8 decode ``data``."""
        return data.decode("utf-8")
