"""Retention and the JSON value rules every policy object shares: Pulsar's
RetentionPolicies, the message TTL, integer bounds and the check that a body holds only known
fields. ``policies`` (a namespace's policies) and ``quotas`` (backlog quotas and rate limits)
both build on it."""

from __future__ import annotations

from dataclasses import dataclass

from magnetar_core.domain.errors import InvalidMessage

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1


def only_fields(body: object, allowed: tuple[str, ...], what: str) -> dict:
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
        fields = only_fields(body, (time_name, size_name), "RetentionPolicies")
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
