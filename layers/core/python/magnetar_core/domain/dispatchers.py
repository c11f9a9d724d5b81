"""Dispatch policies per subscription type: which consumer may receive from one partition.

Small policy objects instead of an ``if`` ladder in the dispatcher. Exclusive admits its one
consumer, Shared every consumer (an entry is still leased to one at a time), Key_Shared every
consumer (messages are routed by key hash, see ``domain.cursor.key_shared``), Failover only
the partition's active consumer, chosen as Pulsar chooses it (see ``failover_active``).
"""

from __future__ import annotations

from typing import Protocol

import mmh3

from magnetar_core.domain.cursor.state import (
    EXCLUSIVE,
    FAILOVER,
    KEY_SHARED,
    SHARED,
    ConsumerInfo,
    CursorState,
)


class DispatchPolicy(Protocol):
    def admits(self, state: CursorState, consumer_id: str, partition: int, topic: str) -> bool:
        """True when ``consumer_id`` may be handed entries of this partition now."""

    def take_over(self, state: CursorState, consumer_id: str) -> int:
        """Before an admitted consumer receives: send back for redelivery what it must get
        first; returns how many entries went back."""


class EveryConsumer:
    """Exclusive, Shared and Key_Shared: every registered consumer may receive (Key_Shared
    then hands each one only the messages its selector assigns it)."""

    def admits(self, state: CursorState, consumer_id: str, partition: int, topic: str) -> bool:
        return consumer_id in state.consumers

    def take_over(self, state: CursorState, consumer_id: str) -> int:
        """Nothing: consumers share the subscription, each keeps what it holds."""
        return 0


def _hash(text: str) -> int:
    return mmh3.hash(text, signed=False)


def failover_active(consumers: dict[str, ConsumerInfo], partition: int, topic: str) -> str | None:
    """The active consumer of one partition of a Failover subscription (None: no consumer).

    - Partition ``i`` of a partitioned topic: consumers with the highest priority (lowest
      ``priority`` value), sorted by consumer name, take partitions round the table:
      ``i mod n``.
    - A non-partitioned topic: the first to subscribe (highest priority first); when every
      consumer subscribed as part of a multi-topic consumer (``spread``), consumers are
      placed on a ring by the hash of their name and the topic goes to the first one at or
      after the hash of its name, so several topics spread over the consumers.
    """
    if not consumers:
        return None
    top = min(info.priority for info in consumers.values())
    leaders = [info for info in consumers.values() if info.priority == top]
    if partition >= 0:
        ordered = sorted(leaders, key=lambda info: (info.name, info.consumer_id))
        return ordered[partition % len(ordered)].consumer_id
    if all(info.spread for info in leaders):
        ring = sorted((_hash(info.name), info.name, info.consumer_id) for info in leaders)
        point = _hash(topic)
        return next((cid for h, _, cid in ring if h >= point), ring[0][2])
    return min(leaders, key=lambda info: (info.connected_ms, info.consumer_id)).consumer_id


class ActiveConsumer:
    """Failover: only the partition's active consumer receives; the others stand by. What
    is still in flight to a consumer that was active before comes back to the active one
    first (``CursorState.take_over``), so a switch never lets a later entry overtake it."""

    def admits(self, state: CursorState, consumer_id: str, partition: int, topic: str) -> bool:
        return failover_active(state.consumers, partition, topic) == consumer_id

    def take_over(self, state: CursorState, consumer_id: str) -> int:
        return state.take_over(consumer_id)


POLICIES: dict[str, DispatchPolicy] = {
    EXCLUSIVE: EveryConsumer(),
    SHARED: EveryConsumer(),
    KEY_SHARED: EveryConsumer(),
    FAILOVER: ActiveConsumer(),
}
