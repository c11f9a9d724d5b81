"""The policies that apply to a topic as the data paths and the maintenance jobs see them:
its own overrides, else its namespace's, else the service defaults; namespaces' policies
cached per process briefly (``Namespaces`` administers them and tells the cache of a change)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TypeVar

from magnetar_core.domain.policies import (
    DelayedDeliveryPolicies,
    NamespacePolicies,
    RetentionPolicies,
)
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.topic import TopicMeta
from magnetar_core.ports import CommitSignal, PolicyStore
from magnetar_core.services.topics import Topics
from magnetar_wire.names import TopicName

T = TypeVar("T")


@dataclass(frozen=True)
class EffectivePolicies:
    """What applies to one topic: its own setting, else its namespace's, else the default.

    Retention (acknowledged messages kept): ``retention_time_minutes`` and
    ``retention_size_mb``, -1 for no limit, both 0 to keep nothing. ``message_ttl_seconds``:
    unacknowledged messages older than this expire (0: never). Delayed delivery: whether it is
    on, its tick (ms) and the longest delay a producer may ask for (ms, 0: no limit).
    """

    deduplication: bool
    max_message_size_bytes: int
    delayed_delivery_active: bool = True
    delayed_delivery_tick_ms: int = 1000
    delayed_delivery_max_delay_ms: int = 0
    retention_time_minutes: int = 0
    retention_size_mb: int = 0
    message_ttl_seconds: int = 0


class PolicyLookup:
    """Lookups cached for ``cache_ms`` per process, so a change reaches warm Lambda
    containers within that time; where ``signal`` wakes (one process: the local stack, the
    memory service) ``changed`` notifies it and every engine sharing it reads the namespace
    again at once."""

    def __init__(
        self,
        store: PolicyStore,
        topics: Topics,
        runtime: Runtime,
        default_max_message_size: int,
        default_delayed: DelayedDeliveryPolicies,
        cache_ms: int,
        signal: CommitSignal | None,
    ) -> None:
        self._store = store
        self._topics = topics
        self._rt = runtime
        self._default_max = default_max_message_size
        self._default_delayed = default_delayed
        self._cache_ms = cache_ms
        self._signal = signal if signal is not None and signal.wakes else None
        self._cache: dict[str, tuple[float, int, NamespacePolicies]] = {}
        self._lock = threading.Lock()

    def _cached(self, namespace: str, fresh: bool) -> NamespacePolicies:
        now = self._rt.monotonic_ms()
        # read before the store: a change written after this read leaves a newer version
        version = self._signal.version(_changes_key(namespace)) if self._signal else 0
        with self._lock:
            hit = self._cache.get(namespace)
        if hit is not None and not fresh and now - hit[0] < self._cache_ms and hit[1] == version:
            return hit[2]
        policies = self._store.get(namespace)
        with self._lock:
            self._cache[namespace] = (now, version, policies)
        return policies

    def changed(self, namespace: str) -> None:
        """``namespace``'s policies were written: forget them here, and tell the engines
        sharing the signal."""
        with self._lock:
            self._cache.pop(namespace, None)
        if self._signal is not None:
            self._signal.notify(_changes_key(namespace))

    def overrides(self, name: TopicName, fresh: bool) -> TopicMeta | None:
        """The active topic holding ``name``'s topic-level policies: a partition's partitioned
        topic, else the topic itself; None when there is none."""
        read = self._topics.fresh_meta if fresh else self._topics.cached_meta
        if name.partition_index >= 0:
            parent = read(name.base)
            if parent is not None and parent.active and parent.partitions > 0:
                return parent
        meta = read(name)
        return meta if meta is not None and meta.active else None

    def policies_for(
        self, name: TopicName, *, fresh: bool = False
    ) -> tuple[NamespacePolicies, TopicMeta | None]:
        """``name``'s namespace policies and the topic holding its overrides (None: none),
        from the per-process caches unless ``fresh``."""
        return self._cached(f"{name.tenant}/{name.namespace}", fresh), self.overrides(name, fresh)

    def effective(self, name: TopicName, *, fresh: bool = False) -> EffectivePolicies:
        """The policies that apply to ``name`` (a topic or a partition): its topic-level
        overrides, else its namespace's, else the service defaults. ``fresh`` skips the
        caches (admin reads, maintenance jobs)."""
        ns = self._cached(f"{name.tenant}/{name.namespace}", fresh)
        topic = self.overrides(name, fresh)
        own_dedup, own_retention, own_ttl = (
            (topic.deduplication, topic.retention, topic.message_ttl_seconds)
            if topic is not None
            else (None, None, None)
        )
        delayed = ns.delayed_delivery or self._default_delayed
        retention = first_set(own_retention, ns.retention, RetentionPolicies())
        return EffectivePolicies(
            deduplication=first_set(own_dedup, ns.deduplication, False),
            max_message_size_bytes=ns.max_message_size_bytes or self._default_max,
            delayed_delivery_active=delayed.active,
            delayed_delivery_tick_ms=delayed.tick_time_ms,
            delayed_delivery_max_delay_ms=delayed.max_delivery_delay_ms,
            retention_time_minutes=retention.retention_time_minutes,
            retention_size_mb=retention.retention_size_mb,
            message_ttl_seconds=first_set(own_ttl, ns.message_ttl_seconds, 0),
        )


def _changes_key(namespace: str) -> str:
    """The commit signal's key for changes of ``namespace``'s policies (no log key begins
    so: those are full topic names)."""
    return f"policies:{namespace}"


def first_set(*values: T | None) -> T:
    """The first of ``values`` that is set (not None)."""
    return next(v for v in values if v is not None)
