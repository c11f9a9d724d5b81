"""``AutoConsumeSchema`` / ``AUTO_CONSUME``: a consumer's schema that decodes each message
with the schema its producer wrote it with (Java's ``Schema.AUTO_CONSUME()``).

``decode_with_info(info, data)`` decodes by a writer's ``SchemaInfo``: ``STRING`` -> str,
``JSON`` -> dict, ``AVRO`` -> dict (fastavro, with the writer's definition), INLINE
``KEY_VALUE`` -> ``KeyValue`` of decoded parts, anything else -> bytes. A received message
names its writer's schema version (``Message.schema_version()``); the consumer fetches that
version from the service's registry once (``magnetar._consumer.writer_schemas``) and
``Message.value()`` decodes with it (bytes when there is none).
"""

from __future__ import annotations

import io
import json
import struct
from typing import Any

from .schema import Schema, SchemaInfo, SchemaType
from .schema_keyvalue import KeyValue

__all__ = ["AUTO_CONSUME", "AutoConsumeSchema", "decode_with_info"]

_LENGTH = struct.Struct(">i")


def _part_info(properties: dict[str, str], definitions: dict[str, Any], part: str) -> SchemaInfo:
    kind = SchemaType[properties.get(f"{part}.schema.type", "BYTES")]
    return SchemaInfo(kind, properties.get(f"{part}.schema.name", kind.name),
                      json.dumps(definitions.get(part)))  # fmt: skip


def _key_value(info: SchemaInfo, data: bytes) -> Any:
    properties = info.properties()
    if properties.get("kv.encoding.type", "INLINE") != "INLINE":
        return data  # SEPARATED: the key is in the message key, not in this payload
    definitions = json.loads(info.schema()) or {}
    parts: list[Any] = []
    offset = 0
    for part in ("key", "value"):
        (size,) = _LENGTH.unpack_from(data, offset)
        offset += 4
        if size < 0:
            parts.append(None)
            continue
        chunk = data[offset : offset + size]
        offset += size
        parts.append(decode_with_info(_part_info(properties, definitions, part), chunk))
    return KeyValue(parts[0], parts[1])


def decode_with_info(info: SchemaInfo, data: bytes) -> Any:
    """``data`` decoded by its writer's schema (see the module's docstring).

    Raises ``ImportError`` for Avro without fastavro; the codec's own errors for a payload
    that does not match ``info``.
    """
    kind = info.schema_type()
    if kind == SchemaType.STRING:
        return data.decode("utf-8")
    if kind == SchemaType.JSON:
        return json.loads(data)
    if kind == SchemaType.AVRO:
        from .schema_avro import _fastavro

        fastavro = _fastavro()
        parsed = fastavro.parse_schema(json.loads(info.schema()))
        return fastavro.schemaless_reader(io.BytesIO(data), parsed)
    if kind == SchemaType.KEY_VALUE:
        return _key_value(info, data)
    return data


class AutoConsumeSchema(Schema):
    """Decode with the writer's schema when the message names it, else return bytes.

    Consumers and readers only: ``encode`` raises ``TypeError``. ``AUTO_CONSUME`` is an
    instance; ``AUTO_CONSUME()`` returns it too (the spelling of Java's factory).
    """

    def __init__(self) -> None:
        super().__init__(None, SchemaType.AUTO_CONSUME, None, "AUTO_CONSUME")

    def encode(self, obj: Any) -> bytes:
        """Always raises ``TypeError``: a producer cannot write with ``AUTO_CONSUME``."""
        raise TypeError("AUTO_CONSUME only decodes: give a producer a concrete schema")

    def decode(self, data: bytes) -> bytes:
        """No writer schema known: the bytes as they are."""
        return data

    def decode_message(self, msg: Any) -> Any:
        """Decode with the message's writer ``SchemaInfo`` if it carries one."""
        info = getattr(msg, "_writer_schema", None)
        return decode_with_info(info, msg.data()) if info is not None else msg.data()

    def __call__(self) -> AutoConsumeSchema:
        return self

    def __str__(self) -> str:
        return "AutoConsumeSchema"


AUTO_CONSUME = AutoConsumeSchema()
