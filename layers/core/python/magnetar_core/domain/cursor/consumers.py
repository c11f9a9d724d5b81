"""Consumers of a cursor and what each holds, pure: the registry and the leases.

``consumers`` are the registered consumers by id; ``leases`` says which entries are in
flight to which consumer (delivered, neither acknowledged nor sent back). A consumer with
nothing in flight has no lease at all (no empty range sets are kept).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from magnetar_core.domain.cursor.records import EXCLUSIVE, ConsumerInfo
from magnetar_core.domain.errors import ConsumerBusy
from magnetar_core.domain.rangeset import RangeSet


@dataclass
class ConsumerRoster:
    """Registered consumers and their leases (entries in flight), by consumer id."""

    consumers: dict[str, ConsumerInfo] = field(default_factory=dict)
    leases: dict[str, RangeSet] = field(default_factory=dict)

    # -- registry --------------------------------------------------------------------------

    def admit(self, sub_type: str, current_type: str, subscription: str) -> None:
        """Check that a consumer of ``sub_type`` may join a subscription of
        ``current_type``; raises ConsumerBusy when consumers of another type are connected,
        or any consumer to an Exclusive one."""
        if self.consumers and sub_type != current_type:
            raise ConsumerBusy(
                f"Subscription '{subscription}' is {current_type} and has consumers; "
                f"a consumer of type {sub_type} cannot join it"
            )
        if self.consumers and sub_type == EXCLUSIVE:
            raise ConsumerBusy(
                f"Exclusive consumer is already connected to subscription '{subscription}'"
            )

    def register(self, info: ConsumerInfo) -> None:
        """Add (or replace) a consumer."""
        self.consumers[info.consumer_id] = info

    def unregister(self, consumer_id: str) -> None:
        """Forget a consumer (its lease stays: the caller sends it back)."""
        self.consumers.pop(consumer_id, None)

    def lapsed(self, now_ms: int, lease_ms: int) -> list[str]:
        """Ids of consumers not seen for more than ``lease_ms`` at ``now_ms`` and not held by
        a notification channel's watch (``ConsumerInfo.lapsed``)."""
        return [cid for cid, info in self.consumers.items() if info.lapsed(now_ms, lease_ms)]

    def touch(self, consumer_id: str, now_ms: int, every_ms: int) -> bool:
        """Record that a consumer is alive, at most once every ``every_ms``; True if recorded."""
        info = self.consumers.get(consumer_id)
        if info is None or now_ms - info.seen_ms < every_ms:
            return False
        info.seen_ms = now_ms
        return True

    # -- leases ----------------------------------------------------------------------------

    def lease_of(self, consumer_id: str) -> RangeSet:
        """The consumer's lease, created empty when it has none (``drop_empty`` later)."""
        return self.leases.setdefault(consumer_id, RangeSet())

    def holds(self, entry_id: int) -> bool:
        """Whether some consumer has the entry in flight."""
        return any(entry_id in lease for lease in self.leases.values())

    def in_flight(self) -> RangeSet:
        """Every entry leased to any consumer."""
        union = RangeSet()
        for lease in self.leases.values():
            for start, end in lease.ranges():
                union.add_range(start, end)
        return union

    def unacked_entries(self, consumer_id: str | None = None) -> int:
        """Entries in flight (to one consumer, or to all)."""
        if consumer_id is not None:
            lease = self.leases.get(consumer_id)
            return len(lease) if lease else 0
        return sum(len(lease) for lease in self.leases.values())

    def take(self, consumer_id: str) -> RangeSet:
        """Remove and return the consumer's lease (empty when it had none)."""
        return self.leases.pop(consumer_id, None) or RangeSet()

    def release(self, consumer_id: str, entry_id: int) -> None:
        """Take one entry out of one consumer's lease (dropped once empty)."""
        lease = self.leases.get(consumer_id)
        if lease is not None:
            lease.remove(entry_id)
            if not lease:
                del self.leases[consumer_id]

    def forget(self, entry_id: int) -> None:
        """Take an acknowledged entry out of every lease (empty leases go)."""
        for lease in self.leases.values():
            lease.remove(entry_id)
        self.drop_empty()

    def forget_up_to(self, up_to: int) -> None:
        """Take every entry at or below ``up_to`` out of every lease (empty leases stay
        until ``drop_empty``)."""
        for lease in self.leases.values():
            lease.remove_up_to(up_to)

    def drop_empty(self) -> None:
        """Remove the leases that hold nothing."""
        for consumer_id in [c for c, lease in self.leases.items() if not lease]:
            del self.leases[consumer_id]
