"""Pulsar Functions' default Python SerDe (``serde.IdentitySerDe``), shared by the SDK's
Functions API and the engine's function runtime so both convert the same way.

``deserialize`` turns a payload into the first of int, float, complex, str it parses as
(UTF-8), else returns the bytes; ``serialize`` turns int, float, complex and str into their
UTF-8 text and passes bytes through. Anything else raises TypeError (as Pulsar's).
"""

from __future__ import annotations

from typing import Any

_TYPES: tuple[type, ...] = (int, float, complex, str)


def serialize(value: Any) -> bytes:
    """``value`` as payload bytes; raises TypeError for a type other than bytes, int,
    float, complex or str."""
    if type(value) in _TYPES:
        return str(value).encode("utf-8")
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    raise TypeError(
        f"IdentitySerDe cannot serialize object of type {type(value).__name__}: "
        "return bytes, str, int, float or complex"
    )


def deserialize(payload: bytes) -> Any:
    """The payload as int, float, complex or str (the first that parses), else bytes."""
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError:
        return payload
    for kind in _TYPES:
        try:
            return kind(text)
        except ValueError:
            continue
    return payload  # pragma: no cover - str() of a decoded text always succeeds


class IdentitySerDe:
    """Pulsar's ``serde.IdentitySerDe`` as a class (``serialize`` / ``deserialize``)."""

    def serialize(self, value: Any) -> bytes:
        return serialize(value)

    def deserialize(self, payload: bytes) -> Any:
        return deserialize(payload)
