"""A partitioned producer's partition count, refreshed as Pulsar's clients do
(``partitionsUpdateInterval``, 60 s by default in the C++ client pulsar-client wraps): at most
once per interval, checked when a message is routed (no thread of its own). When the topic
grew (``POST .../partitions``), the producer registers on the new partitions and routes to
them from then on. Partition counts never shrink (consumers: ``_consumer.partitions``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from magnetar import exceptions as exc

from .registration import Lease

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
