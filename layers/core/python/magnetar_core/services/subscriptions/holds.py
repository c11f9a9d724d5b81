"""Lease holds of watching consumers (issue 16, ``domain.notify``): a notification channel's
watch keeps a consumer registered while it sleeps; its connection's end lets it lapse again."""

from __future__ import annotations

from magnetar_core.domain import notify
from magnetar_core.domain.cursor.state import CursorState
from magnetar_core.domain.errors import NotAllowedError, TopicNotFound
from magnetar_core.services.subscriptions.base import SubscriptionContext
from magnetar_wire.names import TopicName


class Holds:
    """Holds and releases consumers' leases on their cursors."""

    def __init__(self, context: SubscriptionContext) -> None:
        self._ctx = context

    def hold(
        self,
        topic: TopicName,
        subscription: str,
        consumer_id: str,
        connection_id: str,
        role: str | None = None,
    ) -> int | None:
        """Hold the consumer's lease for ``connection_id`` (``notify.HOLD_MS`` from now);
        returns when the cursor may have work without a commit (``notify.recheck_at_ms``).
        Raises TopicNotFound, SubscriptionNotFound, ConsumerNotFound (subscribe again),
        AuthorizationError (``role`` is not the consumer's); nothing changes then."""
        ref = self._ctx.topics.resolve(topic, create=False)

        lease_ms = self._ctx.limits.consumer_lease_ms

        def change(state: CursorState) -> tuple[int | None, bool]:
            self._ctx.require_consumer(state, consumer_id, role)
            now = self._ctx.runtime.now_ms()
            dirty = notify.hold(state.consumers[consumer_id], connection_id, now)
            return notify.recheck_at_ms(state, consumer_id, lease_ms), dirty

        return self._ctx.update(ref, subscription, change)

    def release(
        self, topic: TopicName, subscription: str, consumer_id: str, connection_id: str
    ) -> bool:
        """End the hold ``connection_id`` has on the consumer (its ordinary lease runs from
        now); False when there was none (the consumer, its cursor or its topic are gone, or
        another connection holds it). Raises only what the store raises."""
        try:
            ref = self._ctx.topics.resolve(topic, create=False)
        except (TopicNotFound, NotAllowedError):  # a deleted topic holds nothing
            return False

        def change(state: CursorState) -> tuple[bool, bool]:
            info = state.consumers.get(consumer_id)
            if info is None:
                return False, False
            released = notify.release(info, connection_id, self._ctx.runtime.now_ms())
            return released, released

        return self._ctx.update(ref, subscription, change, missing_ok=True, default=False)
