"""Policy value objects with Pulsar's validation: what an admin body may set, and nothing else.

Each parses the JSON body Pulsar's admin REST API takes (``from_body``, raising InvalidMessage
naming the field and the rule) and gives back Pulsar's JSON shape (``to_body``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from magnetar_core.domain.errors import InvalidMessage

if TYPE_CHECKING:
    from magnetar_core.domain.quotas import QuotaPolicies

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1


def _fields(body: object, allowed: tuple[str, ...], what: str) -> dict:
    """``body`` as a JSON object holding only ``allowed`` fields; raises InvalidMessage."""
    if not isinstance(body, dict):
        raise InvalidMessage(f"The body must be a JSON object of {what}: {', '.join(allowed)}")
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise InvalidMessage(f"Unknown field(s) {unknown} in {what}; allowed: {list(allowed)}")
    return body


def integer(value: object, name: str, minimum: int, maximum: int, context: str = "") -> int:
    """``value`` checked to be a JSON integer in ``[minimum, maximum]``; raises InvalidMessage
    (its message starts with ``context``)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidMessage(f"{context}'{name}' must be an integer, not {value!r}")
    if not minimum <= value <= maximum:
        raise InvalidMessage(f"{context}'{name}' must be from {minimum} to {maximum}, not {value}")
    return value


def message_ttl_seconds(value: object) -> int:
    """A message TTL in seconds (0: messages never expire), as Pulsar takes it: an integer
    from 0 to 2^31-1. Raises InvalidMessage."""
    return integer(value, "messageTTL", 0, INT32_MAX, "Invalid value for message TTL: ")


@dataclass(frozen=True)
class RetentionPolicies:
    """Pulsar's RetentionPolicies: how long (minutes) and how much (MB) of a topic's
    acknowledged messages to keep. -1 is no limit; 0 and 0 keep nothing (the default)."""

    retention_time_minutes: int = 0
    retention_size_mb: int = 0

    @classmethod
    def from_body(cls, body: object) -> RetentionPolicies:
        """Parse ``{"retentionTimeInMinutes": int, "retentionSizeInMB": int}`` with Pulsar's
        rules: each at least -1 (an absent one is 0), and either both 0 or neither. Raises
        InvalidMessage."""
        time_name, size_name = "retentionTimeInMinutes", "retentionSizeInMB"
        fields = _fields(body, (time_name, size_name), "RetentionPolicies")
        context = "Invalid retention policy: "
        minutes = integer(fields.get(time_name, 0), time_name, -1, INT32_MAX, context)
        size_mb = integer(fields.get(size_name, 0), size_name, -1, INT64_MAX, context)
        if (minutes == 0) != (size_mb == 0):
            raise InvalidMessage(
                f"{context}Setting a single time or size limit to 0 is invalid when one of the "
                "limits has a non-zero value. Use the value of -1 instead of 0 to ignore a "
                "specific limit. To disable retention both limits must be set to 0."
            )
        return cls(minutes, size_mb)

    def to_body(self) -> dict:
        return {
            "retentionTimeInMinutes": self.retention_time_minutes,
            "retentionSizeInMB": self.retention_size_mb,
        }


@dataclass(frozen=True)
class DelayedDeliveryPolicies:
    """Pulsar's DelayedDeliveryPolicies for a namespace.

    ``active``: whether delayed messages wait for their time on Shared and Key_Shared
    subscriptions (False: delivered at once). ``tick_time_ms``: the timer bucket width, ms
    (>= 1). ``max_delivery_delay_ms``: the longest delay a producer may ask for, ms (0: no
    limit).
    """

    active: bool
    tick_time_ms: int
    max_delivery_delay_ms: int = 0

    @classmethod
    def from_body(cls, body: object, default_tick_ms: int) -> DelayedDeliveryPolicies:
        """Parse ``{"active": bool, "tickTime": ms, "maxDeliveryDelayInMillis": ms}``.

        ``tickTime`` defaults to ``default_tick_ms`` and ``maxDeliveryDelayInMillis`` to 0
        when absent; ``active`` is required. Raises InvalidMessage.
        """
        fields = _fields(
            body, ("active", "tickTime", "maxDeliveryDelayInMillis"), "DelayedDeliveryPolicies"
        )
        active = fields.get("active")
        if not isinstance(active, bool):
            raise InvalidMessage(f"'active' must be true or false, not {active!r}")
        tick = fields.get("tickTime")
        tick_ms = default_tick_ms if tick is None else integer(tick, "tickTime", 1, INT64_MAX)
        limit = fields.get("maxDeliveryDelayInMillis")
        max_delay_ms = (
            0 if limit is None else integer(limit, "maxDeliveryDelayInMillis", 0, INT64_MAX)
        )
        return cls(active, tick_ms, max_delay_ms)

    def to_body(self) -> dict:
        return {
            "active": self.active,
            "tickTime": self.tick_time_ms,
            "maxDeliveryDelayInMillis": self.max_delivery_delay_ms,
        }


@dataclass(frozen=True)
class NamespacePolicies:
    """A namespace's policies; None means "not set, use the service default".

    ``version`` counts writes (0: never written by a versioned writer); ``put`` only
    replaces the version it was read at.
    """

    deduplication: bool | None = None
    max_message_size_bytes: int | None = None
    delayed_delivery: DelayedDeliveryPolicies | None = None
    retention: RetentionPolicies | None = None
    message_ttl_seconds: int | None = None
    schema_compatibility_strategy: str | None = None
    allow_auto_update_schema: bool | None = None
    schema_validation_enforced: bool | None = None
    quotas: QuotaPolicies | None = None
    version: int = 0

    def with_changes(self, **changes: Any) -> NamespacePolicies:
        """A copy with the fields named in ``changes`` replaced."""
        return replace(self, **changes)
