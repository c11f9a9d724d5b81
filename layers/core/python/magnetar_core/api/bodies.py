"""Request bodies → domain values: the parsing the handlers need beyond plain fields, so a
handler imports only the API edge and the engine.

Each function raises the domain's InvalidMessage (400) with the field named when a value is
malformed.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

from magnetar_core.api import http
from magnetar_core.domain.cursor.state import KeySharedOptions
from magnetar_core.domain.dead_letter import DeadLetterPolicy
from magnetar_core.domain.errors import InvalidMessage
from magnetar_core.domain.timers import NackBackoff
from magnetar_core.services.admin import MAX_PARTITIONS
from magnetar_core.services.subscriptions.acks import parse_backoff
from magnetar_wire.routing import HASHING_SCHEMES, JAVA_STRING_HASH


def key_shared_options(body: dict[str, Any]) -> KeySharedOptions | None:
    """The Key_Shared options of a subscribe body (None unless the type is Key_Shared)."""
    if http.field(body, "subscriptionType", str, "Exclusive") not in ("Key_Shared", "KeyShared"):
        return None
    return KeySharedOptions.parse(
        http.field(body, "keySharedMode", str, None),
        http.field(body, "stickyRanges", list, None),
        http.field(body, "allowOutOfOrderDelivery", bool, False),
        http.field(body, "keySharedUseConsistentHashing", bool, False),
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
    count = http.json_body(app)
    if count is None:
        raise InvalidMessage(
            f"The body must be the partition count: an integer from 1 to {MAX_PARTITIONS} "
            "(a non-partitioned topic is created by PUT on the topic's own path)"
        )
    return count


def hashing_scheme(app: APIGatewayHttpResolver) -> str:
    """The ``hashingScheme`` query value: JavaStringHash (default) or Murmur3_32Hash."""
    return http.choice_query(app, "hashingScheme", HASHING_SCHEMES, JAVA_STRING_HASH)
