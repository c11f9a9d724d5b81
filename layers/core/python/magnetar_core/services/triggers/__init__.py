"""Triggers (issue 13): the trigger resource (``Triggers``: create or replace, read, list,
delete, each with its subscription) and push delivery (``delivery.Delivery``)."""

from __future__ import annotations

import contextlib
import logging

from magnetar_core.domain.errors import (
    ConditionFailed,
    Conflict,
    InvalidMessage,
    NotAllowedError,
    NotFound,
    ServiceUnitNotReady,
    StorageFault,
    SubscriptionNotFound,
    TooManyRequests,
)
from magnetar_core.domain.preconditions import Precondition
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.topic import TopicMeta
from magnetar_core.domain.triggers.spec import Trigger, TriggerSpec, check_trigger_name
from magnetar_core.domain.triggers.wakes import soonest_wake_ms
from magnetar_core.domain.triggers.webhooks import check_webhook_url
from magnetar_core.ports import TargetDirectory, TriggerStore, TriggerWakes
from magnetar_core.services import optimistic
from magnetar_core.services.subscriptions import Subscriptions
from magnetar_core.services.topics import Topics
from magnetar_wire.names import TopicName

log = logging.getLogger(__name__)

CONSUMER_NAME = "magnetar-trigger"
"""The consumer name a trigger's deliveries (and its creation) subscribe with."""


class Triggers:
    """The trigger resource of a base topic. A trigger's subscription is named after it,
    created with it (at its initial position, on every partition) and deleted with it.
    Webhooks may point at http or private addresses only when ``allow_private_webhooks``.
    A stored trigger's topic is woken through ``wakes`` (None: by its next commit only), so
    a backlog from ``Earliest`` is delivered without waiting for a produce. A Lambda target
    is looked up in ``directory`` before anything is stored (None: not checked)."""

    def __init__(
        self,
        store: TriggerStore,
        topics: Topics,
        subscriptions: Subscriptions,
        runtime: Runtime,
        max_attempts: int = 16,
        allow_private_webhooks: bool = False,
        wakes: TriggerWakes | None = None,
        directory: TargetDirectory | None = None,
    ) -> None:
        self._allow_private = allow_private_webhooks
        self._directory = directory
        self._wakes = wakes
        self._store = store
        self._topics = topics
        self._subscriptions = subscriptions
        self._runtime = runtime
        self._max_attempts = max_attempts

    def _topic(self, topic: TopicName, create: bool = False) -> TopicMeta:
        """The trigger's topic; ``create``: a missing one is auto-created as a subscribe
        creates it (non-partitioned). Raises TopicNotFound (also for a namespace that does
        not exist), InvalidMessage (a partition's name), NotAllowedError."""
        if topic.partition_index >= 0:
            raise InvalidMessage(
                f"Triggers belong to the partitioned topic {topic.base}, not to a partition"
            )
        if not topic.persistent:
            raise NotAllowedError(f"Triggers need a persistent topic, not {topic}")
        if create:
            with contextlib.suppress(NotAllowedError):  # a partitioned topic: it exists
                self._topics.resolve(topic, create=True)
        return self._topics.get(topic)  # TopicNotFound

    def put(
        self,
        topic: TopicName,
        name: str,
        body: object,
        precondition: Precondition = Precondition.ANY,
    ) -> tuple[Trigger, bool]:
        """Create or replace trigger ``name`` on ``topic`` from the request ``body``
        (``precondition``: create only, replace only, or either; checked in the same
        conditional write that stores it, so of two creates of one name exactly one wins);
        returns it and whether it is new. Raises PreconditionFailed (nothing changed),
        InvalidMessage (naming the bad field; nothing stored), NotAllowedError (a non-persistent topic), TopicNotFound (its
        namespace does not exist: a missing topic is auto-created, as subscribing does),
        NotFound (a Lambda target that does not exist; nothing stored or created), Conflict
        (a subscription of that name that is not a trigger's), ServiceUnitNotReady.

        A new trigger is written first, then its subscription created (a failure there
        deletes the trigger again; a crash in between leaves a trigger whose subscription
        its first delivery step or the next PUT creates). A replaced trigger's subscription
        is updated first (a type clash with its consumers changes nothing), then the record.
        """
        check_trigger_name(name)
        spec = TriggerSpec.parse(body)
        if spec.target.url is not None:
            check_webhook_url(spec.target.url, self._allow_private)
        if self._directory is not None:
            self._directory.check(spec.target)
        existing = self._store.get(topic, name)
        precondition.check(existing is not None, f"Trigger {name} of {topic}")
        meta = self._topic(topic, create=True)
        if existing is None:
            self._refuse_foreign_subscription(meta, name)
        else:
            self._subscribe(meta, name, spec)
        trigger, created = self._write(topic, name, spec, precondition)
        if created:
            try:
                self._subscribe(meta, name, spec)
            except BaseException:
                with contextlib.suppress(ConditionFailed):
                    self._store.delete(trigger)
                raise
        self._wake(topic)
        return trigger, created

    def wake(self, topic: TopicName) -> None:
        """Wake ``topic``'s triggers now (the next whole second); a failure is logged."""
        self._wake(topic)

    def _wake(self, topic: TopicName) -> None:
        """Wake the topic's triggers now (the next whole second); a failure is logged, not
        raised: the trigger is stored, and the topic's next commit wakes it too."""
        if self._wakes is None:
            return
        try:
            self._wakes.wake_at(str(topic), soonest_wake_ms(self._runtime.now_ms()))
        except (TooManyRequests, StorageFault):
            log.exception("%s's triggers not woken: its next commit wakes them", topic)

    def _write(
        self, topic: TopicName, name: str, spec: TriggerSpec, precondition: Precondition
    ) -> tuple[Trigger, bool]:
        def read() -> Trigger | None:
            return self._store.get(topic, name)

        def change(current: Trigger | None) -> tuple[tuple[Trigger, bool], Trigger]:
            precondition.check(current is not None, f"Trigger {name} of {topic}")
            version = current.version if current else 0
            wanted = Trigger(str(topic), name, spec, version)
            return (wanted.with_version(version + 1), current is None), wanted

        outcome = optimistic.update(
            read, change, self._store.put, self._runtime, self._max_attempts
        )
        if isinstance(outcome, optimistic.Conflict):
            raise ServiceUnitNotReady(f"Trigger {name} is being changed by others; retry")
        return outcome

    def get(self, topic: TopicName, name: str) -> Trigger:
        """The trigger; raises NotFound, TopicNotFound."""
        self._topic(topic)
        trigger = self._store.get(topic, name)
        if trigger is None:
            raise NotFound(f"Trigger {name} does not exist on {topic}")
        return trigger

    def names(self, topic: TopicName) -> list[str]:
        """The topic's trigger names, sorted; raises TopicNotFound."""
        self._topic(topic)
        return [t.name for t in self._store.list(topic)]

    def of_topic(self, topic: TopicName) -> list[Trigger]:
        """The triggers of a topic or of a partition's topic (what a commit wakes)."""
        return self._store.list(topic.base)

    def delete(self, topic: TopicName, name: str) -> None:
        """Delete the trigger and its subscription (its consumers disconnected); raises
        NotFound, TopicNotFound, ServiceUnitNotReady (changed meanwhile)."""
        meta = self._topic(topic)
        trigger = self.get(topic, name)
        try:
            self._store.delete(trigger)
        except ConditionFailed:
            raise ServiceUnitNotReady(f"Trigger {name} changed meanwhile; retry") from None
        for ref in self._topics.partitions_of(meta):
            with contextlib.suppress(SubscriptionNotFound):
                self._subscriptions.delete_subscription(ref.topic, name, force=True)

    def delete_all(self, topic: TopicName) -> int:
        """Forget every trigger of ``topic`` (the topic was deleted: its cursors went with
        it); returns how many. A trigger changed meanwhile is left (ConditionFailed)."""
        deleted = 0
        for trigger in self._store.list(topic):
            with contextlib.suppress(ConditionFailed):
                self._store.delete(trigger)
                deleted += 1
        return deleted

    def _refuse_foreign_subscription(self, meta: TopicMeta, name: str) -> None:
        cursors = self._subscriptions.context.cursors
        for ref in self._topics.partitions_of(meta):
            if cursors.get(ref.key, name) is not None:
                raise Conflict(
                    f"Topic {meta.name} already has a subscription named {name}; a trigger's "
                    "subscription is its own: pick another trigger name"
                )

    def _subscribe(self, meta: TopicMeta, name: str, spec: TriggerSpec) -> None:
        """Create (or update) the trigger's subscription on every partition."""
        for ref in self._topics.partitions_of(meta):
            handle = self._subscriptions.subscribe(
                ref.topic,
                name,
                CONSUMER_NAME,
                spec.subscription_type,
                spec.earliest,
                dead_letter=spec.dead_letter,
            )
            self._subscriptions.close(ref.topic, name, handle.consumer_id, wake=False)
