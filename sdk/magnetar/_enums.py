"""Enums with the names and numbers pulsar-client uses (``pulsar.ConsumerType`` and friends)."""

from __future__ import annotations

import enum

__all__ = [
    "BatchingType",
    "CompressionType",
    "ConsumerCryptoFailureAction",
    "ConsumerType",
    "HashingScheme",
    "InitialPosition",
    "KeySharedMode",
    "LoggerLevel",
    "PartitionsRoutingMode",
    "ProducerAccessMode",
    "RegexSubscriptionMode",
    "Result",
]


class ConsumerType(enum.IntEnum):
    """Subscription type of a consumer."""

    Exclusive = 0
    Shared = 1
    Failover = 2
    KeyShared = 3


class CompressionType(enum.IntEnum):
    """Payload compression of a producer (numbers are the entry format's codec ids)."""

    NONE = 0
    LZ4 = 1
    ZLib = 2
    ZSTD = 3
    SNAPPY = 4


class InitialPosition(enum.IntEnum):
    """Where a new subscription's cursor starts."""

    Latest = 0
    Earliest = 1


class PartitionsRoutingMode(enum.IntEnum):
    """How a producer picks the partition of a message without a key."""

    UseSinglePartition = 0
    RoundRobinDistribution = 1
    CustomPartition = 2


class HashingScheme(enum.IntEnum):
    """How a producer hashes a message key to a partition (a Magnetar extra: pulsar-client has
    no ``hashing_scheme`` option; the numbers are the C++ client's, which also has
    ``BoostHash`` = 1, platform-dependent and so not offered). The default is
    ``JavaStringHash``, as in the Java client; use ``Murmur3_32Hash`` when producers in other
    languages must agree on partitions."""

    Murmur3_32Hash = 0
    JavaStringHash = 2


class BatchingType(enum.IntEnum):
    """How a batching producer groups messages into batches."""

    Default = 0
    KeyBased = 1


class ProducerAccessMode(enum.IntEnum):
    """Whether a producer shares its topic with other producers."""

    Shared = 0
    Exclusive = 1
    WaitForExclusive = 2
    ExclusiveWithFencing = 3


class KeySharedMode(enum.IntEnum):
    """Hash-range assignment of a Key_Shared consumer."""

    AutoSplit = 0
    Sticky = 1


class RegexSubscriptionMode(enum.IntEnum):
    """Which topics a regex subscription matches."""

    PersistentOnly = 0
    NonPersistentOnly = 1
    AllTopics = 2


class ConsumerCryptoFailureAction(enum.IntEnum):
    """What a consumer or reader does with a message it cannot decrypt (C++ client's
    numbers): FAIL leaves it undelivered, DISCARD acknowledges it, CONSUME delivers it
    still encrypted (see ``magnetar._consumer.encrypted``)."""

    FAIL = 0
    DISCARD = 1
    CONSUME = 2


class LoggerLevel(enum.IntEnum):
    """Log level of ``ConsoleLogger`` / ``FileLogger``."""

    Debug = 0
    Info = 1
    Warn = 2
    Error = 3


class Result(enum.IntEnum):
    """Outcome of an operation, as passed to ``send_async`` callbacks.

    Numbers follow the C++ client's ``pulsar::Result``; the last three are Magnetar's HTTP
    errors that have no Pulsar result.
    """

    Ok = 0
    UnknownError = 1
    InvalidConfiguration = 2
    Timeout = 3
    LookupError = 4
    ConnectError = 5
    ReadError = 6
    AuthenticationError = 7
    AuthorizationError = 8
    ErrorGettingAuthenticationData = 9
    BrokerMetadataError = 10
    BrokerPersistenceError = 11
    ChecksumError = 12
    ConsumerBusy = 13
    NotConnected = 14
    AlreadyClosed = 15
    InvalidMessage = 16
    ConsumerNotInitialized = 17
    ProducerNotInitialized = 18
    ProducerBusy = 19
    TooManyLookupRequestException = 20
    InvalidTopicName = 21
    InvalidUrl = 22
    ServiceUnitNotReady = 23
    OperationNotSupported = 24
    ProducerBlockedQuotaExceededError = 25
    ProducerBlockedQuotaExceededException = 26
    ProducerQueueIsFull = 27
    MessageTooBig = 28
    TopicNotFound = 29
    SubscriptionNotFound = 30
    ConsumerNotFound = 31
    UnsupportedVersionError = 32
    TopicTerminated = 33
    CryptoError = 34
    IncompatibleSchema = 35
    ConsumerAssignError = 36
    CumulativeAcknowledgementNotAllowedError = 37
    TransactionCoordinatorNotFoundError = 38
    InvalidTxnStatusError = 39
    NotAllowedError = 40
    TransactionConflict = 41
    TransactionNotFound = 42
    ProducerFenced = 43
    MemoryBufferIsFull = 44
    Interrupted = 45
    Disconnected = 46
    TopicAlreadyExists = 100
    TopicBusy = 101
    TooManyRequests = 102
