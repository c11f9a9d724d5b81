"""``pulsar.schema.schema_avro``: ``AvroSchema``, Avro binary payloads through fastavro
(the ``avro`` extra: ``pip install 'magnetar-client[avro]'``).

``AvroSchema(RecordCls)`` encodes record instances with the record's Avro definition;
``AvroSchema(None, schema_definition={...})`` encodes and decodes plain dicts with a
definition given as a dict. The payload is Avro's schemaless binary encoding, the bytes
pulsar-client writes. A received message is read with its writer's schema (the version it
names, fetched once per consumer) resolved to this one, as pulsar-client does: a consumer of
an older record reads what a producer of an evolved one wrote (fields added with defaults,
``int`` promoted to ``long``/``float``/``double``, the record renamed at the top level).
"""

from __future__ import annotations

import enum
import io
import json
from typing import Any

from .definition import Record
from .schema import Schema, SchemaInfo, SchemaType

__all__ = ["AvroSchema"]

_MISSING_AVRO = ("Avro library support was not found. Make sure to install Magnetar's client "
                 "with Avro support: pip3 install 'magnetar-client[avro]'")  # fmt: skip


def _fastavro() -> Any:
    """The fastavro module; raises ``ImportError`` naming the extra when it is missing."""
    try:
        import fastavro
    except ImportError as e:  # pragma: no cover - the dev environment has it
        raise ImportError(_MISSING_AVRO) from e
    return fastavro


class AvroSchema(Schema):
    """Avro binary payloads.

    Raises:
        AssertionError: both ``record_cls`` and ``schema_definition`` are ``None``.
        ImportError: fastavro is not installed (the ``avro`` extra).
        TypeError: ``encode`` of an object that is not a ``record_cls`` instance.
        ValueError: ``encode`` of a non-dict with an explicit ``schema_definition``.
    """

    def __init__(self, record_cls: Any, schema_definition: dict[str, Any] | None = None) -> None:
        if record_cls is None and schema_definition is None:
            raise AssertionError(
                "The param record_cls and schema_definition shouldn't be both None."
            )
        fastavro = _fastavro()
        self._schema = record_cls.schema() if record_cls is not None else schema_definition
        self._parsed = fastavro.parse_schema(self._schema)
        self._writers: dict[str, Any] = {}  # a writer's definition (text) -> parsed, renamed
        super().__init__(record_cls, SchemaType.AVRO, self._schema, "AVRO")

    def _get_serialized_value(self, x: Any) -> Any:
        if isinstance(x, enum.Enum):
            return x.name
        if isinstance(x, Record):
            return self.encode_dict(x.__dict__)
        if isinstance(x, list):
            return [self._get_serialized_value(item) for item in x]
        if isinstance(x, dict):
            return self.encode_dict(x)
        return x

    def encode_dict(self, d: dict[str, Any]) -> dict[str, Any]:
        """``d`` with enums as their names and nested records as dicts."""
        return {k: self._get_serialized_value(v) for k, v in d.items()}

    def encode(self, obj: Any) -> bytes:
        """Avro binary of a record instance (or of a dict with ``schema_definition``)."""
        m = obj
        if self._record_cls is not None:
            self._validate_object_type(obj)
            m = self.encode_dict(obj.__dict__)
        elif not isinstance(obj, dict):
            raise ValueError("If using the custom schema, the record data should be dict type.")
        buffer = io.BytesIO()
        _fastavro().schemaless_writer(buffer, self._parsed, m)
        return buffer.getvalue()

    def decode(self, data: bytes) -> Any:
        """A ``record_cls`` instance (or a dict with ``schema_definition``)."""
        d = _fastavro().schemaless_reader(io.BytesIO(data), self._parsed)
        return self._record_cls(**d) if self._record_cls is not None else d

    def decode_message(self, msg: Any) -> Any:
        """A received message's value, read with its writer's schema when it has one (else
        as ``decode``)."""
        writer = getattr(msg, "_writer_schema", None)
        if not isinstance(writer, SchemaInfo) or writer.schema_type() != SchemaType.AVRO:
            return self.decode(msg.data())
        parsed = self._writers.get(writer.schema())
        if parsed is None:
            definition = json.loads(writer.schema())
            if isinstance(definition, dict) and isinstance(self._schema, dict):
                # Avro's resolution never compares the top-level record's name (Pulsar's
                # compatibility check neither); fastavro does: give it the reader's
                definition = {**definition, "name": self._schema.get("name")}
                definition.pop("namespace", None)
                if "namespace" in self._schema:
                    definition["namespace"] = self._schema["namespace"]
            parsed = self._writers[writer.schema()] = _fastavro().parse_schema(definition)
        d = _fastavro().schemaless_reader(io.BytesIO(msg.data()), parsed, self._parsed)
        return self._record_cls(**d) if self._record_cls is not None else d
