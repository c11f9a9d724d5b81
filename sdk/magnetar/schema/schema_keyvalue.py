"""``KeyValueSchema``: a key and a value, each with its own schema, as Pulsar's Java and C++
clients encode them (pulsar-client's Python API has no key/value schema; this one follows
Java's ``Schema.KeyValue(key, value, KeyValueEncodingType)``).

- ``INLINE`` (the default): the payload is ``[key length][key][value length][value]``,
  lengths as 4-byte big-endian signed ints (-1 for a ``None`` part).
- ``SEPARATED``: the payload is the value; the key's bytes travel base64-encoded as the
  message key (``partition_key``), so routing, Key_Shared and compaction see the key.
  The key overrides any ``partition_key`` given to ``send``.

Values are ``KeyValue(key, value)`` named tuples; ``send`` accepts any ``(key, value)`` pair.
"""

from __future__ import annotations

import base64
import enum
import json
import struct
from typing import Any, NamedTuple

from .schema import Schema, SchemaInfo, SchemaType

__all__ = ["KeyValue", "KeyValueEncodingType", "KeyValueSchema"]

_LENGTH = struct.Struct(">i")


class KeyValueEncodingType(enum.IntEnum):
    """Where a key/value schema puts the key (Pulsar's ``KeyValueEncodingType``)."""

    SEPARATED = 0
    INLINE = 1


class KeyValue(NamedTuple):
    """A decoded key/value pair."""

    key: Any
    value: Any


def _definition(info: SchemaInfo) -> Any:
    """A part's definition as JSON data (``None`` for primitives)."""
    return json.loads(info.schema())


class KeyValueSchema(Schema):
    """A key schema and a value schema in one message.

    Raises:
        ValueError: a part is not a ``Schema`` or the encoding is not a
            ``KeyValueEncodingType``; ``decode`` of a truncated INLINE payload.
        TypeError: ``encode`` of something that is not a ``(key, value)`` pair, or of a part
            its schema refuses.
    """

    def __init__(self, key_schema: Schema, value_schema: Schema,
                 encoding_type: KeyValueEncodingType = KeyValueEncodingType.INLINE) -> None:  # fmt: skip
        for name, part in (("key_schema", key_schema), ("value_schema", value_schema)):
            if not isinstance(part, Schema):
                raise ValueError(f"Argument {name} is expected to be of type 'Schema' "
                                 f"and not '{type(part).__name__}'")  # fmt: skip
        if not isinstance(encoding_type, KeyValueEncodingType):
            raise ValueError("Argument encoding_type is expected to be of type "
                             f"'KeyValueEncodingType' and not '{type(encoding_type).__name__}'")  # fmt: skip
        self.key_schema = key_schema
        self.value_schema = value_schema
        self.encoding_type = encoding_type
        key_info, value_info = key_schema.schema_info(), value_schema.schema_info()
        super().__init__(KeyValue, SchemaType.KEY_VALUE,
                         {"key": _definition(key_info), "value": _definition(value_info)},
                         "KeyValue")  # fmt: skip
        self._schema_info = SchemaInfo(SchemaType.KEY_VALUE, "KeyValue",
                                       self._schema_info.schema(),
                                       _properties(key_info, value_info, encoding_type))  # fmt: skip

    def _parts(self, obj: Any) -> tuple[Any, Any]:
        if not (isinstance(obj, tuple) and len(obj) == 2):
            raise TypeError("Invalid record obj of type " + str(type(obj))
                            + " - expected a (key, value) pair")  # fmt: skip
        return obj[0], obj[1]

    def _encode_part(self, schema: Schema, part: Any) -> bytes | None:
        return None if part is None else schema.encode(part)

    def encode(self, obj: Any) -> bytes:
        """INLINE bytes of ``(key, value)`` (SEPARATED producers send the value alone)."""
        key, value = self._parts(obj)
        out = b""
        for schema, part in ((self.key_schema, key), (self.value_schema, value)):
            data = self._encode_part(schema, part)
            out += _LENGTH.pack(-1) if data is None else _LENGTH.pack(len(data)) + data
        return out

    def _encode_message(self, obj: Any) -> tuple[bytes, str | None]:
        if self.encoding_type == KeyValueEncodingType.INLINE:
            return self.encode(obj), None
        key, value = self._parts(obj)
        key_bytes = self._encode_part(self.key_schema, key)
        value_bytes = self._encode_part(self.value_schema, value)
        key_text = base64.b64encode(key_bytes).decode("ascii") if key_bytes is not None else None
        return value_bytes or b"", key_text

    def decode(self, data: bytes) -> KeyValue:
        """A ``KeyValue`` from INLINE bytes."""
        parts: list[Any] = []
        offset = 0
        for schema in (self.key_schema, self.value_schema):
            if len(data) < offset + 4:
                raise ValueError("a key/value payload is truncated")
            (size,) = _LENGTH.unpack_from(data, offset)
            offset += 4
            if size < 0:
                parts.append(None)
                continue
            if len(data) < offset + size:
                raise ValueError("a key/value payload is truncated")
            parts.append(schema.decode(data[offset : offset + size]))
            offset += size
        return KeyValue(parts[0], parts[1])

    def decode_message(self, msg: Any) -> KeyValue:
        """INLINE: from the payload; SEPARATED: the key from the message key, the value from
        the payload (a message without a key has key ``None``)."""
        if self.encoding_type == KeyValueEncodingType.INLINE:
            return self.decode(msg.data())
        key_text = msg.partition_key()
        key = self.key_schema.decode(base64.b64decode(key_text)) if key_text else None
        return KeyValue(key, self.value_schema.decode(msg.data()))

    def __str__(self) -> str:
        return f"KeyValueSchema({self.key_schema}, {self.value_schema}, {self.encoding_type.name})"


def _properties(key: SchemaInfo, value: SchemaInfo,
                encoding: KeyValueEncodingType) -> dict[str, str]:  # fmt: skip
    """Pulsar's key/value schema properties: each part's name, type and properties."""
    return {
        "key.schema.name": key.name(),
        "key.schema.type": key.schema_type().name,
        "key.schema.properties": json.dumps(key.properties()),
        "value.schema.name": value.name(),
        "value.schema.type": value.schema_type().name,
        "value.schema.properties": json.dumps(value.properties()),
        "kv.encoding.type": encoding.name,
    }
