"""Namespace and topic policies: their administration, and (``policy_lookup``) the policies
that apply to a topic as the data paths and the maintenance jobs see them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

from magnetar_core.domain.errors import (
    InvalidMessage,
    ServiceUnitNotReady,
    TopicNotFound,
)
from magnetar_core.domain.policies import (
    DelayedDeliveryPolicies,
    NamespacePolicies,
    RetentionPolicies,
    message_ttl_seconds,
)
from magnetar_core.domain.quotas import check_retention_covers
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.topic import TopicMeta
from magnetar_core.ports import CommitSignal, PolicyStore, TopicStore
from magnetar_core.services import optimistic
from magnetar_core.services.policy_lookup import EffectivePolicies, PolicyLookup, first_set
from magnetar_core.services.tenancy import Registry, namespace_name
from magnetar_core.services.topics import Topics
from magnetar_wire.names import TopicName

MIN_MESSAGE_SIZE = 1024
MAX_MESSAGE_SIZE = 100 * 1024 * 1024
UPDATE_ATTEMPTS = 8

R = TypeVar("R")  # the record a versioned update reads
W = TypeVar("W")  # what it writes


class Namespaces:
    """Policy administration and lookup (``policy_lookup``: cached for ``cache_ms`` per
    process; a change here tells it). Administration answers NotFound (404) for a namespace
    that does not exist (``registry``)."""

    def __init__(
        self,
        store: PolicyStore,
        topic_store: TopicStore,
        topics: Topics,
        runtime: Runtime,
        default_max_message_size: int,
        cache_ms: int,
        *,
        registry: Registry,
        delayed_delivery_enabled: bool = True,
        delayed_delivery_tick_ms: int = 1000,
        signal: CommitSignal | None = None,
    ) -> None:
        self._store = store
        self._registry = registry
        self._topic_store = topic_store
        self._topics = topics
        self._rt = runtime
        self._default_max = default_max_message_size
        self._default_delayed = DelayedDeliveryPolicies(
            delayed_delivery_enabled, delayed_delivery_tick_ms
        )
        self._lookup = PolicyLookup(
            store,
            topics,
            runtime,
            default_max_message_size,
            self._default_delayed,
            cache_ms,
            signal,
        )

    def get(self, tenant: str, namespace: str) -> NamespacePolicies:
        """The namespace's stored policies (fresh read); raises NotFound (404) when the
        namespace does not exist, InvalidTopicName."""
        ns = namespace_name(tenant, namespace)
        self._registry.require_namespace(ns)
        return self._store.get(ns)

    def policies_for(
        self, name: TopicName, *, fresh: bool = False
    ) -> tuple[NamespacePolicies, TopicMeta | None]:
        """``PolicyLookup.policies_for``: a topic's namespace policies and overrides."""
        return self._lookup.policies_for(name, fresh=fresh)

    def effective(self, name: TopicName, *, fresh: bool = False) -> EffectivePolicies:
        """``PolicyLookup.effective``: the policies that apply to a topic or partition."""
        return self._lookup.effective(name, fresh=fresh)

    def _versioned_update(
        self,
        what: str,
        read: Callable[[], R],
        change: Callable[[R], tuple[None, W | None]],
        write: Callable[[W], object],
    ) -> None:
        """One optimistic update of a policies record (``UPDATE_ATTEMPTS`` attempts);
        raises ServiceUnitNotReady when other writers keep winning."""
        outcome = optimistic.update(read, change, write, self._rt, UPDATE_ATTEMPTS)
        if isinstance(outcome, optimistic.Conflict):
            raise ServiceUnitNotReady(f"{what} kept changing meanwhile; retry")

    # ------------------------------------------------------------ namespace level
    def update(self, tenant: str, namespace: str, **changes: Any) -> None:
        """Change the ``NamespacePolicies`` fields named in ``changes`` (validated by the
        caller) with a versioned write; raises NotFound, ServiceUnitNotReady."""
        self._update(tenant, namespace, **changes)

    def _update(self, tenant: str, namespace: str, **changes: Any) -> None:
        """Change some of a namespace's policies with a versioned write (retried); raises
        NotFound when the namespace does not exist."""
        ns = namespace_name(tenant, namespace)
        self._registry.require_namespace(ns)
        self._versioned_update(
            f"The policies of {ns}",
            lambda: self._store.get(ns),
            lambda policies: (None, policies.with_changes(**changes)),
            lambda policies: self._store.put(ns, policies),
        )
        self._lookup.changed(ns)

    def max_message_size(self, tenant: str, namespace: str) -> int:
        """The namespace's maximum message size in bytes (the default when unset)."""
        return self.get(tenant, namespace).max_message_size_bytes or self._default_max

    def set_deduplication(self, tenant: str, namespace: str, enabled: object) -> None:
        """Turn deduplication on or off for a namespace; raises InvalidMessage."""
        if not isinstance(enabled, bool):
            raise InvalidMessage("The body must be true or false")
        self._update(tenant, namespace, deduplication=enabled)

    def remove_deduplication(self, tenant: str, namespace: str) -> None:
        """Remove a namespace's deduplication setting (back to off, the service default)."""
        self._update(tenant, namespace, deduplication=None)

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

    def retention(self, tenant: str, namespace: str) -> RetentionPolicies:
        """The namespace's retention (none kept, 0 and 0, when unset)."""
        return self.get(tenant, namespace).retention or RetentionPolicies()

    def set_retention(self, tenant: str, namespace: str, body: object) -> None:
        """Set a namespace's RetentionPolicies from Pulsar's JSON body; raises InvalidMessage,
        PreconditionFailed (412) when it is below a backlog quota of the namespace."""
        retention = RetentionPolicies.from_body(body)
        check_retention_covers(self.get(tenant, namespace).quotas, retention, "namespace")
        self._update(tenant, namespace, retention=retention)

    def remove_retention(self, tenant: str, namespace: str) -> None:
        self._update(tenant, namespace, retention=None)

    def message_ttl(self, tenant: str, namespace: str) -> int:
        """The namespace's message TTL in seconds (0, no expiry, when unset)."""
        return first_set(self.get(tenant, namespace).message_ttl_seconds, 0)

    def set_message_ttl(self, tenant: str, namespace: str, seconds: object) -> None:
        """Set a namespace's message TTL (an integer >= 0, seconds); raises InvalidMessage."""
        self._update(tenant, namespace, message_ttl_seconds=message_ttl_seconds(seconds))

    def remove_message_ttl(self, tenant: str, namespace: str) -> None:
        self._update(tenant, namespace, message_ttl_seconds=None)

    # ------------------------------------------------------------ topic level
    def _topic(self, name: TopicName) -> TopicMeta:
        """The topic holding ``name``'s overrides (fresh read); raises TopicNotFound."""
        meta = self._lookup.overrides(name, fresh=True)
        if meta is None:
            raise TopicNotFound(f"Topic {name} does not exist")
        return meta

    def _update_topic(self, name: TopicName, **changes: Any) -> None:
        """Change some of a topic's overrides with a versioned write (retried); raises
        TopicNotFound, also when the topic is deleted meanwhile."""

        def change(meta: TopicMeta) -> tuple[None, tuple[TopicMeta, TopicMeta]]:
            return None, (replace(meta, version=meta.version + 1, **changes), meta)

        def write(new_and_read: tuple[TopicMeta, TopicMeta]) -> None:
            self._topic_store.put(*new_and_read)
            self._topics.invalidate(new_and_read[1].name)

        self._versioned_update(f"Topic {name}", lambda: self._topic(name), change, write)

    def set_topic_deduplication(self, name: TopicName, enabled: object) -> None:
        """Topic-level deduplication override; raises InvalidMessage, TopicNotFound."""
        if not isinstance(enabled, bool):
            raise InvalidMessage("The body must be true or false")
        self._update_topic(name, deduplication=enabled)

    def topic_retention(self, name: TopicName, applied: bool) -> RetentionPolicies | None:
        """The topic's own retention (None when unset), or with ``applied`` the one that
        applies (its namespace's when unset). Raises TopicNotFound."""
        own = self._topic(name).retention
        if own is None and applied:
            return self.retention(name.tenant, name.namespace)
        return own

    def set_topic_retention(self, name: TopicName, body: object) -> None:
        """Topic-level RetentionPolicies; raises InvalidMessage, TopicNotFound,
        PreconditionFailed (412) when it is below a backlog quota of the topic."""
        retention = RetentionPolicies.from_body(body)
        check_retention_covers(self._topic(name).quotas, retention, "topic")
        self._update_topic(name, retention=retention)

    def update_topic(self, name: TopicName, **changes: Any) -> None:
        """Change the ``TopicMeta`` override fields named in ``changes`` (validated by the
        caller) with a versioned write; raises TopicNotFound, ServiceUnitNotReady."""
        self._update_topic(name, **changes)

    def remove_topic_retention(self, name: TopicName) -> None:
        self._update_topic(name, retention=None)

    def topic_message_ttl(self, name: TopicName, applied: bool) -> int | None:
        """The topic's own message TTL in seconds (None when unset), or with ``applied`` the
        one that applies (its namespace's when unset). Raises TopicNotFound."""
        own = self._topic(name).message_ttl_seconds
        if own is None and applied:
            return self.message_ttl(name.tenant, name.namespace)
        return own

    def set_topic_message_ttl(self, name: TopicName, seconds: object) -> None:
        """Topic-level message TTL (an integer >= 0, seconds); raises InvalidMessage,
        TopicNotFound."""
        self._update_topic(name, message_ttl_seconds=message_ttl_seconds(seconds))

    def remove_topic_message_ttl(self, name: TopicName) -> None:
        self._update_topic(name, message_ttl_seconds=None)
