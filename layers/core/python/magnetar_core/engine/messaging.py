"""The messaging core's wiring: the tenancy registry, topics, namespaces, deduplication,
quotas and throttling, the producer, the notification channel and the subscriptions, which
the rest of the engine is composed on."""

from __future__ import annotations

from dataclasses import dataclass

from magnetar_core import ports
from magnetar_core.domain.runtime import Runtime
from magnetar_core.engine.options import dispatch_limits, response_budget, timer_options
from magnetar_core.ports import Stores
from magnetar_core.services.dedup import Deduplicator
from magnetar_core.services.index_cache import IndexCache
from magnetar_core.services.namespaces import Namespaces
from magnetar_core.services.nonpersistent import NonPersistent
from magnetar_core.services.notify import Notify
from magnetar_core.services.produce import Producer
from magnetar_core.services.quotas import Quotas
from magnetar_core.services.subscriptions import Subscriptions
from magnetar_core.services.subscriptions.base import SubscriptionContext
from magnetar_core.services.subscriptions.compacted_reads import CompactedReads
from magnetar_core.services.subscriptions.holds import Holds
from magnetar_core.services.tenancy import Registry
from magnetar_core.services.throttling import Throttling
from magnetar_core.services.timers import DelayTimers
from magnetar_core.services.topics import Topics
from magnetar_core.settings import Settings


@dataclass(frozen=True)
class Messaging:
    """The core services, wired on one set of stores and one runtime."""

    registry: Registry
    topics: Topics
    namespaces: Namespaces
    dedup: Deduplicator
    quotas: Quotas
    throttling: Throttling
    producer: Producer
    subscriptions: Subscriptions
    notify: Notify


def messaging(
    settings: Settings,
    stores: Stores,
    runtime: Runtime,
    starter: ports.TimerStarter | None,
    connections: ports.Connections | None,
    signal: ports.CommitSignal,
) -> Messaging:
    """The core services on ``stores``: delay timers start through ``starter`` (None:
    delays off), channel notices go to ``connections`` (None: none are sent, and no wake
    costs a lookup), commits reach long-polls through ``signal``. What a nack, a
    redelivery, a close, a seek or a cursor reset gives back wakes the channel's sleepers
    (the notify service is the subscriptions' ``ChannelWakes``)."""
    log, cursors = stores.log, stores.cursors
    registry = Registry(stores.tenants, stores.namespaces, settings.cluster_name)
    topics = Topics(stores.topics, log, cursors, runtime, registry)
    namespaces = Namespaces(
        stores.policies,
        stores.topics,
        topics,
        runtime,
        settings.max_message_size_bytes,
        settings.policy_cache_ms,
        registry=registry,
        delayed_delivery_enabled=settings.delayed_delivery_enabled,
        delayed_delivery_tick_ms=settings.delayed_delivery_tick_ms,
        signal=signal,
    )
    dedup = Deduplicator(log, stores.producer_state, settings.dedup_snapshot_every)
    quotas = Quotas(namespaces)
    throttling = Throttling(
        quotas,
        log,
        cursors,
        runtime,
        containers=settings.rate_limit_containers,
        check_ms=settings.backlog_check_ms,
        # late-bound: subscriptions are made below (they need the producer)
        evictions=lambda: subscriptions.operations,
    )
    non_persistent = NonPersistent(
        topics,
        cursors,
        stores.buffers,
        runtime,
        settings.consumer_lease_ms,
        settings.receive_check_interval_ms,
    )
    producer = Producer(
        topics,
        log,
        stores.entries,
        runtime,
        namespaces,
        dedup,
        non_persistent,
        settings.commit_max_attempts,
        throttling=throttling,
        index_inline_max_bytes=settings.index_inline_max_bytes,
        signal=signal,
        hole_after_ms=settings.log_hole_after_ms,
    )
    notify = notify_channel(settings, stores, topics, runtime, connections)
    subscriptions = Subscriptions(
        topics,
        log,
        cursors,
        stores.entries,
        runtime,
        dispatch_limits(settings),
        IndexCache(),
        timers=DelayTimers(timer_options(settings), starter, runtime.now_ms),
        namespaces=namespaces,
        producer=producer,
        non_persistent=non_persistent,
        compacted=CompactedReads(
            stores.compaction, log, IndexCache(), settings.max_unacked_entries_per_consumer
        ),
        response=response_budget(settings),
        download_url_expiry_s=settings.download_url_expiry_s,
        throttling=throttling,
        signal=signal,
        wakes=notify,
    )
    return Messaging(
        registry, topics, namespaces, dedup, quotas, throttling, producer, subscriptions, notify
    )


def notify_channel(
    settings: Settings,
    stores: Stores,
    topics: Topics,
    runtime: Runtime,
    connections: ports.Connections | None,
) -> Notify:
    """The notification channel's service (``settings.notify_url`` is told to consumers).
    Its holds update cursors through a subscription context of their own, made before the
    subscriptions that wake through it (holds read no index: no cache is shared)."""
    context = SubscriptionContext(
        topics,
        stores.log,
        stores.cursors,
        stores.entries,
        runtime,
        dispatch_limits(settings),
        IndexCache(),
    )
    return Notify(stores.watches, connections, Holds(context), runtime, url=settings.notify_url)
