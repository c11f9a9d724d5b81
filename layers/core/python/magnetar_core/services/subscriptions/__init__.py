"""Subscriptions: consumers, the long-poll receive (dispatcher), acks, nacks, redelivery.

Every operation is one optimistic read-modify-write of the cursor item: read it strongly
consistent, apply a pure change (``domain.cursor.CursorState``), write it conditional on the
version, and on a lost race retry with jitter. A receive commits the lease before it reads
entry objects, so a crash in between only delays those messages (at-least-once).

``Subscriptions`` is composed of one object per concern, all over one shared
``SubscriptionContext``: ``Seeking`` (positions), ``Lifecycle`` (subscribe ... unsubscribe),
``Dispatch`` (receive; with ``Fetcher`` and ``DeadLettering``), ``Acknowledgements`` and
``CursorOperations`` (an operator's skip, clear backlog, expire, reset, create).
"""

from __future__ import annotations

from magnetar_core.domain import metering
from magnetar_core.domain.cursor.state import KeySharedOptions
from magnetar_core.domain.dead_letter import DeadLetterPolicy
from magnetar_core.domain.response_budget import ResponseBudget
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.timers import NackBackoff
from magnetar_core.ports import ChannelWakes, CommitSignal, CursorStore, EntryStore, LogStore
from magnetar_core.services.index_cache import IndexCache
from magnetar_core.services.namespaces import Namespaces
from magnetar_core.services.nonpersistent import NonPersistent
from magnetar_core.services.produce import Producer
from magnetar_core.services.subscriptions.acks import Acknowledgements
from magnetar_core.services.subscriptions.base import (
    ConsumerHandle,
    DeliveredEntry,
    DispatchLimits,
    SubscriptionContext,
)
from magnetar_core.services.subscriptions.compacted_reads import CompactedReads
from magnetar_core.services.subscriptions.dead_lettering import DeadLettering
from magnetar_core.services.subscriptions.dispatch import Dispatch
from magnetar_core.services.subscriptions.fetching import Fetcher
from magnetar_core.services.subscriptions.lifecycle import Lifecycle
from magnetar_core.services.subscriptions.operations import CursorOperations
from magnetar_core.services.subscriptions.seeking import Seeking
from magnetar_core.services.throttling import Throttling
from magnetar_core.services.timers import DelayTimers
from magnetar_core.services.topics import PartitionRef, Topics
from magnetar_wire.names import TopicName

__all__ = ["ConsumerHandle", "DeliveredEntry", "DispatchLimits", "Subscriptions"]


class Subscriptions:
    """The server side of consumers: lifecycle, positions, dispatch and acknowledgements.

    ``timers`` bucket and start delays, ``namespaces`` say whether delayed delivery is on,
    ``producer`` publishes dead letters, ``non_persistent`` serves non-persistent topics,
    ``compacted`` serves ``readCompacted`` cursors. ``response`` bounds what one receive
    response carries (``domain.response_budget``). ``signal``: commits wake long-polls.
    ``wakes``: what a nack, a redelivery, a close or a seek gives back wakes the notification
    channel's sleepers of the partition (None: no one is told).
    """

    def __init__(
        self,
        topics: Topics,
        log: LogStore,
        cursors: CursorStore,
        entries: EntryStore,
        runtime: Runtime,
        limits: DispatchLimits,
        index_cache: IndexCache,
        *,
        timers: DelayTimers,
        namespaces: Namespaces,
        producer: Producer,
        non_persistent: NonPersistent,
        compacted: CompactedReads,
        response: ResponseBudget | None = None,
        download_url_expiry_s: int = 60,
        throttling: Throttling | None = None,
        signal: CommitSignal | None = None,
        wakes: ChannelWakes | None = None,
    ) -> None:
        self._wakes = wakes
        self._throttling = throttling  # subscribeRate, dispatch rates (None: none)
        parts = (topics, log, cursors, entries, runtime, limits, index_cache)
        self.context = SubscriptionContext(*parts)
        self.seeking = Seeking(self.context)
        self.lifecycle = Lifecycle(self.context, self.seeking)
        self.operations = CursorOperations(self.context, self.seeking)
        self.dead_letters = DeadLettering(self.context, producer)
        self.dispatch = Dispatch(
            self.context,
            timers,
            namespaces,
            self.dead_letters,
            non_persistent,
            compacted,
            Fetcher(entries, response or ResponseBudget(), download_url_expiry_s),
            signal,
        )
        self.acks = Acknowledgements(self.context, timers)

    # -- lifecycle (see Lifecycle) ----------------------------------------------------------

    def subscribe(
        self,
        topic: TopicName,
        subscription: str,
        consumer_name: str | None,
        sub_type: str,
        earliest: bool,
        priority_level: int = 0,
        spread: bool = False,
        start_message_id: str | None = None,
        inclusive: bool = False,
        durable: bool = True,
        key_shared: KeySharedOptions | None = None,
        dead_letter: DeadLetterPolicy | None = None,
        read_compacted: bool = False,
        role: str | None = None,
    ) -> ConsumerHandle:
        """Register a consumer bound to ``role`` (``Lifecycle.subscribe``: options and
        errors there; TooManyRequests past the subscribeRate). Every call on a consumer
        below takes the caller's ``role`` (None: authentication off) and raises
        AuthorizationError (403) when another role registered it."""
        if self._throttling is not None and topic.persistent:
            self._throttling.admit_subscribe(topic, subscription, consumer_name or "")
        return self.lifecycle.subscribe(
            topic, subscription, consumer_name, sub_type, earliest, priority_level, spread,
            start_message_id, inclusive, durable, key_shared, dead_letter, read_compacted, role,
        )  # fmt: skip

    def heartbeat(
        self, topic: TopicName, subscription: str, consumer_id: str, role: str | None = None
    ) -> None:
        """Keep a consumer's lease alive without receiving; raises ConsumerNotFound."""
        self.lifecycle.heartbeat(topic, subscription, consumer_id, role)

    def close(
        self, topic: TopicName, subscription: str, consumer_id: str, role: str | None = None,
        *, wake: bool = True,
    ) -> int:  # fmt: skip
        """Unregister a consumer; its unacked entries go back for redelivery and wake the
        channel's sleepers (``wake`` False: not them, as for a trigger's own consumer);
        returns how many. Idempotent."""
        moved = self.lifecycle.close(topic, subscription, consumer_id, role)
        if wake:
            self.wake(topic, moved)
        return moved

    def unsubscribe(
        self, topic: TopicName, subscription: str, consumer_id: str, role: str | None = None
    ) -> None:
        """Delete the subscription on behalf of one of its consumers (``Lifecycle``)."""
        self.lifecycle.unsubscribe(topic, subscription, consumer_id, role)

    def delete_subscription(self, topic: TopicName, subscription: str, force: bool) -> None:
        """Admin: delete a subscription; raises SubscriptionNotFound, ConsumerBusy."""
        self.lifecycle.delete_subscription(topic, subscription, force)

    # -- positions (see Seeking) ------------------------------------------------------------

    def position_of(
        self, ref: PartitionRef, message_id: str, inclusive: bool
    ) -> tuple[int, int, int]:
        """``(entry_id, skip, batch_size)`` a cursor starts at for ``message_id``."""
        return self.seeking.position_of(ref, message_id, inclusive)

    def entry_at_time(self, ref: PartitionRef, timestamp_ms: int) -> int:
        """The first entry whose messages were published at or after ``timestamp_ms``."""
        return self.seeking.entry_at_time(ref, timestamp_ms)

    def seek(
        self,
        topic: TopicName,
        subscription: str,
        consumer_id: str,
        *,
        message_id: str | None = None,
        timestamp_ms: int | None = None,
        inclusive: bool = False,
        role: str | None = None,
    ) -> None:
        """Reset the subscription to a message id or a publish time (``Seeking.seek``),
        then wake the channel's sleepers of ``topic``."""
        self.seeking.seek(
            topic,
            subscription,
            consumer_id,
            message_id=message_id,
            timestamp_ms=timestamp_ms,
            inclusive=inclusive,
            role=role,
        )
        self.wake(topic)

    def last_message_id(self, topic: TopicName) -> str | None:
        """The id of the last message of a topic or partition (None when empty)."""
        return self.seeking.last_message_id(topic)

    def last_message(self, topic: TopicName) -> tuple[str | None, bool]:
        """The last message id (None when empty) and whether the topic was terminated."""
        return self.seeking.last_message(topic)

    # -- dispatch (see Dispatch) ------------------------------------------------------------

    def receive(
        self,
        topic: TopicName,
        subscription: str,
        consumer_id: str,
        max_messages: int,
        wait_ms: int,
        by_reference: bool = False,
        role: str | None = None,
    ) -> list[DeliveredEntry]:
        """Dispatch up to ``max_messages`` messages, long-polling up to ``wait_ms``
        (``Dispatch.receive``); fewer, or none after a wait, under a dispatch rate."""
        # a bad max_messages goes on to the dispatcher, which refuses it (InvalidMessage)
        throttle = self._throttling if topic.persistent and max_messages > 0 else None
        if throttle is not None:
            allowed, throttled_ms = throttle.dispatch_allowance(topic, subscription, max_messages)
            if allowed <= 0:  # wait (within the long poll) for the limiter, not in a spin
                self.context.runtime.sleep_ms(min(throttled_ms, wait_ms))
                allowed, _ = throttle.dispatch_allowance(topic, subscription, max_messages)
                if allowed <= 0:
                    return []
            max_messages = allowed
        delivered = self.dispatch.receive(
            topic, subscription, consumer_id, max_messages, wait_ms, by_reference, role
        )
        if throttle is not None and delivered:
            throttle.dispatched(topic, subscription, *_sizes(delivered))
        return delivered

    # -- acknowledgements (see Acknowledgements) --------------------------------------------

    def acknowledge(
        self,
        topic: TopicName,
        subscription: str,
        consumer_id: str,
        message_ids: list[str],
        cumulative: bool,
        role: str | None = None,
    ) -> int:
        """Acknowledge messages; returns how many positions changed the cursor."""
        done = self.acks.acknowledge(
            topic, subscription, consumer_id, message_ids, cumulative, role
        )
        metering.count(metering.ACKS, done)
        return done

    def negative_acknowledge(
        self,
        topic: TopicName,
        subscription: str,
        consumer_id: str,
        message_ids: list[str],
        delay_ms: int = 0,
        backoff: NackBackoff | None = None,
        redelivery_counts: dict[str, int] | None = None,
        role: str | None = None,
        counted: bool = True,
        wake: bool = True,
    ) -> int:
        """Send these messages' entries back for redelivery, now or after a delay, unless
        the nack is stale (``Acknowledgements.negative_acknowledge``), and wake the
        channel's sleepers of ``topic``; returns how many. ``counted`` False: their
        redelivery counts stay as they are; ``wake`` False: no sleeper is told (a trigger's
        own consumer)."""
        moved = self.acks.negative_acknowledge(
            topic, subscription, consumer_id, message_ids, delay_ms, backoff,
            redelivery_counts, role, counted,
        )  # fmt: skip
        metering.count(metering.NACKS, moved)
        if wake:
            self.wake(topic, moved)
        return moved

    def redeliver_unacknowledged(
        self, topic: TopicName, subscription: str, consumer_id: str, role: str | None = None
    ) -> int:
        """Send everything in flight to this consumer back for redelivery and wake the
        channel's sleepers of ``topic``; returns how many."""
        moved = self.acks.redeliver_unacknowledged(topic, subscription, consumer_id, role)
        metering.count(metering.NACKS, moved)
        self.wake(topic, moved)
        return moved

    def wake(self, topic: TopicName, moved: int = 1) -> None:
        """Tell the channel's sleepers of partition ``topic`` that ``moved`` entries can be
        received again without a commit (``ChannelWakes.wake``: never raises)."""
        if self._wakes is not None:
            self._wakes.wake(topic, moved)


def _sizes(delivered: list[DeliveredEntry]) -> tuple[int, int]:
    """``(messages, bytes)`` of a receive's entries (an entry without batch indexes: 1)."""
    messages = sum(len(d.batch_indexes) if d.batch_indexes is not None else 1 for d in delivered)
    size = sum(len(d.data) if d.data is not None else (d.url_range or (0, 0))[1] for d in delivered)
    return messages, size
