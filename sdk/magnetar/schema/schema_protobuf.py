"""``pulsar.schema.schema_protobuf``: ``ProtobufNativeSchema``, protobuf messages in their
native binary encoding (the ``protobuf`` extra: ``pip install 'magnetar-client[protobuf]'``).

The definition is Pulsar's ``ProtobufNativeSchemaData`` as JSON, the form Java's
``ProtobufNativeSchema`` reads: ``fileDescriptorSet`` (the base64 of a serialized
``FileDescriptorSet`` holding the message's file and every file it imports),
``rootMessageTypeName`` (the message's full name) and ``rootFileDescriptorName``.
"""

from __future__ import annotations

import base64
from typing import Any

from .schema import Schema, SchemaType

__all__ = ["ProtobufNativeSchema"]

_MISSING_PROTOBUF = ("Protobuf support was not found. Make sure to install Magnetar's client "
                     "with protobuf support: pip3 install 'magnetar-client[protobuf]'")  # fmt: skip


def _descriptor_pb2() -> Any:
    """``google.protobuf.descriptor_pb2``; raises ``ImportError`` naming the extra."""
    try:
        from google.protobuf import descriptor_pb2
    except ImportError as e:  # pragma: no cover - the dev environment has it
        raise ImportError(_MISSING_PROTOBUF) from e
    return descriptor_pb2


def _file_descriptor_set(file: Any, descriptor_pb2: Any) -> Any:
    """A ``FileDescriptorSet`` of ``file`` and its imports, imports first, each once."""
    out = descriptor_pb2.FileDescriptorSet()
    seen: set[str] = set()

    def add(f: Any) -> None:
        if f.name in seen:
            return
        seen.add(f.name)
        for dependency in f.dependencies:
            add(dependency)
        f.CopyToProto(out.file.add())

    add(file)
    return out


def protobuf_native_definition(record_cls: Any) -> dict[str, str]:
    """The ``ProtobufNativeSchemaData`` of a generated message class (a dict)."""
    descriptor = record_cls.DESCRIPTOR
    files = _file_descriptor_set(descriptor.file, _descriptor_pb2())
    return {
        "fileDescriptorSet": base64.b64encode(files.SerializeToString()).decode("ascii"),
        "rootMessageTypeName": descriptor.full_name,
        "rootFileDescriptorName": descriptor.file.name,
    }


class ProtobufNativeSchema(Schema):
    """Payloads are ``record_cls`` protobuf messages, ``SerializeToString()`` bytes.

    Raises:
        ImportError: protobuf is not installed (the ``protobuf`` extra).
        TypeError: ``record_cls`` is not a generated protobuf message class; ``encode`` of
            an object that is not a ``record_cls`` instance.
    """

    def __init__(self, record_cls: Any) -> None:
        _descriptor_pb2()
        from google.protobuf.message import Message as ProtobufMessage

        if not (isinstance(record_cls, type) and issubclass(record_cls, ProtobufMessage)):
            raise TypeError(f"{record_cls!r} is not a protobuf message class "
                            "(a subclass of google.protobuf.message.Message)")  # fmt: skip
        super().__init__(record_cls, SchemaType.PROTOBUF_NATIVE,
                         protobuf_native_definition(record_cls), "PROTOBUF_NATIVE")  # fmt: skip

    def encode(self, obj: Any) -> bytes:
        """The message's protobuf binary encoding."""
        self._validate_object_type(obj)
        return bytes(obj.SerializeToString())

    def decode(self, data: bytes) -> Any:
        """A ``record_cls`` message parsed from ``data``."""
        return self._record_cls.FromString(data)

    def __str__(self) -> str:
        return "ProtobufNativeSchema(" + self._record_cls.DESCRIPTOR.full_name + ")"
