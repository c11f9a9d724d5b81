"""``pulsar.schema.schema``: the ``Schema`` base, ``SchemaType``, ``SchemaInfo`` and the
``BytesSchema`` (the default), ``StringSchema`` and ``JsonSchema`` codecs.

A schema encodes what a producer sends and decodes ``Message.value()``. Each one also
describes itself with ``schema_info()`` (type, name, definition text, properties), the data
a schema registry stores: producers and consumers declare it to the service's registry
when they are created, and ``Message.schema_version()`` names the version a message was
written with.
"""

from __future__ import annotations

import enum
import json
from abc import ABC, abstractmethod
from typing import Any

__all__ = ["BytesSchema", "JsonSchema", "Schema", "SchemaInfo", "SchemaType", "StringSchema"]


class SchemaType(enum.IntEnum):
    """Pulsar's schema types (``_pulsar.SchemaType``; the numbers of Pulsar's protocol)."""

    NONE = 0
    STRING = 1
    JSON = 2
    PROTOBUF = 3
    AVRO = 4
    KEY_VALUE = 15
    PROTOBUF_NATIVE = 20
    BYTES = -1
    AUTO_CONSUME = -3
    AUTO_PUBLISH = -4


class SchemaInfo:
    """What a schema tells a registry (``_pulsar.SchemaInfo``): ``schema_type()``,
    ``name()``, ``schema()`` (the definition as text) and ``properties()``."""

    def __init__(self, schema_type: SchemaType, name: str, schema: str,
                 properties: dict[str, str] | None = None) -> None:  # fmt: skip
        self._type = schema_type
        self._name = name
        self._schema = schema
        self._properties = dict(properties or {})

    def schema_type(self) -> SchemaType:
        """The schema's type."""
        return self._type

    def name(self) -> str:
        """The schema's name (``"AVRO"``, ``"JSON"``, ``"BYTES"``, ...)."""
        return self._name

    def schema(self) -> str:
        """The definition as text (JSON for Avro/JSON records, ``"null"`` for primitives)."""
        return self._schema

    def properties(self) -> dict[str, str]:
        """Implementation properties (e.g. a key/value schema's parts)."""
        return dict(self._properties)

    def to_dict(self) -> dict[str, Any]:
        """The body of Pulsar's ``POST /admin/v2/schemas/.../schema``:
        ``{"type": "AVRO", "schema": "<definition>", "properties": {...}}``."""
        return {"type": self._type.name, "schema": self._schema, "properties": self.properties()}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SchemaInfo) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SchemaInfo({self._type.name}, {self._name!r}, {self._schema!r})"


class Schema(ABC):
    """Base class: ``encode(obj) -> bytes``, ``decode(data) -> obj``, ``schema_info()``.

    A custom schema subclasses it and calls ``super().__init__(record_cls, schema_type,
    schema_definition, schema_name)`` (all optional here: a subclass that does not call it
    describes itself as ``BYTES``).
    """

    def __init__(self, record_cls: Any = None, schema_type: SchemaType = SchemaType.BYTES,
                 schema_definition: Any = None, schema_name: str = "BYTES") -> None:  # fmt: skip
        self._record_cls = record_cls
        self._schema_info = SchemaInfo(schema_type, schema_name,
                                       json.dumps(schema_definition, indent=True))  # fmt: skip
        self._client: Any = None

    @abstractmethod
    def encode(self, obj: Any) -> bytes:
        """Serialize ``obj``."""

    @abstractmethod
    def decode(self, data: bytes) -> Any:
        """Deserialize ``data``."""

    def decode_message(self, msg: Any) -> Any:
        """Decode a received ``Message`` (its payload, by default)."""
        return self.decode(msg.data())

    def schema_info(self) -> SchemaInfo:
        """The schema's description for a registry."""
        info = getattr(self, "_schema_info", None)
        return info if info is not None else SchemaInfo(SchemaType.BYTES, "BYTES", "null")

    def attach_client(self, client: Any) -> None:
        """Remember the client the schema is used with (pulsar-client's hook)."""
        self._client = client

    def _encode_message(self, obj: Any) -> tuple[bytes, str | None]:
        """The payload and, for schemas that carry part of a value in the message key
        (a SEPARATED key/value schema), that key; ``None`` otherwise."""
        return self.encode(obj), None

    def _validate_object_type(self, obj: Any, expected: Any = None) -> None:
        """Raises ``TypeError("Invalid record obj of type <type> - expected type is <cls>")``."""
        expected = expected if expected is not None else self._record_cls
        if not isinstance(obj, expected):
            raise TypeError("Invalid record obj of type " + str(type(obj))
                            + " - expected type is " + str(expected))  # fmt: skip


class BytesSchema(Schema):
    """Payloads are ``bytes`` as given (``bytearray``/``memoryview`` are accepted too)."""

    def __init__(self) -> None:
        super().__init__(bytes, SchemaType.BYTES, None, "BYTES")

    def encode(self, obj: Any) -> bytes:
        """Return ``obj`` as bytes; raise ``TypeError`` if it is not bytes."""
        if isinstance(obj, (bytearray, memoryview)):
            return bytes(obj)
        self._validate_object_type(obj)
        return bytes(obj)

    def decode(self, data: bytes) -> bytes:
        """Return ``data`` unchanged."""
        return data

    def __str__(self) -> str:
        return "BytesSchema"


class StringSchema(Schema):
    """Payloads are ``str``, UTF-8 encoded."""

    def __init__(self) -> None:
        super().__init__(str, SchemaType.STRING, None, "STRING")

    def encode(self, obj: Any) -> bytes:
        """UTF-8 encode ``obj``; raise ``TypeError`` if it is not a str."""
        self._validate_object_type(obj)
        return str(obj).encode("utf-8")

    def decode(self, data: bytes) -> str:
        """UTF-8 decode ``data``."""
        return data.decode("utf-8")

    def __str__(self) -> str:
        return "StringSchema"


def _without_reserved(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k not in ("_default", "_required", "_required_default")}


class JsonSchema(Schema):
    """Records as JSON text (pulsar-client's bytes: ``json.dumps(..., indent=True)``), enums
    by value; the definition is the record's Avro definition (Pulsar's JSON schema type).

    Raises ``TypeError`` on ``encode`` of an object that is not a ``record_cls`` instance, or
    of a record with a value JSON cannot hold (``bytes``).
    """

    def __init__(self, record_cls: Any) -> None:
        super().__init__(record_cls, SchemaType.JSON, record_cls.schema(), "JSON")

    @staticmethod
    def _get_serialized_value(o: Any) -> Any:
        if isinstance(o, enum.Enum):
            return o.value
        if not hasattr(o, "__dict__"):  # e.g. a Bytes field: JSON has no bytes
            raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")
        return _without_reserved(o.__dict__)

    def encode(self, obj: Any) -> bytes:
        """The record as UTF-8 JSON."""
        self._validate_object_type(obj)
        data = _without_reserved(obj.__dict__)
        return json.dumps(data, default=self._get_serialized_value, indent=True).encode("utf-8")

    def decode(self, data: bytes) -> Any:
        """A ``record_cls`` instance from JSON (nested records from nested objects)."""
        return self._record_cls(**json.loads(data))
