"""Partition routing of a producer on a partitioned topic (Pulsar's message routers).

* A message with a ``partition_key`` goes to ``hash(key) % n`` in RoundRobinDistribution and
  UseSinglePartition mode (per-key order). ``ordering_key`` does not route, as in Pulsar.
* RoundRobinDistribution without a key: per message when batching is off; with batching on,
  a whole batch goes to one partition and the next batch to the next (Pulsar switches "at the
  boundary of batching delay" so batching stays effective). The cursor starts at a random
  partition, as Pulsar's does.
* UseSinglePartition without a key: one partition, chosen at random, for the producer's life
  (per-producer order).
* CustomPartition: ``message_router(msg, num_partitions)``, which must return an ``int`` in
  ``0..num_partitions-1``; anything else fails the send with ``UnknownError`` (Pulsar's result
  for an invalid router answer), with a message saying what the router returned.

Hashing schemes (``hashing_scheme=``, a Magnetar extra; pulsar-client has none):
``JavaStringHash`` (default, as the Java client; Java's ``String.hashCode`` over UTF-16 code
units, ``& Integer.MAX_VALUE``) and ``Murmur3_32Hash`` (MurmurHash3 x86 32-bit, seed 0, over the
key's UTF-8 bytes, ``& Integer.MAX_VALUE``; the same in every Pulsar client).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from magnetar import exceptions as exc
from magnetar._enums import HashingScheme, PartitionsRoutingMode
from magnetar_wire import routing
from magnetar_wire.routing import java_string_hash, murmur3_32

__all__ = ["Router", "java_string_hash", "murmur3_32", "partition_of_key"]


def partition_of_key(key: str, partitions: int, scheme: HashingScheme) -> int:
    """The partition a keyed message goes to: ``(hash(key) & Integer.MAX_VALUE) % n``
    (the same function the service uses for HTTP producers, from ``magnetar_wire``)."""
    return routing.partition_of_key(key, partitions, scheme.name)


class Router:
    """Picks the partition of each message of one producer (``partitions`` >= 1)."""

    def __init__(self, partitions: int, mode: PartitionsRoutingMode, scheme: HashingScheme,
                 message_router: Callable[[Any, int], Any] | None,
                 batch_partition: Callable[[int], int] | None) -> None:  # fmt: skip
        """``batch_partition(n)`` is the round-robin partition of the batch being filled (the
        sender advances it when a batch is handed over); None when batching is off."""
        self.partitions = partitions
        self.mode = mode
        self.scheme = scheme
        if mode == PartitionsRoutingMode.CustomPartition and message_router is None:
            raise exc.InvalidConfiguration("CustomPartition routing needs a message_router")
        self._router = message_router
        self._batch_partition = batch_partition
        self._next = random.randrange(partitions)  # round robin, per message
        self.single = random.randrange(partitions)

    def choose(self, key: str | None, make_message: Callable[[], Any]) -> int:
        """The partition index of one message.

        Raises:
            UnknownError: the custom router returned something other than a partition index.
        """
        n = self.partitions
        router = self._router
        if self.mode == PartitionsRoutingMode.CustomPartition and router is not None:
            index = router(make_message(), n)
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < n:
                raise exc.UnknownError(
                    f"message_router returned {index!r}, which is not a partition index of a "
                    f"topic with {n} partitions (expected an int in 0..{n - 1})"
                )
            return index
        if key:
            return partition_of_key(key, n, self.scheme)
        if self.mode == PartitionsRoutingMode.UseSinglePartition:
            return self.single
        if self._batch_partition is not None:
            return self._batch_partition(n)
        index = self._next
        self._next = (index + 1) % n
        return index
