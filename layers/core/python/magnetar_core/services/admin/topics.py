"""The operator's topic verbs behind Pulsar's ``/admin/v2`` paths: terminate (one topic or
every partition), unload, truncate, and growing a partitioned topic. Every input is checked
before anything changes: bad input changes nothing.

Terminate writes the closed partitions into the topic's metadata (``TopicMeta.terminated``,
a versioned write), then fences each closed ledger (a fence item after its last entry, as a
deleted topic's). Producers learn it at their next commit, with no request per entry: a
producer whose cached metadata already says so is refused before storing anything; one with
a stale cache collides with the fence, reloads the metadata, deletes the object it stored
and is refused (``TopicTerminated``).
"""

from __future__ import annotations

from dataclasses import replace

from magnetar_core.domain.errors import (
    Conflict,
    InvalidMessage,
    NotAllowed,
    PreconditionFailed,
    ServiceUnitNotReady,
)
from magnetar_core.domain.topic import TopicMeta
from magnetar_core.services.dedup import Deduplicator
from magnetar_core.services.produce import Producer
from magnetar_core.services.subscriptions import Subscriptions
from magnetar_core.services.topics import PartitionRef, Topics
from magnetar_wire.names import TopicName

MAX_PARTITIONS = 1024


class TopicAdmin:
    """Terminate, unload, truncate and update-partitions, by topic name.

    Every method raises TopicNotFound (404) for a topic that does not exist and
    ServiceUnitNotReady (503: the metadata kept changing meanwhile; retry)."""

    def __init__(
        self, topics: Topics, producer: Producer, dedup: Deduplicator, subscriptions: Subscriptions
    ) -> None:
        self._topics = topics
        self._producer = producer
        self._dedup = dedup
        self._subscriptions = subscriptions
        self._log = subscriptions.context.log
        self._cursors = subscriptions.context.cursors
        self._ops = subscriptions.operations

    # -- terminate ---------------------------------------------------------------------------

    def terminate(self, name: TopicName) -> str | None:
        """Close a non-partitioned topic or one partition for good: no producer may commit
        again. Returns the text id of its last message (None: it has none). Idempotent.
        Raises NotAllowed (405) on a non-persistent topic and on a partitioned topic's base
        name (``terminate_partitions`` closes every partition), as Pulsar."""
        _persistent(name, "Termination")
        if name.partition_index >= 0:
            ref = self._topics.resolve(name, create=False)
        else:
            meta = self._topics.get(name)
            if meta.partitions:
                raise NotAllowed(
                    f"Termination of a partitioned topic is not allowed: {name} has "
                    f"{meta.partitions} partitions; POST .../terminate/partitions closes them all"
                )
            ref = self._topics.partitions_of(meta)[0]
        self._close(ref.topic.base if ref.partition >= 0 else ref.topic, [ref])
        return self._subscriptions.last_message_id(ref.topic)

    def terminate_partitions(self, name: TopicName) -> dict[int, str | None]:
        """Terminate every partition of a partitioned topic; returns each partition's last
        message id by partition index. Raises NotAllowed (405) on a non-partitioned or
        non-persistent topic."""
        _persistent(name, "Termination")
        meta = self._topics.get(name.base)
        if not meta.partitions or name.partition_index >= 0:
            raise NotAllowed(
                f"Termination of a non-partitioned topic is not allowed using "
                f"terminate/partitions: use POST .../terminate on {name}"
            )
        refs = self._topics.partitions_of(meta)
        self._close(meta.name, refs)
        return {ref.partition: self._subscriptions.last_message_id(ref.topic) for ref in refs}

    def _close(self, holder: TopicName, refs: list[PartitionRef]) -> None:
        """Record ``refs`` as terminated in ``holder``'s metadata, then fence their ledgers
        (in this order: a producer meeting a fence always finds the metadata saying why)."""
        closing = frozenset(ref.partition for ref in refs)

        def change(meta: TopicMeta) -> TopicMeta | None:
            if meta.ledger_id != refs[0].ledger_id:
                raise ServiceUnitNotReady(f"Topic {holder} was re-created meanwhile; retry")
            if closing <= meta.terminated:
                return None
            return replace(meta, terminated=meta.terminated | closing)

        self._topics.update(holder, change)
        for ref in refs:
            self._topics.fence(ref.key)

    # -- unload and truncate -----------------------------------------------------------------

    def unload(self, name: TopicName) -> None:
        """Drop this process's (one Lambda container's) cached state of the topic: its
        metadata and the deduplication state of each partition; the next request reads
        them again. Other containers keep theirs (each revalidates at
        its next commit through fences and epochs). Index items are immutable and stay
        cached; namespace policies are cached per namespace, not per topic."""
        refs = self._refs(name)
        keys = [ref.key for ref in refs]
        for topic in {name, name.base, *(ref.topic for ref in refs)}:
            self._topics.invalidate(topic)
        for key in keys:
            self._dedup.forget(key)

    def truncate(self, name: TopicName) -> int:
        """Pulsar's truncate: move every subscription's cursor to the end (every message
        published so far acknowledged), on every partition; the expiry job then deletes
        the entries as it deletes any acknowledged entry (retention still applies).
        Returns how many cursors moved. Raises NotAllowed (405) on a non-persistent topic."""
        _persistent(name, "Truncate")
        moved = 0
        for ref in self._refs(name):
            for state in self._cursors.list(ref.key):
                self._ops.clear_backlog(ref, state.subscription)
                moved += 1
        return moved

    def _refs(self, name: TopicName) -> list[PartitionRef]:
        if name.partition_index >= 0:
            return [self._topics.resolve(name, create=False, allow_non_persistent=True)]
        return self._topics.partitions_of(self._topics.get(name))

    # -- partitions --------------------------------------------------------------------------

    def update_partitions(self, name: TopicName, partitions: object) -> None:
        """Grow a partitioned topic to ``partitions`` (an int up to 1024); every
        subscription of the topic is created on the new partitions, from their start.
        Raises InvalidMessage (400) for a count that is no such int, PreconditionFailed
        (412) for a partition's name, Conflict (409) on a non-partitioned topic and for a
        count not above the current one (Pulsar never shrinks a topic)."""
        if isinstance(partitions, bool) or not isinstance(partitions, int):
            raise InvalidMessage(f"The partition count must be an integer, not {partitions!r}")
        if not 1 <= partitions <= MAX_PARTITIONS:
            raise InvalidMessage(
                f"The partition count must be from 1 to {MAX_PARTITIONS}, not {partitions}"
            )
        if name.partition_index >= 0:
            raise PreconditionFailed(f"{name} is a partition; update the partitions of {name.base}")

        def change(meta: TopicMeta) -> TopicMeta:
            if not meta.partitions:
                raise Conflict(
                    f"Topic {name} is not partitioned; only a partitioned topic's partition "
                    "count can be updated"
                )
            if partitions <= meta.partitions:
                raise Conflict(
                    f"Number of new partitions ({partitions}) must be greater than the "
                    f"existing number of partitions ({meta.partitions}) of {name}"
                )
            return replace(meta, partitions=partitions)

        before = self._topics.get(name)
        after = self._topics.update(name, change)
        old = self._topics.partitions_of(before)
        subscriptions = {
            c.subscription for ref in old for c in self._cursors.list(ref.key) if c.durable
        }
        for ref in self._topics.partitions_of(after)[len(old) :]:
            for subscription in sorted(subscriptions):
                if self._cursors.get(ref.key, subscription) is None:
                    self._ops.create(ref, subscription, "earliest")


def _persistent(name: TopicName, verb: str) -> None:
    if not name.persistent:
        raise NotAllowed(f"{verb} of a non-persistent topic is not allowed: {name}")
