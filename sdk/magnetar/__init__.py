"""Magnetar SDK: Apache Pulsar's Python client API over Magnetar's HTTP API.

Switch from Pulsar with ``import magnetar as pulsar``; the service URL is the HTTP URL of the
Magnetar API (``http://127.0.0.1:8080`` locally).

Every public name loads on first use (PEP 562's module ``__getattr__``): ``import magnetar``
costs a program (and every ``magnetar`` CLI call) only this module, not the whole SDK, its HTTP
stack (requests, urllib3) or its codecs. ``from magnetar import Client``, ``magnetar.Client``,
``magnetar.schema``, ``magnetar.asyncio`` and submodules such as ``magnetar.client`` work as
when everything was imported eagerly, and are the same objects (pickling and ``isinstance`` see
the defining modules, as before). The ``TYPE_CHECKING`` imports give type checkers and IDEs the
same names; tests/unit/test_sdk_lazy_import.py checks that both lists agree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from magnetar_wire.lazy import lazy_names

if TYPE_CHECKING:
    from . import _pulsar as _pulsar  # pulsar._pulsar: the C extension's names
    from . import exceptions, schema
    from ._encryption.key_reader import CryptoKeyReader
    from ._enums import (
        BatchingType,
        CompressionType,
        ConsumerCryptoFailureAction,
        ConsumerType,
        HashingScheme,
        InitialPosition,
        KeySharedMode,
        LoggerLevel,
        PartitionsRoutingMode,
        ProducerAccessMode,
        RegexSubscriptionMode,
        Result,
    )
    from ._logger import ConsoleLogger, FileLogger
    from ._policies import (
        ConsumerBatchReceivePolicy,
        ConsumerDeadLetterPolicy,
        ConsumerKeySharedPolicy,
        MultiplierRedeliveryBackoff,
    )
    from ._transport.failover import AutoClusterFailover
    from ._transport.service_info import ServiceInfo, ServiceInfoProvider
    from .authentication import (
        Authentication,
        AuthenticationAthenz,
        AuthenticationBasic,
        AuthenticationOauth2,
        AuthenticationTLS,
        AuthenticationToken,
    )
    from .authentication_aws import AuthenticationAws
    from .client import Client
    from .consumer import Consumer
    from .encryption import EncryptionContext, EncryptionKey
    from .exceptions import (  # noqa: A004 - LookupError is pulsar-client's name
        AlreadyClosed,
        AuthenticationError,
        AuthorizationError,
        BrokerMetadataError,
        BrokerPersistenceError,
        ChecksumError,
        ConnectError,
        ConsumerAssignError,
        ConsumerBusy,
        ConsumerNotFound,
        ConsumerNotInitialized,
        CryptoError,
        CumulativeAcknowledgementNotAllowedError,
        Disconnected,
        ErrorGettingAuthenticationData,
        IncompatibleSchema,
        Interrupted,
        InvalidConfiguration,
        InvalidMessage,
        InvalidTopicName,
        InvalidTxnStatusError,
        InvalidUrl,
        LookupError,
        MemoryBufferIsFull,
        MessageTooBig,
        NotAllowedError,
        NotConnected,
        OperationNotSupported,
        ProducerBlockedQuotaExceededError,
        ProducerBlockedQuotaExceededException,
        ProducerBusy,
        ProducerFenced,
        ProducerNotInitialized,
        ProducerQueueIsFull,
        PulsarException,
        ReadError,
        ServiceUnitNotReady,
        SubscriptionNotFound,
        Timeout,
        TooManyLookupRequestException,
        TooManyRequests,
        TopicAlreadyExists,
        TopicBusy,
        TopicNotFound,
        TopicTerminated,
        TransactionConflict,
        TransactionCoordinatorNotFoundError,
        TransactionNotFound,
        UnknownError,
        UnsupportedVersionError,
    )
    from .functions import Context, Function, IdentitySerDe, PickleSerDe, SerDe
    from .message import Message, MessageId
    from .producer import Producer
    from .reader import Reader
    from .schema import BytesSchema, StringSchema
    from .table_view import TableView

__version__ = "0.1.0"

__all__ = [
    "Authentication",
    "AutoClusterFailover",
    "AuthenticationAthenz",
    "AuthenticationAws",
    "AuthenticationBasic",
    "AuthenticationOauth2",
    "AuthenticationTLS",
    "AuthenticationToken",
    "BatchingType",
    "BytesSchema",
    "Client",
    "CompressionType",
    "ConsoleLogger",
    "ConsumerCryptoFailureAction",
    "CryptoKeyReader",
    "EncryptionContext",
    "EncryptionKey",
    "Consumer",
    "Context",
    "Function",
    "SerDe",
    "IdentitySerDe",
    "PickleSerDe",
    "Reader",
    "ConsumerBatchReceivePolicy",
    "ConsumerDeadLetterPolicy",
    "ConsumerKeySharedPolicy",
    "ConsumerType",
    "FileLogger",
    "HashingScheme",
    "InitialPosition",
    "KeySharedMode",
    "LoggerLevel",
    "Message",
    "MessageId",
    "MultiplierRedeliveryBackoff",
    "PartitionsRoutingMode",
    "Producer",
    "ProducerAccessMode",
    "RegexSubscriptionMode",
    "Result",
    "ServiceInfo",
    "ServiceInfoProvider",
    "StringSchema",
    "TableView",
    "asyncio",
    "exceptions",
    "schema",
    "PulsarException",
    "UnknownError",
    "InvalidConfiguration",
    "Timeout",
    "LookupError",
    "ConnectError",
    "ReadError",
    "AuthenticationError",
    "AuthorizationError",
    "ErrorGettingAuthenticationData",
    "BrokerMetadataError",
    "BrokerPersistenceError",
    "ChecksumError",
    "ConsumerBusy",
    "NotConnected",
    "AlreadyClosed",
    "InvalidMessage",
    "ConsumerNotInitialized",
    "ProducerNotInitialized",
    "ProducerBusy",
    "TooManyLookupRequestException",
    "InvalidTopicName",
    "InvalidUrl",
    "ServiceUnitNotReady",
    "OperationNotSupported",
    "ProducerBlockedQuotaExceededError",
    "ProducerBlockedQuotaExceededException",
    "ProducerQueueIsFull",
    "MessageTooBig",
    "TopicNotFound",
    "SubscriptionNotFound",
    "ConsumerNotFound",
    "UnsupportedVersionError",
    "TopicTerminated",
    "CryptoError",
    "IncompatibleSchema",
    "ConsumerAssignError",
    "CumulativeAcknowledgementNotAllowedError",
    "TransactionCoordinatorNotFoundError",
    "InvalidTxnStatusError",
    "NotAllowedError",
    "TransactionConflict",
    "TransactionNotFound",
    "ProducerFenced",
    "MemoryBufferIsFull",
    "Interrupted",
    "Disconnected",
    "TopicAlreadyExists",
    "TopicBusy",
    "TooManyRequests",
]

# defining module (relative to this package) -> the public names it gives
# fmt: off
_LAZY_NAMES: dict[str, tuple[str, ...]] = {
    "._encryption.key_reader": ("CryptoKeyReader",),
    "._enums": (
        "BatchingType", "CompressionType", "ConsumerCryptoFailureAction", "ConsumerType",
        "HashingScheme", "InitialPosition", "KeySharedMode", "LoggerLevel",
        "PartitionsRoutingMode", "ProducerAccessMode", "RegexSubscriptionMode", "Result",
    ),
    "._logger": ("ConsoleLogger", "FileLogger"),
    "._policies": (
        "ConsumerBatchReceivePolicy", "ConsumerDeadLetterPolicy", "ConsumerKeySharedPolicy",
        "MultiplierRedeliveryBackoff",
    ),
    "._transport.failover": ("AutoClusterFailover",),
    "._transport.service_info": ("ServiceInfo", "ServiceInfoProvider"),
    ".authentication": (
        "Authentication", "AuthenticationAthenz", "AuthenticationBasic", "AuthenticationOauth2",
        "AuthenticationTLS", "AuthenticationToken",
    ),
    ".authentication_aws": ("AuthenticationAws",),
    ".client": ("Client",),
    ".consumer": ("Consumer",),
    ".encryption": ("EncryptionContext", "EncryptionKey"),
    ".exceptions": (
        "AlreadyClosed", "AuthenticationError", "AuthorizationError", "BrokerMetadataError",
        "BrokerPersistenceError", "ChecksumError", "ConnectError", "ConsumerAssignError",
        "ConsumerBusy", "ConsumerNotFound", "ConsumerNotInitialized", "CryptoError",
        "CumulativeAcknowledgementNotAllowedError", "Disconnected",
        "ErrorGettingAuthenticationData", "IncompatibleSchema", "Interrupted",
        "InvalidConfiguration", "InvalidMessage", "InvalidTopicName", "InvalidTxnStatusError",
        "InvalidUrl", "LookupError", "MemoryBufferIsFull", "MessageTooBig", "NotAllowedError",
        "NotConnected", "OperationNotSupported", "ProducerBlockedQuotaExceededError",
        "ProducerBlockedQuotaExceededException", "ProducerBusy", "ProducerFenced",
        "ProducerNotInitialized", "ProducerQueueIsFull", "PulsarException", "ReadError",
        "ServiceUnitNotReady", "SubscriptionNotFound", "Timeout", "TooManyLookupRequestException",
        "TooManyRequests", "TopicAlreadyExists", "TopicBusy", "TopicNotFound", "TopicTerminated",
        "TransactionConflict", "TransactionCoordinatorNotFoundError", "TransactionNotFound",
        "UnknownError", "UnsupportedVersionError",
    ),
    ".functions": ("Context", "Function", "IdentitySerDe", "PickleSerDe", "SerDe"),
    ".message": ("Message", "MessageId"),
    ".producer": ("Producer",),
    ".reader": ("Reader",),
    ".schema": ("BytesSchema", "StringSchema"),
    ".table_view": ("TableView",),
}
# fmt: on
_LAZY: dict[str, str] = {name: module for module, names in _LAZY_NAMES.items() for name in names}


__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
