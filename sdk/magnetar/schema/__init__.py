"""``pulsar.schema``: records and the schemas that encode them (pulsar-client 3.13's names).

``Record`` subclasses declare typed fields (``definition``); ``JsonSchema``, ``AvroSchema``
(fastavro: the ``avro`` extra), ``StringSchema``, ``BytesSchema`` (the default),
``ProtobufNativeSchema`` (the ``protobuf`` extra), ``KeyValueSchema`` and ``AUTO_CONSUME``
encode what producers send and decode ``Message.value()``. ``schema_info()`` describes each
one; producers and consumers declare it to the service's schema registry at creation
(``IncompatibleSchema`` when refused) and messages carry its version
(``Message.schema_version()``).
"""

from __future__ import annotations

from .definition import (
    Array,
    Boolean,
    Bytes,
    CustomEnum,
    Double,
    Field,
    Float,
    Integer,
    Long,
    Map,
    Null,
    Record,
    String,
)
from .schema import BytesSchema, JsonSchema, Schema, SchemaInfo, SchemaType, StringSchema
from .schema_auto import AUTO_CONSUME, AutoConsumeSchema
from .schema_avro import AvroSchema
from .schema_keyvalue import KeyValue, KeyValueEncodingType, KeyValueSchema
from .schema_protobuf import ProtobufNativeSchema

__all__ = [
    "AUTO_CONSUME", "Array", "AutoConsumeSchema", "AvroSchema", "Boolean", "Bytes",
    "BytesSchema", "CustomEnum", "Double", "Field", "Float", "Integer", "JsonSchema",
    "KeyValue", "KeyValueEncodingType", "KeyValueSchema", "Long", "Map", "Null",
    "ProtobufNativeSchema", "Record", "Schema", "SchemaInfo", "SchemaType", "String",
    "StringSchema",
]  # fmt: skip
