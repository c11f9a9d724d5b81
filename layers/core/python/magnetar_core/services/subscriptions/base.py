"""The shared plumbing of subscriptions: the service's state, limits, and the optimistic
read-modify-write of a cursor item (read strongly consistent, change purely, write on the
version read, retry a lost race with jitter)."""

from __future__ import annotations

import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from magnetar_core.adapters.aws.cursors import CursorStore
from magnetar_core.adapters.aws.entries import EntryStore
from magnetar_core.adapters.aws.log import LogStore
from magnetar_core.domain.cursor.state import CursorState
from magnetar_core.domain.errors import (
    ConditionFailed,
    ConsumerNotFound,
    InvalidMessage,
    ServiceUnitNotReady,
    SubscriptionNotFound,
)
from magnetar_core.domain.names import TopicName
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.timers import DelayTimers, TimerOptions
from magnetar_core.services.index_cache import IndexCache
from magnetar_core.services.topics import PartitionRef, Topics

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
class DeliveredEntry:
    """An entry handed to a consumer, with its bytes exactly as produced."""

    topic: TopicName
    ledger_id: int
    entry_id: int
    partition: int
    redelivery_count: int
    batch_indexes: tuple[int, ...] | None
    data: bytes | None
    url: str | None = None
    url_range: tuple[int, int] | None = None
    """With ``url``: ``(offset, length)`` of the entry in the object (segments hold many)."""


@dataclass(frozen=True)
class DispatchLimits:
    """Knobs of the dispatcher: times in ms."""

    max_wait_ms: int = 20_000
    check_interval_ms: int = 100
    max_unacked_entries: int = 50_000
    max_attempts: int = 16
    cursor_recheck_every: int = 10
    consumer_lease_ms: int = 60_000
    key_shared_max_unacked_messages: int = 5_000
    """Key_Shared: messages in flight to one consumer (bounds the cursor item's masks)."""
    key_shared_window_entries: int = 500
    """Key_Shared: redelivery entries scanned per receive; beyond it, no new entries."""
    key_shared_max_masked_entries: int = 10_000
    """Key_Shared: partly leased batch entries per subscription (each costs a mask)."""


class SubscriptionBase:
    """State and plumbing shared by the consumer, dispatch and acknowledgement use cases."""

    def __init__(
        self,
        topics: Topics,
        log: LogStore,
        cursors: CursorStore,
        entries: EntryStore,
        runtime: Runtime,
        limits: DispatchLimits,
        index_cache: IndexCache,
        inline_entry_max_bytes: int = 1024 * 1024,
        response_inline_budget_bytes: int = 3 * 1024 * 1024,
    ) -> None:
        self.non_persistent = None  # NonPersistent, set by the engine (non-persistent topics)
        self.timers = DelayTimers(TimerOptions(), None, runtime.now_ms)  # set by the engine
        self.producer = None  # Producer, set by the engine (dead letters are published)
        self.namespaces = None  # Namespaces, set by the engine (the delayed delivery switch)
        self._dead_letters_ready: set[str] = set()
        self._dead_letters_retry_at: dict[str, float] = {}
        self._inline_max = inline_entry_max_bytes
        self._inline_budget = response_inline_budget_bytes
        self._topics = topics
        self._log = log
        self._cursors = cursors
        self._entries = entries
        self._rt = runtime
        self._limits = limits
        self._index = index_cache
        self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="entry-get")

    def _cursor(self, ref: PartitionRef, subscription: str, consumer_id: str) -> CursorState:
        state = self._cursors.get(ref.key, subscription)
        if state is None:
            raise SubscriptionNotFound(f"Subscription {subscription} does not exist on {ref.topic}")
        self._require_consumer(state, consumer_id)
        return state

    @staticmethod
    def _require_consumer(state: CursorState, consumer_id: str) -> None:
        if consumer_id not in state.consumers:
            raise ConsumerNotFound(
                f"Consumer {consumer_id} is not connected to subscription {state.subscription}; subscribe again"
            )

    def _hashes_of(self, ref: PartitionRef) -> Callable[[list[int]], dict[int, tuple[int, ...]]]:
        """A loader of per-message sticky key hashes, through the index cache."""

        def load(entry_ids: list[int]) -> dict[int, tuple[int, ...]]:
            items = self._index.resolve(ref.key, entry_ids, self._log.get_many)
            return {e: item.message_hashes() for e, item in items.items()}

        return load

    def _update(
        self,
        ref: PartitionRef,
        subscription: str,
        change: Callable[[CursorState], tuple[T, bool]],
        missing_ok: bool = False,
        default: T | None = None,
    ) -> T:
        for attempt in range(self._limits.max_attempts):
            state = self._cursors.get(ref.key, subscription)
            if state is None:
                if missing_ok:
                    return default
                raise SubscriptionNotFound(
                    f"Subscription {subscription} does not exist on {ref.topic}"
                )
            result, changed = change(state)
            if not changed:
                return result
            try:
                self._cursors.put(ref.key, state)
                return result
            except ConditionFailed:
                self._rt.sleep_ms(self._rt.backoff.delay_ms(attempt))
        raise ServiceUnitNotReady(f"Subscription {subscription} is too busy; retry")


def _check_subscription(name: str) -> None:
    if not isinstance(name, str) or not _SUBSCRIPTION.fullmatch(name):
        raise InvalidMessage(
            f"Invalid subscription name {name!r}: use 1-256 letters, digits and - _ = : ."
        )
