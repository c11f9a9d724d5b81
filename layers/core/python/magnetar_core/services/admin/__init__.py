"""Administration use cases behind Pulsar's ``/admin/v2`` paths."""

from __future__ import annotations

from magnetar_core.domain.errors import InvalidMessage, TopicNotFound
from magnetar_core.services.admin.subscriptions import SubscriptionAdmin
from magnetar_core.services.admin.topics import MAX_PARTITIONS, TopicAdmin
from magnetar_core.services.peeking import Peeking
from magnetar_core.services.stats import Stats
from magnetar_core.services.subscriptions import Subscriptions
from magnetar_core.services.tenancy import Registry
from magnetar_core.services.topics import Topics
from magnetar_core.services.triggers import Triggers
from magnetar_wire.names import TopicName


class Admin:
    """Topic and subscription administration."""

    def __init__(
        self,
        topics: Topics,
        subscriptions: Subscriptions,
        stats: Stats,
        registry: Registry,
        triggers: Triggers | None = None,
        topic_ops: TopicAdmin | None = None,
    ) -> None:
        self._triggers = triggers
        self._registry = registry
        self._topics = topics
        self._subscriptions = subscriptions
        self._stats = stats
        self.cursors = SubscriptionAdmin(topics, subscriptions, registry)
        """The subscription verbs: skip, clear backlog, expire, reset cursor, create."""
        self.peek = Peeking(subscriptions.context)
        """Peek, examine and get-by-id: messages read without consuming them."""
        self.topic_ops = topic_ops
        """The topic verbs: terminate, unload, truncate, update partitions (None: not
        composed, as in tests that need no producer)."""

    def create_topic(self, name: TopicName, partitions: object) -> None:
        """Create a topic; ``partitions`` None for non-partitioned, else an int 1..1024.

        Raises InvalidMessage, TopicAlreadyExists.
        """
        if partitions is not None and (
            isinstance(partitions, bool)
            or not isinstance(partitions, int)
            or not 1 <= partitions <= MAX_PARTITIONS
        ):
            raise InvalidMessage(
                f"The partition count must be an integer from 1 to {MAX_PARTITIONS}, not {partitions!r}"
            )
        self._topics.create(name, partitions or 0)

    def partitions(self, name: TopicName) -> dict:
        """``{"partitions": n}`` (0 for non-partitioned); raises TopicNotFound."""
        return {"partitions": self._topics.get(name).partitions}

    def list_topics(self, namespace: TopicName, partitioned_only: bool) -> list[str]:
        """Topic names of a namespace: partitions by partition name, as Pulsar lists them.
        Raises NotFound (404) "Namespace does not exist" for a namespace that does not."""
        self._registry.require_namespace(f"{namespace.tenant}/{namespace.namespace}")
        out: list[str] = []
        for meta in self._topics.list(namespace.namespace_name):
            if partitioned_only:
                if meta.partitions:
                    out.append(str(meta.name))
            else:
                out.extend(str(ref.topic) for ref in self._topics.partitions_of(meta))
        return out

    def delete_topic(self, name: TopicName, partitioned: bool, force: bool) -> None:
        """Delete a topic (``Topics.delete``: errors there) and its triggers."""
        self._topics.delete(name, partitioned=partitioned, force=force)
        if self._triggers is not None:
            self._triggers.delete_all(name)

    def stats(self, name: TopicName, partitioned: bool) -> dict:
        """Topic stats; the partitioned variant only for partitioned topics (TopicNotFound)."""
        if name.partition_index >= 0 and not partitioned:
            return self._stats.partition_stats(
                self._topics.resolve(name, create=False, allow_non_persistent=True)
            )
        meta = self._topics.get(name)
        if partitioned and not meta.partitions:
            raise TopicNotFound(f"Topic {name} is not partitioned; use /stats")
        if not partitioned and meta.partitions:
            raise TopicNotFound(
                f"Topic {name} is partitioned; use /partitioned-stats or a partition's /stats"
            )
        return self._stats.topic_stats(meta)

    def subscriptions(self, name: TopicName) -> list[str]:
        """Subscription names of a topic (of all its partitions when partitioned)."""
        partitioned = name.partition_index < 0 and self._topics.get(name).partitions > 0
        return sorted(self.stats(name, partitioned=partitioned)["subscriptions"])

    def delete_subscription(self, name: TopicName, subscription: str, force: bool) -> None:
        meta = None if name.partition_index >= 0 else self._topics.get(name)
        if meta is not None and meta.partitions:
            for ref in self._topics.partitions_of(meta):
                self._subscriptions.delete_subscription(ref.topic, subscription, force)
        else:
            self._subscriptions.delete_subscription(name, subscription, force)
