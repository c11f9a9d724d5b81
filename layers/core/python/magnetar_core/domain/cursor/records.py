"""Plain records of a cursor, pure: subscription types, a registered consumer, a delivery.

Every other module of ``domain.cursor`` may import these; this module imports none of them,
so the parts of ``CursorState`` and the state itself never import each other in a circle.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

EXCLUSIVE = "Exclusive"
SHARED = "Shared"
FAILOVER = "Failover"
KEY_SHARED = "Key_Shared"
SUBSCRIPTION_TYPES = (EXCLUSIVE, SHARED, FAILOVER, KEY_SHARED)


@dataclass
class ConsumerInfo:
    """A registered consumer. Times are epoch milliseconds."""

    consumer_id: str
    name: str
    connected_ms: int
    seen_ms: int
    priority: int = 0
    spread: bool = False
    role: str | None = None
    """The role that registered the consumer (None: authentication was off); only it may
    act on the consumer (a consumer id is not a credential)."""
    held_until_ms: int = 0
    """Until when a notification channel's watch holds the lease (``domain.notify``; 0:
    not held): the consumer does not lapse before, however long it is silent."""
    held_by: str | None = None
    """The connection whose watch holds the lease (only its ``$disconnect`` releases it)."""

    def lapsed(self, now_ms: int, lease_ms: int) -> bool:
        """Whether the consumer was silent for more than ``lease_ms`` at ``now_ms`` and no
        watch holds it."""
        return now_ms - self.seen_ms > lease_ms and now_ms > self.held_until_ms

    def to_dict(self) -> dict:
        """The compact JSON of the cursor item (the id is the key it is stored under)."""
        data: dict = {"name": self.name, "since": self.connected_ms, "seen": self.seen_ms}
        if self.priority:
            data["prio"] = self.priority
        if self.spread:
            data["spread"] = True
        if self.role is not None:
            data["role"] = self.role
        if self.held_by is not None:
            data["held"], data["heldBy"] = self.held_until_ms, self.held_by
        return data

    @classmethod
    def from_dict(cls, consumer_id: str, data: Mapping) -> ConsumerInfo:
        """Load what ``to_dict`` wrote."""
        return cls(
            consumer_id,
            data["name"],
            int(data["since"]),
            int(data["seen"]),
            int(data.get("prio", 0)),
            bool(data.get("spread", False)),
            data.get("role"),
            int(data.get("held", 0)),
            data.get("heldBy"),
        )


@dataclass(frozen=True)
class Delivery:
    """One entry handed to a consumer: ``batch_indexes`` None means every message of it."""

    entry_id: int
    redelivery_count: int
    batch_indexes: tuple[int, ...] | None
