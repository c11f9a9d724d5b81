"""The operator's subscription verbs behind Pulsar's ``/admin/v2`` paths, on a topic: a
partitioned topic's base name applies them to every partition, as Pulsar does (except skip
and reset to a message id: a partition's own name is needed, 405). Every input is checked,
and every partition's subscription found, before any cursor moves: bad input changes
nothing. Each move is ``CursorOperations``' optimistic update of one cursor; a reset then
wakes the notification channel's sleepers of the partitions it moved (entries can be
received again without a commit), as a nack does."""

from __future__ import annotations

from magnetar_core.domain.errors import (
    Conflict,
    ConsumerBusy,
    NotAllowed,
    PreconditionFailed,
    SubscriptionNotFound,
)
from magnetar_core.services.subscriptions import Subscriptions
from magnetar_core.services.subscriptions.seeking import LATEST
from magnetar_core.services.tenancy import Registry
from magnetar_core.services.topics import PartitionRef, Topics
from magnetar_wire.names import TopicName


class SubscriptionAdmin:
    """Skip, clear backlog, expire, reset cursor and create subscription, by topic name.

    Every method raises TopicNotFound (404), SubscriptionNotFound (404) "Subscription not
    found", NotAllowed (405) on a non-persistent topic, PreconditionFailed (412) for a
    number out of range, ServiceUnitNotReady (503: a cursor too busy; retry)."""

    def __init__(self, topics: Topics, subscriptions: Subscriptions, registry: Registry) -> None:
        self._topics = topics
        self._registry = registry
        self._lifecycle = subscriptions.lifecycle
        self._ops = subscriptions.operations
        self._cursors = subscriptions.context.cursors
        self._now_ms = subscriptions.context.runtime.now_ms
        self._wake = subscriptions.wake

    def _refs(self, name: TopicName, verb: str, whole: bool = True) -> list[PartitionRef]:
        """The logs ``verb`` applies to; ``whole`` False: a partitioned topic's base name is
        refused (405)."""
        if not name.persistent:
            raise NotAllowed(f"{verb} is only for persistent topics, not {name}")
        if name.partition_index >= 0:
            return [self._topics.resolve(name, create=False)]
        meta = self._topics.get(name)
        if meta.partitions and not whole:
            raise NotAllowed(
                f"{verb} on a partitioned topic is not allowed; name one of its partitions "
                f"({name}-partition-0 ...)"
            )
        return self._topics.partitions_of(meta)

    def _found(self, refs: list[PartitionRef], subscription: str) -> list[PartitionRef]:
        for ref in refs:
            if self._cursors.get(ref.key, subscription) is None:
                raise SubscriptionNotFound(
                    f"Subscription not found: '{subscription}' on {ref.topic}; "
                    "GET .../subscriptions lists the topic's subscriptions"
                )
        return refs

    def skip(self, name: TopicName, subscription: str, entries: int) -> int:
        """Skip the next ``entries`` (>= 1) unacknowledged entries; returns how many were.
        NotAllowed (405) on a partitioned topic's base name, as Pulsar."""
        _at_least("numMessages", entries, 1)
        refs = self._found(self._refs(name, "Skip messages", whole=False), subscription)
        return self._ops.skip(refs[0], subscription, entries)

    def clear_backlog(self, name: TopicName, subscription: str) -> None:
        """Acknowledge everything published so far (Pulsar's skip_all)."""
        for ref in self._found(self._refs(name, "Clear backlog"), subscription):
            self._ops.clear_backlog(ref, subscription)

    def expire(self, name: TopicName, subscription: str | None, seconds: int) -> None:
        """Acknowledge the messages published more than ``seconds`` (>= 0) ago, on one
        subscription or (None) on every subscription of the topic."""
        _at_least("expireTimeInSeconds", seconds, 0)
        refs = self._refs(name, "Expire messages")
        older_than_ms = self._now_ms() - seconds * 1000
        if subscription is not None:
            for ref in self._found(refs, subscription):
                self._ops.expire(ref, subscription, older_than_ms)
            return
        for ref in refs:
            for state in self._cursors.list(ref.key):
                self._ops.expire(ref, state.subscription, older_than_ms)

    def reset_to_time(self, name: TopicName, subscription: str, timestamp_ms: int) -> None:
        """Reset the subscription to the first message published at or after epoch-ms
        ``timestamp_ms`` (>= 0), on every partition, and wake their sleepers."""
        _at_least("timestamp", timestamp_ms, 0)
        refs = self._found(self._refs(name, "Reset cursor"), subscription)
        for ref in refs:
            self._ops.reset_to_time(ref, subscription, timestamp_ms)
        for ref in refs:
            self._wake(ref.topic)

    def reset_to_id(
        self, name: TopicName, subscription: str, message_id: str, inclusive: bool
    ) -> None:
        """Reset the subscription to a text message id (that message first when
        ``inclusive``) and wake its sleepers. NotAllowed (405) on a partitioned topic's base name, as Pulsar;
        InvalidMessage (400) for a malformed id."""
        refs = self._found(
            self._refs(name, "Reset cursor at a position", whole=False), subscription
        )
        self._ops.reset_to_id(refs[0], subscription, message_id, inclusive)
        self._wake(refs[0].topic)

    def create(self, name: TopicName, subscription: str, message_id: str = LATEST) -> None:
        """Create a subscription without consumers at ``message_id`` (``latest``,
        ``earliest`` or a text id), on every partition; raises InvalidMessage, Conflict
        (409) when it exists (on any partition: then none is created)."""
        refs = self._refs(name, "Create subscription")
        for ref in refs:
            if self._cursors.get(ref.key, subscription) is not None:
                raise Conflict(
                    f"Subscription already exists for topic: {subscription} on {ref.topic}"
                )
        for ref in refs:
            self._ops.create(ref, subscription, message_id)

    # -- a namespace's subscriptions (Pulsar's namespace clearBacklog and unsubscribe) -------

    def _namespace_refs(self, tenant: str, namespace: str) -> list[PartitionRef]:
        """Every persistent log of the namespace; NotFound (404) "Namespace does not exist"."""
        self._registry.require_namespace(f"{tenant}/{namespace}")
        metas = self._topics.list(f"persistent://{tenant}/{namespace}")
        return [ref for meta in metas for ref in self._topics.partitions_of(meta)]

    def clear_namespace_backlog(self, tenant: str, namespace: str, subscription: str | None) -> int:
        """Clear the backlog of ``subscription`` (None: of every subscription) on every
        persistent topic of the namespace that has it; returns how many cursors moved or
        were already clear (0: none has it, which is no error, as Pulsar)."""
        cleared = 0
        for ref in self._namespace_refs(tenant, namespace):
            names = [c.subscription for c in self._cursors.list(ref.key)]
            for name in names if subscription is None else [subscription]:
                if name in names:
                    self._ops.clear_backlog(ref, name)
                    cleared += 1
        return cleared

    def unsubscribe_namespace(self, tenant: str, namespace: str, subscription: str) -> int:
        """Delete ``subscription`` from every persistent topic of the namespace that has it;
        returns how many were deleted. Raises ConsumerBusy (409) before deleting any when a
        consumer is connected to one of them (close it first)."""
        found = []
        for ref in self._namespace_refs(tenant, namespace):
            state = self._cursors.get(ref.key, subscription)
            if state is not None and state.consumers:
                raise ConsumerBusy(
                    f"Subscription {subscription} on {ref.topic} has {len(state.consumers)} "
                    "connected consumers: close them first; nothing was deleted"
                )
            if state is not None:
                found.append(ref)
        for ref in found:
            self._lifecycle.delete_subscription(ref.topic, subscription, force=False)
        return len(found)


def _at_least(what: str, value: int, low: int) -> None:
    if value < low:
        raise PreconditionFailed(f"{what} must be at least {low}, not {value}")
