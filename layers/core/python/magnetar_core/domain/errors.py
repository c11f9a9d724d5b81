"""Domain errors, named after Pulsar's results, each with the HTTP status it maps to."""

from __future__ import annotations

# The base and InvalidTopicName live with the topic names shared with the SDK (magnetar_wire).
from magnetar_wire.errors import InvalidTopicName as InvalidTopicName
from magnetar_wire.errors import MagnetarError as MagnetarError


def _error(name: str, status: int) -> type[MagnetarError]:
    return type(
        name, (MagnetarError,), {"code": name, "status": status, "__doc__": f"Pulsar's {name}."}
    )


InvalidMessage = _error("InvalidMessage", 400)
ChecksumError = _error("ChecksumError", 400)
CumulativeAcknowledgementNotAllowedError = _error("CumulativeAcknowledgementNotAllowedError", 400)
NotAllowedError = _error("NotAllowedError", 400)
TopicNotFound = _error("TopicNotFound", 404)
SubscriptionNotFound = _error("SubscriptionNotFound", 404)
ConsumerNotFound = _error("ConsumerNotFound", 404)
ConsumerBusy = _error("ConsumerBusy", 409)
ProducerFenced = _error("ProducerFenced", 409)
ProducerBusy = _error("ProducerBusy", 409)
TopicAlreadyExists = _error("TopicAlreadyExists", 409)
TopicBusy = _error("TopicBusy", 409)
TopicTerminated = _error("TopicTerminated", 409)
"""A produce to a terminated topic (Pulsar's TopicTerminatedError): nothing was stored."""
MessageTooBig = _error("MessageTooBig", 413)
TooManyRequests = _error("TooManyRequests", 429)
ServiceUnitNotReady = _error("ServiceUnitNotReady", 503)
# Tenant and namespace administration: pulsar-admin's exception names (NotFoundException,
# ConflictException, PreconditionFailedException) without the suffix, Pulsar's statuses.
NotFound = _error("NotFound", 404)
Conflict = _error("Conflict", 409)
PreconditionFailed = _error("PreconditionFailed", 412)
NotAllowed = _error("NotAllowed", 405)
"""pulsar-admin's NotAllowedException: the operation is not allowed on this kind of topic
(skip on a partitioned topic). Not ``NotAllowedError``, the binary protocol's 400."""
# Schemas (issue 15): Pulsar's IncompatibleSchemaException (409 on the admin API), its 422
# for a definition it cannot parse, its 406 for posting the default BYTES schema.
IncompatibleSchema = _error("IncompatibleSchema", 409)
InvalidSchemaData = _error("InvalidSchemaData", 422)
NotAcceptable = _error("NotAcceptable", 406)
UnsupportedMediaType = _error("UnsupportedMediaType", 415)
"""A JSON route's body sent as another media type (text/xml): JAX-RS's 415, as Pulsar."""


class Throttled(TooManyRequests):  # type: ignore[valid-type,misc]
    """Pulsar's TooManyRequests (429) with ``retry_after_ms``, sent as Retry-After: a rate
    limit (publishRate, subscribeRate) holds the request; nothing was stored."""

    def __init__(self, message: str, retry_after_ms: int = 1000) -> None:
        super().__init__(message)
        self.retry_after_ms = retry_after_ms


class ProducerBlockedQuotaExceededError(MagnetarError):
    """Pulsar's ProducerBlockedQuotaExceededError (429 with Retry-After): the backlog is over
    a producer_request_hold quota; the producer is held (the SDK retries until its send
    timeout). Nothing was stored."""

    code = "ProducerBlockedQuotaExceededError"
    status = 429

    def __init__(self, message: str, retry_after_ms: int = 1000) -> None:
        super().__init__(message)
        self.retry_after_ms = retry_after_ms


class Overloaded(ServiceUnitNotReady):  # type: ignore[valid-type,misc]
    """Pulsar's ServiceUnitNotReady (503) with ``retry_after_ms``, sent as Retry-After: the
    storage behind a partition could not take the write now (commit contention that outlasted
    its attempts); nothing was stored, the same request may be sent again after the wait."""

    def __init__(self, message: str, retry_after_ms: int = 1000) -> None:
        super().__init__(message)
        self.retry_after_ms = retry_after_ms


ProducerBlockedQuotaExceededException = _error("ProducerBlockedQuotaExceededException", 409)
"""The backlog is over a producer_exception quota: the produce fails at once, nothing stored."""


class ConditionFailed(Exception):
    """A conditional write lost: the item changed since it was read (a typed outcome, retried)."""


class StorageFault(MagnetarError):
    """An AWS call failed for a reason that is not the caller's (5xx)."""

    code = "UnknownError"
    status = 500
