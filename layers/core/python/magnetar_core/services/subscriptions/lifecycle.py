"""Consumer lifecycle: subscribe (with Failover priority), heartbeat, close, unsubscribe."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from magnetar_core.domain.cursor.grants import reclaim
from magnetar_core.domain.cursor.state import (
    KEY_SHARED,
    SUBSCRIPTION_TYPES,
    ConsumerInfo,
    CursorState,
    KeySharedOptions,
)
from magnetar_core.domain.dead_letter import DeadLetterPolicy
from magnetar_core.domain.errors import (
    ConditionFailed,
    ConsumerBusy,
    InvalidMessage,
    ServiceUnitNotReady,
    SubscriptionNotFound,
)
from magnetar_core.services import optimistic
from magnetar_core.services.subscriptions.base import (
    ConsumerHandle,
    SubscriptionContext,
    check_subscription,
    consumer_owned_by,
)
from magnetar_core.services.subscriptions.compacted_reads import check_read_compacted
from magnetar_core.services.subscriptions.grants import Grants, Revoked
from magnetar_core.services.subscriptions.seeking import Seeking
from magnetar_core.services.topics import PartitionRef
from magnetar_wire.names import TopicName

_Read = TypeVar("_Read", bound=CursorState | None)
"""What a delete reads: the cursor, or None where a missing one is the caller's to judge."""


class Lifecycle:
    """Registering and unregistering consumers."""

    def __init__(self, context: SubscriptionContext, seeking: Seeking) -> None:
        self._ctx = context
        self._seeking = seeking
        self._grants = Grants(context)

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
        """Register a consumer, creating the subscription at the initial position if new.

        ``priority_level`` (0 is highest) and ``spread`` (part of a multi-topic consumer)
        steer Failover. A new subscription starts after ``start_message_id`` (at it when
        ``inclusive``) when given, else at Earliest/Latest. A non-durable subscription (a
        reader's) holds nothing back and vanishes with its last consumer. Consumers whose
        lease lapsed are disconnected first. ``key_shared`` are a Key_Shared consumer's
        options (``KeyShared`` is accepted as a spelling of ``Key_Shared``).
        ``dead_letter`` becomes the subscription's dead letter policy (None: none; the
        latest subscriber's wins; Shared and Key_Shared dead-letter). ``read_compacted``
        makes it read the compacted view up to the compaction horizon first (the latest
        subscriber's wins; NotAllowedError unless Exclusive or Failover). ``role`` (None:
        authentication off) is bound to the consumer: only it may act on it. Raises
        InvalidMessage (bad name/type), ConsumerBusy (Exclusive taken, type clash, Key_Shared
        options differing from the subscription's), ConsumerAssignError (400: bad STICKY
        ranges) and HashRangeConflict (409: STICKY ranges overlapping another consumer's).
        """
        check_subscription(subscription)
        if sub_type == "KeyShared":
            sub_type = KEY_SHARED
        if sub_type not in SUBSCRIPTION_TYPES:
            raise InvalidMessage(
                f"Unknown subscription type {sub_type!r}: use Exclusive, Shared, Failover or Key_Shared"
            )
        if (
            isinstance(priority_level, bool)
            or not isinstance(priority_level, int)
            or priority_level < 0
        ):
            raise InvalidMessage("priorityLevel must be a non-negative integer (0 is the highest)")
        if read_compacted:
            check_read_compacted(topic, sub_type)
        ctx = self._ctx
        # read fresh: a consumer subscribing again after its topic was deleted (and maybe
        # created again) must join the topic's current ledger, never the cached dead one
        ref = ctx.topics.resolve(topic, create=True, allow_non_persistent=True, fresh=True)
        now = ctx.runtime.now_ms()
        name = consumer_name or ctx.runtime.new_id()[:5]
        info = ConsumerInfo(ctx.runtime.new_id()[:16], name, now, now, priority_level, spread, role)

        def read() -> CursorState:
            state = ctx.cursors.get(ref.key, subscription)
            if state is None:
                state = self._new_cursor(
                    ref, subscription, sub_type, earliest, start_message_id, inclusive
                )
                state.durable = durable
            return state

        revoked = Revoked(self._grants, ref, [], None)

        def read_revoking() -> CursorState:
            state = read()
            revoked.take(state, state.roster.lapsed(now, ctx.limits.consumer_lease_ms))
            return state

        def join(state: CursorState) -> tuple[ConsumerHandle, CursorState]:
            for lapsed in state.roster.lapsed(now, ctx.limits.consumer_lease_ms):
                reclaim(state, lapsed, revoked.get(lapsed), ctx.hashes_of(ref))
            state.expire_consumers(now, ctx.limits.consumer_lease_ms)
            state.add_consumer(info, sub_type, key_shared, ctx.hashes_of(ref))
            state.dead_letter_policy = dead_letter
            state.read_compacted = read_compacted
            return ConsumerHandle(info.consumer_id, info.name, subscription, topic), state

        outcome = optimistic.update(
            read_revoking, join, ctx.put(ref), ctx.runtime, ctx.limits.max_attempts
        )
        if isinstance(outcome, optimistic.Conflict):
            raise ServiceUnitNotReady(f"Subscription {subscription} is too busy to join; retry")
        return outcome

    def _new_cursor(
        self,
        ref: PartitionRef,
        subscription: str,
        sub_type: str,
        earliest: bool,
        start_message_id: str | None,
        inclusive: bool,
    ) -> CursorState:
        if start_message_id is None:
            last = self._ctx.log.last(ref.key)
            return CursorState.new(subscription, sub_type, last.entry_id if last else -1, earliest)
        state = CursorState.new(subscription, sub_type, -1, True)
        state.seek(*self._seeking.start_of(ref, start_message_id, inclusive))
        return state

    def heartbeat(
        self, topic: TopicName, subscription: str, consumer_id: str, role: str | None = None
    ) -> None:
        """Keep a consumer's lease alive without receiving; raises ConsumerNotFound,
        AuthorizationError (``role`` is not the consumer's)."""
        ref = self._ctx.topics.resolve(topic, create=False, allow_non_persistent=True)

        def change(state: CursorState) -> tuple[None, bool]:
            self._ctx.require_consumer(state, consumer_id, role)
            return None, state.touch(consumer_id, self._ctx.runtime.now_ms(), 0)

        self._ctx.update(ref, subscription, change)

    def close(
        self, topic: TopicName, subscription: str, consumer_id: str, role: str | None = None
    ) -> int:
        """Unregister a consumer; its unacked entries go back for redelivery. Idempotent.
        Raises AuthorizationError when ``role`` is not the consumer's (nothing changes)."""
        ref = self._ctx.topics.resolve(topic, create=False, allow_non_persistent=True)

        state = self._ctx.cursors.get(ref.key, subscription)
        if state is not None and consumer_id in state.consumers:
            consumer_owned_by(state.consumers[consumer_id], role, subscription)
        if state is not None and not state.durable and set(state.consumers) <= {consumer_id}:
            try:  # a reader's cursor goes with its last consumer
                self._ctx.cursors.delete(ref.key, state)
                return 0
            except ConditionFailed:
                pass  # changed meanwhile: fall back to an ordinary close

        revoked = Revoked(self._grants, ref, [consumer_id], None, holding_only=False)

        def change(state: CursorState) -> tuple[int, bool]:
            if consumer_id not in state.consumers:
                return 0, False
            consumer_owned_by(state.consumers[consumer_id], role, subscription)
            back = reclaim(state, consumer_id, revoked.get(consumer_id), self._ctx.hashes_of(ref))
            return back + state.remove_consumer(consumer_id), True

        return self._ctx.update(
            ref, subscription, change, missing_ok=True, default=0, prepare=revoked.prepare
        )

    def unsubscribe(
        self, topic: TopicName, subscription: str, consumer_id: str, role: str | None = None
    ) -> None:
        """Delete the subscription on behalf of one of its consumers.

        Raises ConsumerNotFound, ConsumerBusy when other consumers are connected,
        AuthorizationError when ``role`` is not the consumer's, ServiceUnitNotReady
        (changed by others at every attempt). A delete that loses its race to another
        cursor write reads the cursor again and retries (``optimistic.update``), as the
        admin's delete does.
        """
        ref = self._ctx.topics.resolve(topic, create=False, allow_non_persistent=True)

        def read() -> CursorState:
            return self._ctx.cursor(ref, subscription, consumer_id, role)

        def check(state: CursorState) -> CursorState:
            if set(state.consumers) - {consumer_id}:
                raise ConsumerBusy(f"Subscription {subscription} has other connected consumers")
            return state

        self._delete_cursor(ref, subscription, read, check)

    def delete_subscription(self, topic: TopicName, subscription: str, force: bool) -> None:
        """Admin: delete a subscription; raises SubscriptionNotFound, ConsumerBusy,
        ServiceUnitNotReady (changed by others at every attempt). A delete that loses its
        race to a consumer's write (a forced delete while a consumer still receives, acks or
        closes) reads the cursor again and retries, as every cursor update does."""
        ref = self._ctx.topics.resolve(topic, create=False, allow_non_persistent=True)

        def read() -> CursorState | None:
            return self._ctx.cursors.get(ref.key, subscription)

        def check(state: CursorState | None) -> CursorState:
            if state is None:
                raise SubscriptionNotFound(f"Subscription {subscription} does not exist on {topic}")  # fmt: skip
            if state.consumers and not force:
                raise ConsumerBusy(
                    f"Subscription {subscription} has {len(state.consumers)} connected consumers; use force=true"
                )
            return state

        self._delete_cursor(ref, subscription, read, check)

    def _delete_cursor(
        self,
        ref: PartitionRef,
        subscription: str,
        read: Callable[[], _Read],
        check: Callable[[_Read], CursorState],
    ) -> None:
        """Delete the cursor ``read`` gives once ``check`` allows it (raising otherwise),
        through the optimistic-update helper: a delete that loses its race to another
        cursor write reads again and checks anew; ServiceUnitNotReady when every attempt
        lost."""

        def change(state: _Read) -> tuple[None, CursorState]:
            return None, check(state)

        def write(state: CursorState) -> None:
            self._ctx.cursors.delete(ref.key, state)

        outcome = optimistic.update(
            read, change, write, self._ctx.runtime, self._ctx.limits.max_attempts
        )
        if isinstance(outcome, optimistic.Conflict):
            raise ServiceUnitNotReady(f"Subscription {subscription} changed meanwhile; retry")
