"""Policy value objects with Pulsar's validation: what an admin body may set, and nothing else.

Each parses the JSON body Pulsar's admin REST API takes (``from_body``, raising InvalidMessage
naming the field and the rule) and gives back Pulsar's JSON shape (``to_body``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from magnetar_core.domain.errors import InvalidMessage
from magnetar_core.domain.quotas import QuotaPolicies
from magnetar_core.domain.retention import (
    INT64_MAX,
    RetentionPolicies,
    integer,
    message_ttl_seconds,
    only_fields,
)

__all__ = [
    "DelayedDeliveryPolicies",
    "NamespacePolicies",
    "RetentionPolicies",
    "integer",
    "message_ttl_seconds",
]


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
        fields = only_fields(
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
