"""A topic's schema versions as Pulsar's registry keeps them (``SchemaData``) and the body
of ``POST /admin/v2/schemas/.../schema`` (``PostSchemaPayload``: ``{"type", "schema",
"properties"}``), parsed and checked."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from magnetar_core.domain.errors import InvalidMessage, InvalidSchemaData
from magnetar_core.domain.schemas.avro import check_definition

SCHEMA_TYPES = (
    "NONE", "STRING", "JSON", "PROTOBUF", "AVRO", "BOOLEAN", "INT8", "INT16", "INT32",
    "INT64", "FLOAT", "DOUBLE", "DATE", "TIME", "TIMESTAMP", "KEY_VALUE", "INSTANT",
    "LOCAL_DATE", "LOCAL_TIME", "LOCAL_DATE_TIME", "PROTOBUF_NATIVE", "BYTES",
    "AUTO_CONSUME", "AUTO_PUBLISH",
)  # fmt: skip
"""Pulsar's SchemaType names a payload may carry."""
AVRO_BASED = ("AVRO", "JSON")
"""Types whose definition is an Avro schema (Pulsar's JSON schemas carry one too), so their
compatibility is Avro's schema resolution."""
NO_SCHEMA = ("NONE", "BYTES", "AUTO_CONSUME", "AUTO_PUBLISH")
"""Types a producer or consumer may declare that register nothing: raw bytes, or a schema
taken from the topic's."""
MAX_DEFINITION_BYTES = 256 * 1024
"""Largest definition text accepted (UTF-8 bytes): it is stored in one DynamoDB item."""


@dataclass(frozen=True)
class SchemaData:
    """One schema: its ``schema_type`` (a ``SCHEMA_TYPES`` name), the ``definition`` text,
    its ``properties``; stored with the ``timestamp_ms`` it was registered at. A
    ``deleted`` one is the tombstone ``DELETE .../schema`` leaves (Pulsar's ``isDeleted``)."""

    schema_type: str
    definition: str
    properties: Mapping[str, str] = field(default_factory=dict)
    timestamp_ms: int = 0
    deleted: bool = False

    def same_as(self, other: SchemaData) -> bool:
        """Whether ``other`` is the same schema (type and definition: Pulsar's schema hash;
        properties and timestamps do not count)."""
        return (self.schema_type, self.definition) == (other.schema_type, other.definition)

    def to_json(self) -> str:
        """The stored form (adapters keep it as one string attribute)."""
        return json.dumps({"type": self.schema_type, "data": self.definition,
                           "properties": dict(self.properties), "timestamp": self.timestamp_ms,
                           "deleted": self.deleted}, sort_keys=True)  # fmt: skip

    @classmethod
    def from_json(cls, text: str) -> SchemaData:
        """The schema ``to_json`` wrote."""
        raw = json.loads(text)
        return cls(raw["type"], raw["data"], dict(raw["properties"]), int(raw["timestamp"]),
                   bool(raw["deleted"]))  # fmt: skip


@dataclass(frozen=True)
class SchemaVersion:
    """A stored schema and its version (0, 1, 2... per topic)."""

    version: int
    schema: SchemaData

    def to_body(self) -> dict:
        """Pulsar's GetSchemaResponse: ``{"version", "type", "timestamp", "data",
        "properties"}``."""
        return {"version": self.version, "type": self.schema.schema_type,
                "timestamp": self.schema.timestamp_ms, "data": self.schema.definition,
                "properties": dict(self.schema.properties)}  # fmt: skip


def parse_payload(body: object, timestamp_ms: int) -> SchemaData:
    """A PostSchemaPayload (``{"type": "AVRO", "schema": "<definition>", "properties":
    {...}}``; ``schema`` and ``properties`` may be missing) as the schema registered at
    ``timestamp_ms``. Raises InvalidMessage (400: not an object, unknown fields, wrong
    types, an unknown type), InvalidSchemaData (422: an Avro/JSON definition that is not a
    JSON Avro schema, or one over MAX_DEFINITION_BYTES)."""
    if not isinstance(body, dict):
        raise InvalidMessage('The schema must be an object {"type", "schema", "properties"}')
    unknown = sorted(set(body) - {"type", "schema", "properties"})
    if unknown:
        raise InvalidMessage(f"Unknown schema fields {unknown}: use type, schema, properties")
    kind = body.get("type")
    if kind not in SCHEMA_TYPES:
        raise InvalidMessage(
            f"The schema type must be one of {', '.join(SCHEMA_TYPES)}; got {kind!r}"
        )
    definition = body.get("schema")
    definition = "" if definition is None else definition
    properties = body.get("properties") or {}
    if not isinstance(definition, str):
        raise InvalidMessage("The schema's definition (schema) must be a string")
    if not isinstance(properties, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in properties.items()
    ):
        raise InvalidMessage("The schema's properties must map strings to strings")
    if len(definition.encode()) > MAX_DEFINITION_BYTES:
        raise InvalidSchemaData(f"The definition is over {MAX_DEFINITION_BYTES} bytes")
    if kind in AVRO_BASED:
        try:
            check_definition(json.loads(definition))
        except RecursionError:
            raise InvalidSchemaData(f"A {kind} schema's definition is nested too deeply") from None
        except ValueError as exc:  # JSONDecodeError included
            raise InvalidSchemaData(
                f"A {kind} schema's definition must be an Avro schema in JSON ({exc}); got {definition[:80]!r}"
            ) from None
    return SchemaData(kind, definition, dict(properties), timestamp_ms)
