"""A partitioned topic's partition count, refreshed as Pulsar's clients do
(``partitionsUpdateInterval``, 60 s by default in the C++ client pulsar-client wraps).

A producer checks at most once per interval, when a message is routed (no thread of its
own); when the topic grew (``POST .../partitions``) it registers on the new partitions and
routes to them from then on. A consumer or reader of a partitioned topic checks once per
interval on a daemon thread (``follow_partitions``) and subscribes to the new partitions
from their earliest message, so nothing produced there before it noticed is skipped.
Partition counts never shrink."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import exceptions as exc
from ._registration import Lease
from ._topics import TopicName

if TYPE_CHECKING:
    from ._receiver import ConsumerCore

PARTITIONS_UPDATE_INTERVAL_S = 60.0
"""How often a partitioned producer asks for its topic's partition count (seconds)."""


class PartitionWatch:
    """Asks ``count()`` for the partition count at most every ``interval_s`` seconds;
    ``grow(old, new)`` registers on partitions ``old..new-1`` and returns their leases."""

    def __init__(self, partitions: int, count: Callable[[], int],
                 grow: Callable[[int, int], list[Lease]], interval_s: float,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self.partitions = partitions
        self._count = count
        self._grow = grow
        self._interval_s = interval_s
        self._clock = clock
        self._due = clock() + interval_s
        self._lock = threading.Lock()

    def refresh(self) -> list[Lease]:
        """The leases of partitions added since the last refresh (none unless one is due and
        the topic grew). A failed count or registration is retried at the next interval
        (the producer keeps sending to the partitions it has)."""
        with self._lock:
            now = self._clock()
            if now < self._due:
                return []
            self._due = now + self._interval_s
            try:
                new = self._count()
                if new <= self.partitions:
                    return []
                leases = self._grow(self.partitions, new)
            except exc.PulsarException:
                return []
            self.partitions = new
            return leases


def follow_partitions(client: Any, core: ConsumerCore, name: TopicName, subscription: str,
                      partitions: int) -> None:  # fmt: skip
    """Start the thread that subscribes ``core`` to the partitions ``name`` gains beyond
    ``partitions``, every ``client._partitions_update_interval_s`` seconds, until the
    consumer closes or no longer reads ``name`` (a regex subscription dropped it)."""
    prefix = f"{name}-partition-"

    def run() -> None:
        known = partitions
        while not core.closed_event.wait(max(client._partitions_update_interval_s, 0.1)):
            if not any(s.topic.startswith(prefix) for s in core.subs):
                return
            try:
                count = client._partitions(name)
            except exc.PulsarException:
                continue
            for i in range(known, count):
                added = name.partition(i)
                try:
                    core.register(str(added), added.path(), subscription, i,
                                  new_partition_body(core.body))  # fmt: skip
                except exc.PulsarException as e:
                    core.log.warning("consumer on %s: subscribing to new partition %s failed, "
                                     "retrying: %s", name, added, e)  # fmt: skip
                    break
                known = i + 1
                core.log.info("consumer on %s: subscribed to new partition %s", name, added)

    thread = threading.Thread(target=run, daemon=True, name=f"magnetar-partitions-{name}")
    core.helpers.append(thread)
    thread.start()


def new_partition_body(body: dict) -> dict:
    """The subscribe body for a partition added after the consumer subscribed: its earliest
    message first (a reader's start id names another partition's message)."""
    fresh = {
        k: v for k, v in body.items() if k not in ("startMessageId", "startMessageIdInclusive")
    }
    fresh["initialPosition"] = "Earliest"
    return fresh
