"""Exceptions: ``PulsarException`` and one subclass per ``Result``, named as in pulsar-client.

``exception_for(name, message)`` maps a server error name (``{"error": name}``) to an instance;
unknown names become ``UnknownError``.
"""

from __future__ import annotations

from ._enums import Result

__all__ = [
    "PulsarException",
    "exception_class",
    "exception_for",
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


class PulsarException(Exception):  # noqa: N818 - pulsar-client's name
    """Base class of every Magnetar error; ``result()`` gives the matching ``Result``."""

    _result = Result.UnknownError
    retry_after: float | None = None
    """Seconds the service asked to wait before sending the request again (its
    ``retryAfterMs`` or Retry-After on a 429 / 503), None when it did not say."""

    def result(self) -> Result:
        """The ``Result`` member this exception stands for."""
        return self._result


class UnknownError(PulsarException):
    _result = Result.UnknownError


class InvalidConfiguration(PulsarException):
    _result = Result.InvalidConfiguration


class Timeout(PulsarException):
    _result = Result.Timeout


class LookupError(PulsarException):
    _result = Result.LookupError


class ConnectError(PulsarException):
    _result = Result.ConnectError


class ReadError(PulsarException):
    _result = Result.ReadError


class AuthenticationError(PulsarException):
    _result = Result.AuthenticationError


class AuthorizationError(PulsarException):
    _result = Result.AuthorizationError


class ErrorGettingAuthenticationData(PulsarException):
    _result = Result.ErrorGettingAuthenticationData


class BrokerMetadataError(PulsarException):
    _result = Result.BrokerMetadataError


class BrokerPersistenceError(PulsarException):
    _result = Result.BrokerPersistenceError


class ChecksumError(PulsarException):
    _result = Result.ChecksumError


class ConsumerBusy(PulsarException):
    _result = Result.ConsumerBusy


class NotConnected(PulsarException):
    _result = Result.NotConnected


class AlreadyClosed(PulsarException):
    _result = Result.AlreadyClosed


class InvalidMessage(PulsarException):
    _result = Result.InvalidMessage


class ConsumerNotInitialized(PulsarException):
    _result = Result.ConsumerNotInitialized


class ProducerNotInitialized(PulsarException):
    _result = Result.ProducerNotInitialized


class ProducerBusy(PulsarException):
    _result = Result.ProducerBusy


class TooManyLookupRequestException(PulsarException):
    _result = Result.TooManyLookupRequestException


class InvalidTopicName(PulsarException):
    _result = Result.InvalidTopicName


class InvalidUrl(PulsarException):
    _result = Result.InvalidUrl


class ServiceUnitNotReady(PulsarException):
    _result = Result.ServiceUnitNotReady


class OperationNotSupported(PulsarException):
    _result = Result.OperationNotSupported


class ProducerBlockedQuotaExceededError(PulsarException):
    _result = Result.ProducerBlockedQuotaExceededError


class ProducerBlockedQuotaExceededException(PulsarException):
    _result = Result.ProducerBlockedQuotaExceededException


class ProducerQueueIsFull(PulsarException):
    _result = Result.ProducerQueueIsFull


class MessageTooBig(PulsarException):
    _result = Result.MessageTooBig


class TopicNotFound(PulsarException):
    _result = Result.TopicNotFound


class SubscriptionNotFound(PulsarException):
    _result = Result.SubscriptionNotFound


class ConsumerNotFound(PulsarException):
    _result = Result.ConsumerNotFound


class UnsupportedVersionError(PulsarException):
    _result = Result.UnsupportedVersionError


class TopicTerminated(PulsarException):
    _result = Result.TopicTerminated


class CryptoError(PulsarException):
    _result = Result.CryptoError


class IncompatibleSchema(PulsarException):
    _result = Result.IncompatibleSchema


class ConsumerAssignError(PulsarException):
    _result = Result.ConsumerAssignError


class CumulativeAcknowledgementNotAllowedError(PulsarException):
    _result = Result.CumulativeAcknowledgementNotAllowedError


class TransactionCoordinatorNotFoundError(PulsarException):
    _result = Result.TransactionCoordinatorNotFoundError


class InvalidTxnStatusError(PulsarException):
    _result = Result.InvalidTxnStatusError


class NotAllowedError(PulsarException):
    _result = Result.NotAllowedError


class TransactionConflict(PulsarException):
    _result = Result.TransactionConflict


class TransactionNotFound(PulsarException):
    _result = Result.TransactionNotFound


class ProducerFenced(PulsarException):
    _result = Result.ProducerFenced


class MemoryBufferIsFull(PulsarException):
    _result = Result.MemoryBufferIsFull


class Interrupted(PulsarException):
    _result = Result.Interrupted


class Disconnected(PulsarException):
    _result = Result.Disconnected


class TopicAlreadyExists(PulsarException):
    _result = Result.TopicAlreadyExists


class TopicBusy(PulsarException):
    _result = Result.TopicBusy


class TooManyRequests(PulsarException):
    _result = Result.TooManyRequests


_BY_NAME: dict[str, type[PulsarException]] = {
    cls._result.name: cls for cls in PulsarException.__subclasses__()
}


def exception_class(result: Result) -> type[PulsarException]:
    """The exception class of ``result`` (``UnknownError`` for ``Ok`` or unmapped members)."""
    return _BY_NAME.get(result.name, UnknownError)


def exception_for(name: object, message: str, retry_after_ms: object = None) -> PulsarException:
    """Build the exception named ``name`` (a server ``error`` field) with ``message``;
    ``retry_after_ms`` (the server's ``retryAfterMs``, when a number) sets ``retry_after``."""
    cls = _BY_NAME.get(name, UnknownError) if isinstance(name, str) else UnknownError
    if cls is UnknownError and name not in (None, "UnknownError"):
        message = f"{name}: {message}"
    error = cls(message)
    if isinstance(retry_after_ms, int | float) and not isinstance(retry_after_ms, bool):
        error.retry_after = max(0.0, float(retry_after_ms) / 1000)
    return error
