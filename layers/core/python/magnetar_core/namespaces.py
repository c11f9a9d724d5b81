"""Namespace and topic policies as the data paths see them, cached per process briefly."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from .errors import ConditionFailed, InvalidMessage, ServiceUnitNotReady, TopicBusy
from .names import TopicName
from .policies import Runtime
from .policy_values import DelayedDeliveryPolicies
from .storage.policies import NamespacePolicies, PolicyStore
from .storage.topics import TopicStore
from .topics import Topics

MIN_MESSAGE_SIZE = 1024
MAX_MESSAGE_SIZE = 100 * 1024 * 1024
UPDATE_ATTEMPTS = 8


@dataclass(frozen=True)
class EffectivePolicies:
    """What applies to one topic: its own setting, else its namespace's, else the default."""

    deduplication: bool
    max_message_size_bytes: int
    delayed_delivery_active: bool = True
    delayed_delivery_tick_ms: int = 1000
    delayed_delivery_max_delay_ms: int = 0


class Namespaces:
    """Policy administration and lookup. Lookups are cached for ``cache_ms`` per process, so
    a change reaches warm Lambda containers within that time."""

    def __init__(
        self,
        store: PolicyStore,
        topic_store: TopicStore,
        topics: Topics,
        runtime: Runtime,
        default_max_message_size: int,
        cache_ms: int,
        *,
        delayed_delivery_enabled: bool = True,
        delayed_delivery_tick_ms: int = 1000,
    ) -> None:
        self._store = store
        self._topic_store = topic_store
        self._topics = topics
        self._rt = runtime
        self._default_max = default_max_message_size
        self._cache_ms = cache_ms
        self._default_delayed = DelayedDeliveryPolicies(
            delayed_delivery_enabled, delayed_delivery_tick_ms
        )
        self._cache: dict[str, tuple[float, NamespacePolicies]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _namespace(name: TopicName) -> str:
        return f"{name.tenant}/{name.namespace}"

    def get(self, tenant: str, namespace: str) -> NamespacePolicies:
        """The namespace's stored policies (fresh read)."""
        return self._store.get(f"{tenant}/{namespace}")

    def _cached(self, namespace: str, fresh: bool) -> NamespacePolicies:
        now = self._rt.monotonic_ms()
        with self._lock:
            hit = self._cache.get(namespace)
        if hit is not None and not fresh and now - hit[0] < self._cache_ms:
            return hit[1]
        policies = self._store.get(namespace)
        with self._lock:
            self._cache[namespace] = (now, policies)
        return policies

    def max_message_size(self, tenant: str, namespace: str) -> int:
        """The namespace's maximum message size in bytes (the default when unset)."""
        return self.get(tenant, namespace).max_message_size_bytes or self._default_max

    def effective(self, name: TopicName, *, fresh: bool = False) -> EffectivePolicies:
        """The policies that apply to ``name`` (its topic-level dedup override included)."""
        ns = self._cached(self._namespace(name), fresh)
        topic = self._topic_store.get(name.base) if fresh else self._topics.cached_meta(name.base)
        dedup = (
            topic.deduplication if topic is not None and topic.deduplication is not None else None
        )
        delayed = ns.delayed_delivery or self._default_delayed
        return EffectivePolicies(
            deduplication=bool(dedup if dedup is not None else ns.deduplication),
            max_message_size_bytes=ns.max_message_size_bytes or self._default_max,
            delayed_delivery_active=delayed.active,
            delayed_delivery_tick_ms=delayed.tick_time_ms,
            delayed_delivery_max_delay_ms=delayed.max_delivery_delay_ms,
        )

    def _update(self, tenant: str, namespace: str, **changes) -> None:
        """Change some of a namespace's policies with a versioned write, retried while other
        writers win; raises ServiceUnitNotReady when they keep winning."""
        ns = f"{tenant}/{namespace}"
        for attempt in range(UPDATE_ATTEMPTS):
            try:
                self._store.put(ns, self._store.get(ns).with_changes(**changes))
            except ConditionFailed:
                self._rt.sleep_ms(self._rt.backoff.delay_ms(attempt))
                continue
            with self._lock:
                self._cache.pop(ns, None)
            return
        raise ServiceUnitNotReady(f"Policies of {ns} kept changing meanwhile; retry")

    def set_deduplication(self, tenant: str, namespace: str, enabled: object) -> None:
        """Turn deduplication on or off for a namespace; raises InvalidMessage."""
        if not isinstance(enabled, bool):
            raise InvalidMessage("The body must be true or false")
        self._update(tenant, namespace, deduplication=enabled)

    def set_max_message_size(self, tenant: str, namespace: str, size: object) -> None:
        """Set a namespace's maximum message size in bytes; raises InvalidMessage."""
        if (
            isinstance(size, bool)
            or not isinstance(size, int)
            or not MIN_MESSAGE_SIZE <= size <= MAX_MESSAGE_SIZE
        ):
            raise InvalidMessage(
                f"The maximum message size must be an integer from {MIN_MESSAGE_SIZE} to {MAX_MESSAGE_SIZE} bytes"
            )
        self._update(tenant, namespace, max_message_size_bytes=size)

    def delayed_delivery(self, tenant: str, namespace: str) -> DelayedDeliveryPolicies:
        """The namespace's delayed delivery policies (the service defaults when unset)."""
        return self.get(tenant, namespace).delayed_delivery or self._default_delayed

    def set_delayed_delivery(self, tenant: str, namespace: str, body: object) -> None:
        """Set a namespace's DelayedDeliveryPolicies from Pulsar's JSON body; raises
        InvalidMessage (nothing changes)."""
        policies = DelayedDeliveryPolicies.from_body(body, self._default_delayed.tick_time_ms)
        self._update(tenant, namespace, delayed_delivery=policies)

    def remove_delayed_delivery(self, tenant: str, namespace: str) -> None:
        """Back to the service defaults (DELAYED_DELIVERY_ENABLED, DELAYED_DELIVERY_TICK_MS)."""
        self._update(tenant, namespace, delayed_delivery=None)

    def set_topic_deduplication(self, name: TopicName, enabled: object) -> None:
        """Topic-level deduplication override; raises InvalidMessage, TopicNotFound, TopicBusy."""
        if not isinstance(enabled, bool):
            raise InvalidMessage("The body must be true or false")
        meta = self._topics.get(name)
        updated = type(meta)(
            **{**meta.__dict__, "deduplication": enabled, "version": meta.version + 1}
        )
        try:
            self._topic_store.put(updated, meta)
        except ConditionFailed:
            raise TopicBusy(f"Topic {name} changed meanwhile; retry") from None
        self._topics.invalidate(name)
