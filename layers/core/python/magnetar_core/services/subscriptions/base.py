"""What the parts of the subscription service share: the ``SubscriptionContext`` (the
topics service, the stores, the runtime, the limits, the index cache) with the optimistic
read-modify-write of a cursor item (read strongly consistent, change purely, write on the
version read, retry a lost race with jitter), and the values the service hands out."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar, overload

from magnetar_core.domain.cursor.grants import GrantPolicy
from magnetar_core.domain.cursor.records import ConsumerInfo
from magnetar_core.domain.cursor.state import CursorState
from magnetar_core.domain.errors import (
    ConsumerNotFound,
    InvalidMessage,
    ServiceUnitNotReady,
    SubscriptionNotFound,
)
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.security.policy import AuthorizationError
from magnetar_core.ports import CursorStore, EntryStore, LogStore
from magnetar_core.services import optimistic
from magnetar_core.services.entries import DeliveredEntry
from magnetar_core.services.index_cache import IndexCache
from magnetar_core.services.subscriptions.granted import GrantedSubscriptions
from magnetar_core.services.topics import PartitionRef, Topics
from magnetar_wire.names import TopicName

__all__ = [
    "ConsumerHandle",
    "DeliveredEntry",
    "DispatchLimits",
    "SubscriptionContext",
    "check_subscription",
]

T = TypeVar("T")
_SUBSCRIPTION = re.compile(r"^[A-Za-z0-9_=:.\-]{1,256}$")


@dataclass(frozen=True)
class ConsumerHandle:
    """A registered consumer, as returned to the client on subscribe."""

    consumer_id: str
    consumer_name: str
    subscription: str
    topic: TopicName


@dataclass(frozen=True)
class DispatchLimits:
    """Knobs of the dispatcher: times in ms."""

    max_wait_ms: int = 20_000
    check_interval_ms: int = 100
    """The longest pause between two head checks of a long-poll."""
    check_min_interval_ms: int = 20
    """The shortest, right after activity, when no commit can wake the wait (AWS)."""
    max_unacked_entries: int = 50_000
    max_attempts: int = 16
    cursor_recheck_every: int = 10
    consumer_lease_ms: int = 60_000
    key_shared_max_unacked_messages: int = 5_000
    """Key_Shared: messages in flight to one consumer (bounds the cursor item's masks)."""
    key_shared_window_entries: int = 2_000
    """Key_Shared: redelivery entries scanned per receive; beyond it, no new entries. With
    32 consumers a window of 500 held ~16 messages of each, so a receive (a cursor write)
    took few; 2,000 (scanned from the index cache; the redelivery set costs the cursor item
    a few bytes an entry) took key_shared-32-prefetch on the scale model from 358 to 706
    msg/s."""
    key_shared_max_masked_entries: int = 10_000
    """Key_Shared: partly leased batch entries per subscription (each costs a mask)."""
    grants: GrantPolicy = GrantPolicy()
    """Shared: how many entries one grant leases to a consumer (``domain.cursor.grants``)."""


def consumer_owned_by(info: ConsumerInfo, role: str | None, subscription: str) -> None:
    """Raise AuthorizationError (403) when ``role`` acts on a consumer another role
    registered: a consumer id (listed by stats) is not a credential. A consumer registered
    with authentication off (no role) and a caller with none (off now) pass."""
    if role is not None and info.role is not None and info.role != role:
        raise AuthorizationError(
            f"Role '{role}' may not act on consumer {info.consumer_id} ('{info.name}') of "
            f"subscription {subscription}: another role registered it, and only that role "
            "may use it; subscribe a consumer of your own"
        )


@dataclass(frozen=True)
class SubscriptionContext:
    """The collaborators every part of the subscription service uses, and the cursor
    operations they share."""

    topics: Topics
    log: LogStore
    cursors: CursorStore
    entries: EntryStore
    runtime: Runtime
    limits: DispatchLimits
    index: IndexCache
    granted: GrantedSubscriptions = field(default_factory=GrantedSubscriptions)
    """Which subscriptions this container last read as taking grants."""

    def cursor(
        self, ref: PartitionRef, subscription: str, consumer_id: str, role: str | None = None
    ) -> CursorState:
        """The cursor, read strongly consistent, with ``consumer_id`` connected to it (and
        bound to ``role``). Raises SubscriptionNotFound, ConsumerNotFound, AuthorizationError."""
        state = self.cursors.get(ref.key, subscription)
        if state is None:
            raise self.missing(ref, subscription)
        self.require_consumer(state, consumer_id, role)
        return state

    def missing(self, ref: PartitionRef, subscription: str) -> Exception:
        """The error for a cursor that is not there. The topic's cached metadata is dropped:
        the topic may have been deleted and created again (a new ledger, where the client's
        next subscribe and requests go), so the next request reads it fresh."""
        self.topics.invalidate(ref.topic)
        return SubscriptionNotFound(f"Subscription {subscription} does not exist on {ref.topic}")

    @staticmethod
    def require_consumer(state: CursorState, consumer_id: str, role: str | None = None) -> None:
        """Raise ConsumerNotFound unless ``consumer_id`` is connected to ``state``, and
        AuthorizationError (403) when ``role`` (None: authentication off) is not the role
        the consumer was registered by (``consumer_owned_by``)."""
        info = state.consumers.get(consumer_id)
        if info is None:
            raise ConsumerNotFound(
                f"Consumer {consumer_id} is not connected to subscription {state.subscription}; subscribe again"
            )
        consumer_owned_by(info, role, state.subscription)

    def hashes_of(self, ref: PartitionRef) -> Callable[[list[int]], dict[int, tuple[int, ...]]]:
        """A loader of per-message sticky key hashes, through the index cache."""

        def load(entry_ids: list[int]) -> dict[int, tuple[int, ...]]:
            items = self.index.resolve(ref.key, entry_ids, self.log.get_many)
            return {e: item.message_hashes() for e, item in items.items()}

        return load

    @overload
    def update(
        self,
        ref: PartitionRef,
        subscription: str,
        change: Callable[[CursorState], tuple[T, bool]],
        *,
        prepare: Callable[[CursorState], None] | None = None,
    ) -> T: ...

    @overload
    def update(
        self,
        ref: PartitionRef,
        subscription: str,
        change: Callable[[CursorState], tuple[T, bool]],
        missing_ok: bool,
        default: T,
        *,
        prepare: Callable[[CursorState], None] | None = None,
    ) -> T: ...

    def update(
        self,
        ref: PartitionRef,
        subscription: str,
        change: Callable[[CursorState], tuple[T, bool]],
        missing_ok: bool = False,
        default: T | None = None,
        *,
        prepare: Callable[[CursorState], None] | None = None,
    ) -> T | None:
        """One optimistic update of a cursor: ``change`` mutates the state read and returns
        ``(result, whether to write)``; a lost write starts over from a fresh read (up to
        ``limits.max_attempts`` times). A missing cursor gives ``default`` when
        ``missing_ok``. Raises SubscriptionNotFound, ServiceUnitNotReady (every attempt
        lost), and what ``change`` raises. ``prepare`` sees each state read before
        ``change`` (I/O allowed: taking grants back before the change takes entries)."""

        def read() -> CursorState | None:
            state = self.cursors.get(ref.key, subscription)
            if state is None and not missing_ok:
                raise self.missing(ref, subscription)
            if state is not None and prepare is not None:
                prepare(state)
            return state

        def apply(state: CursorState | None) -> tuple[T | None, CursorState | None]:
            if state is None:
                return default, None
            result, dirty = change(state)
            return optimistic.changed(state, result, dirty)

        outcome = optimistic.update(
            read, apply, self.put(ref), self.runtime, self.limits.max_attempts
        )
        if isinstance(outcome, optimistic.Conflict):
            raise ServiceUnitNotReady(f"Subscription {subscription} is too busy; retry")
        return outcome

    def put(self, ref: PartitionRef) -> Callable[[CursorState], None]:
        """The conditional write of a cursor of ``ref`` (raises ConditionFailed)."""
        return lambda state: self.cursors.put(ref.key, state)


def check_subscription(name: str) -> None:
    """Raise InvalidMessage unless ``name`` is a valid subscription name."""
    if not isinstance(name, str) or not _SUBSCRIPTION.fullmatch(name):
        raise InvalidMessage(
            f"Invalid subscription name {name!r}: use 1-256 letters, digits and - _ = : ."
        )
