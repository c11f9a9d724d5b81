"""``pulsar._pulsar``: the names ordinary programs take from pulsar-client's C extension.

pulsar-client re-exports its enums from the extension module ``_pulsar`` and programs
sometimes use them from there (``pulsar._pulsar.ConsumerType.Shared``,
``isinstance(x, _pulsar.MessageId)``). With ``import magnetar as pulsar`` these resolve to
the same objects as ``pulsar.<name>``. The extension's configuration builders
(``ClientConfiguration``, ``ProducerConfiguration``, ``ConsumerConfiguration``, ...) are
not here: pulsar-client's Python API takes keyword arguments, never those objects.
"""

from __future__ import annotations

from ._enums import (
    BatchingType,
    CompressionType,
    ConsumerCryptoFailureAction,
    ConsumerType,
    InitialPosition,
    KeySharedMode,
    LoggerLevel,
    PartitionsRoutingMode,
    ProducerAccessMode,
    RegexSubscriptionMode,
    Result,
)
from .message import Message, MessageId
from .schema.schema import SchemaInfo, SchemaType

__all__ = [
    "BatchingType",
    "CompressionType",
    "ConsumerCryptoFailureAction",
    "ConsumerType",
    "InitialPosition",
    "KeySharedMode",
    "LoggerLevel",
    "Message",
    "MessageId",
    "PartitionsRoutingMode",
    "ProducerAccessMode",
    "RegexSubscriptionMode",
    "Result",
    "SchemaInfo",
    "SchemaType",
]
