"""Magnetar SDK: Apache Pulsar's Python client API over Magnetar's HTTP API.

Switch from Pulsar with ``import magnetar as pulsar``; the service URL is the HTTP URL of the
Magnetar API (``http://127.0.0.1:8080`` locally).
"""

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


def __getattr__(name: str) -> object:
    """``pulsar.asyncio`` on first use (PEP 562): importing the event loop machinery costs
    every program and every CLI call ~0.1 s, and most never use it."""
    if name == "asyncio":
        import importlib

        return importlib.import_module(".asyncio", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
