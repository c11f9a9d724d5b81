"""The ``encryption`` object of an entry's metadata section (end-to-end encryption).

Pure (no I/O, no cryptography): only the JSON form of ``EntryEncryption``. The cipher work is
the SDK's (``magnetar._encryption.cipher``); the service and Spark jobs only carry these fields.

``{"algorithm": str, "param": base64, "keys": [{"name": str, "value": base64,
"metadata": {str: str}}]}``; ``metadata`` is omitted when empty; at least one key.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from .compression import EntryFormatError
from .model import DataKey, EntryEncryption

__all__ = ["encryption_json", "parse_encryption"]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def encryption_json(e: EntryEncryption) -> dict[str, Any]:
    """The JSON object of ``e`` (see the module)."""
    keys = []
    for k in e.keys:
        item: dict[str, Any] = {"name": k.name, "value": _b64(k.value)}
        if k.metadata:
            item["metadata"] = dict(k.metadata)
        keys.append(item)
    return {"algorithm": e.algorithm, "param": _b64(e.param), "keys": keys}


def _unb64(value: Any, where: str) -> bytes:
    if not isinstance(value, str):
        raise EntryFormatError(f"{where} must be base64 text, got {value!r}")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise EntryFormatError(f"{where} is not valid base64: {exc}") from None


def parse_encryption(obj: Any) -> EntryEncryption:
    """``EntryEncryption`` from its JSON object. Raises EntryFormatError naming the field
    that does not match the form above."""
    where = "metadata 'encryption'"
    if not isinstance(obj, dict):
        raise EntryFormatError(f"{where} must be an object, got {type(obj).__name__}")
    algorithm = obj.get("algorithm")
    if not isinstance(algorithm, str) or not algorithm:
        raise EntryFormatError(f"{where}: 'algorithm' must be a non-empty string")
    raw_keys = obj.get("keys")
    if not isinstance(raw_keys, list) or not raw_keys:
        raise EntryFormatError(f"{where}: 'keys' must be a non-empty list")
    keys = []
    for i, k in enumerate(raw_keys):
        kw = f"{where} key {i}"
        if not isinstance(k, dict) or not isinstance(k.get("name"), str):
            raise EntryFormatError(f"{kw}: expected {{name: str, value: base64, metadata}}")
        meta = k.get("metadata", {})
        if not isinstance(meta, dict) or not all(
            isinstance(n, str) and isinstance(v, str) for n, v in meta.items()
        ):
            raise EntryFormatError(f"{kw}: 'metadata' must map strings to strings")
        keys.append(DataKey(k["name"], _unb64(k.get("value"), f"{kw} 'value'"), dict(meta)))
    return EntryEncryption(algorithm, _unb64(obj.get("param"), f"{where} 'param'"), tuple(keys))
