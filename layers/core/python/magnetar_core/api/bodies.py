"""Request bodies → domain values: the parsing the handlers need beyond plain fields, so a
handler imports only the API edge and the engine.

Each function raises the domain's InvalidMessage (400) with the field named when a value is
malformed.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

from magnetar_core.api import request
from magnetar_core.api.limits import INT64_MAX, INT64_MIN
from magnetar_core.domain.cursor.state import KeySharedOptions
from magnetar_core.domain.dead_letter import DeadLetterPolicy
from magnetar_core.domain.errors import InvalidMessage
from magnetar_core.domain.preconditions import Precondition
from magnetar_core.domain.timers import NackBackoff
from magnetar_core.services.admin import MAX_PARTITIONS
from magnetar_core.services.subscriptions.acks import parse_backoff
from magnetar_core.services.subscriptions.seeking import EARLIEST, LATEST
from magnetar_wire.routing import HASHING_SCHEMES, JAVA_STRING_HASH


def key_shared_options(body: dict[str, Any]) -> KeySharedOptions | None:
    """The Key_Shared options of a subscribe body (None unless the type is Key_Shared)."""
    if request.field(body, "subscriptionType", str, "Exclusive") not in ("Key_Shared", "KeyShared"):
        return None
    return KeySharedOptions.parse(
        request.field(body, "keySharedMode", str, None),
        request.field(body, "stickyRanges", list, None),
        request.field(body, "allowOutOfOrderDelivery", bool, False),
        request.field(body, "keySharedUseConsistentHashing", bool, False),
    )


def dead_letter_policy(body: dict[str, Any]) -> DeadLetterPolicy | None:
    """The subscribe body's ``deadLetterPolicy`` (None when absent)."""
    return DeadLetterPolicy.parse(body.get("deadLetterPolicy"))


def nack_backoff(body: dict[str, Any]) -> NackBackoff | None:
    """The nack body's ``backoff`` {minDelayMs, maxDelayMs, multiplier} (None when absent)."""
    return parse_backoff(body.get("backoff"))


def partition_count(app: APIGatewayHttpResolver) -> Any:
    """The create-partitioned-topic body: the partition count, which the admin service checks
    (1..MAX_PARTITIONS). Raises InvalidMessage when there is none (no body, or ``null``),
    which would otherwise create a non-partitioned topic (found by tests/fuzz)."""
    count = request.json_body(app)
    if count is None:
        raise InvalidMessage(
            f"The body must be the partition count: an integer from 1 to {MAX_PARTITIONS} "
            "(a non-partitioned topic is created by PUT on the topic's own path)"
        )
    return count


def hashing_scheme(app: APIGatewayHttpResolver) -> str:
    """The ``hashingScheme`` query value: JavaStringHash (default) or Murmur3_32Hash."""
    return request.choice_query(app, "hashingScheme", HASHING_SCHEMES, JAVA_STRING_HASH)


def path_int(value: str, name: str) -> int:
    """A path segment that must be an integer (a Java long), as ``skip/{numMessages}``;
    raises InvalidMessage naming Pulsar's parameter."""
    try:
        number = int(value)
    except ValueError:
        raise InvalidMessage(f"'{name}' must be an integer, not {value[:64]!r}") from None
    if not INT64_MIN <= number <= INT64_MAX:
        raise InvalidMessage(f"'{name}' must be an integer from {INT64_MIN} to {INT64_MAX}")
    return number


def message_id(body: Any, default: str | None = None) -> tuple[str, bool]:
    """A Pulsar message id body (``ResetCursorData``/``MessageIdImpl``: ``ledgerId``,
    ``entryId``, ``partitionIndex``, ``batchIndex``, ``isExcluded``) as ``(text id,
    inclusive)``; MessageId.earliest (-1:-1) is ``earliest``, MessageId.latest
    (Long.MAX_VALUE:Long.MAX_VALUE) ``latest``. ``body`` None gives ``default`` (inclusive)
    when there is one. Raises InvalidMessage naming the field."""
    if body is None and default is not None:
        return default, True
    if not isinstance(body, dict):
        raise InvalidMessage(
            'The body must be a message id: {"ledgerId": 1, "entryId": 7, '
            '"partitionIndex": -1, "batchIndex": -1}'
        )
    ledger, entry = (
        request.field(body, "ledgerId", int, None),
        request.field(body, "entryId", int, None),
    )
    if ledger is None or entry is None:
        raise InvalidMessage("A message id needs the fields 'ledgerId' and 'entryId'")
    partition = request.field(body, "partitionIndex", int, -1)
    batch = request.field(body, "batchIndex", int, -1)
    inclusive = not request.field(body, "isExcluded", bool, False)
    if (ledger, entry) == (-1, -1):
        return EARLIEST, inclusive
    if (ledger, entry) == (INT64_MAX, INT64_MAX):
        return LATEST, inclusive
    return f"{ledger}:{entry}:{partition}:{batch}", inclusive


def precondition(app: APIGatewayHttpResolver) -> Precondition:
    """The write's ``If-None-Match: *`` / ``If-Match: *`` (InvalidMessage for another value)."""
    headers = app.current_event.headers
    return Precondition.of_headers(headers.get("if-none-match"), headers.get("if-match"))
