"""The composition root: builds the engine's services from settings, clients and a runtime."""

from __future__ import annotations

from dataclasses import dataclass

from magnetar_core.adapters.aws.buffers import BufferStore
from magnetar_core.adapters.aws.clients import make_clients, make_stepfunctions_client
from magnetar_core.adapters.aws.compaction import CompactionStore
from magnetar_core.adapters.aws.cursors import CursorStore
from magnetar_core.adapters.aws.entries import EntryStore
from magnetar_core.adapters.aws.log import LogStore
from magnetar_core.adapters.aws.policies import PolicyStore
from magnetar_core.adapters.aws.producers import ProducerStateStore
from magnetar_core.adapters.aws.timers import TimerStarter
from magnetar_core.adapters.aws.topics import TopicStore
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.timers import DelayTimers, TimerOptions
from magnetar_core.services.access import ProducerAccess
from magnetar_core.services.admin import Admin
from magnetar_core.services.compaction import Compaction
from magnetar_core.services.dedup import Deduplicator
from magnetar_core.services.index_cache import IndexCache
from magnetar_core.services.namespaces import Namespaces
from magnetar_core.services.nonpersistent import NonPersistent
from magnetar_core.services.produce import Producer
from magnetar_core.services.stats import Stats
from magnetar_core.services.subscriptions import DispatchLimits, Subscriptions
from magnetar_core.services.subscriptions.compacted_reads import CompactedReads
from magnetar_core.services.topics import Topics
from magnetar_core.settings import Settings


@dataclass
class Engine:
    """Everything a handler calls: topics, producer, subscriptions, stats, admin."""

    runtime: Runtime
    topics: Topics
    producer: Producer
    subscriptions: Subscriptions
    stats: Stats
    admin: Admin
    namespaces: Namespaces
    access: ProducerAccess
    entries: EntryStore
    compaction: Compaction | None = None

    @classmethod
    def build(
        cls, settings: Settings, runtime: Runtime | None = None, clients: tuple | None = None
    ) -> Engine:
        """Wire the engine on AWS; ``clients`` is ``(dynamodb, s3)`` or ``(dynamodb, s3,
        stepfunctions)`` (made from settings when None or missing)."""
        dynamodb, s3, *rest = clients or make_clients(settings)
        starter = None
        if settings.timer_state_machine_arn:
            sfn = rest[0] if rest else make_stepfunctions_client(settings)
            starter = TimerStarter(sfn, settings.timer_state_machine_arn)
        return cls.assemble(settings, aws_stores(settings, dynamodb, s3), runtime, starter)

    @classmethod
    def assemble(
        cls,
        settings: Settings,
        stores: Stores,
        runtime: Runtime | None = None,
        starter: TimerStarter | None = None,
    ) -> Engine:
        """Wire the engine's services on ``stores`` (AWS or in-memory adapters); ``starter``
        starts delay timers (None: delays off)."""
        runtime = runtime or Runtime()
        timer_options = TimerOptions(
            settings.delayed_delivery_tick_ms,
            settings.delayed_delivery_strict,
            settings.delayed_delivery_enabled,
            settings.delayed_delivery_release_grace_ms,
        )
        log, cursors, entries = stores.log, stores.cursors, stores.entries
        topics = Topics(stores.topics, log, cursors, runtime)
        limits = DispatchLimits(
            max_wait_ms=settings.receive_max_wait_ms,
            check_interval_ms=settings.receive_check_interval_ms,
            max_unacked_entries=settings.max_unacked_entries_per_consumer,
            max_attempts=settings.commit_max_attempts,
            consumer_lease_ms=settings.consumer_lease_ms,
        )
        subscriptions = Subscriptions(
            topics,
            log,
            cursors,
            entries,
            runtime,
            limits,
            IndexCache(),
            inline_entry_max_bytes=settings.inline_entry_max_bytes,
            response_inline_budget_bytes=settings.response_inline_budget_bytes,
        )
        stats = Stats(topics, log, cursors)
        namespaces = Namespaces(
            stores.policies,
            stores.topics,
            topics,
            runtime,
            settings.max_message_size_bytes,
            settings.policy_cache_ms,
            delayed_delivery_enabled=settings.delayed_delivery_enabled,
            delayed_delivery_tick_ms=settings.delayed_delivery_tick_ms,
        )
        producer_state = stores.producer_state
        dedup = Deduplicator(log, producer_state, settings.dedup_snapshot_every)
        producer = Producer(
            topics, log, entries, runtime, namespaces, dedup, settings.commit_max_attempts
        )
        non_persistent = NonPersistent(
            topics,
            cursors,
            stores.buffers,
            runtime,
            settings.consumer_lease_ms,
            settings.receive_check_interval_ms,
        )
        producer.non_persistent = non_persistent
        subscriptions.non_persistent = non_persistent
        subscriptions.producer = producer
        subscriptions.namespaces = namespaces
        subscriptions.timers = DelayTimers(timer_options, starter, runtime.now_ms)
        compaction_store = stores.compaction
        subscriptions.compacted = CompactedReads(
            compaction_store, log, IndexCache(), settings.max_unacked_entries_per_consumer
        )
        return cls(
            runtime=runtime,
            topics=topics,
            producer=producer,
            subscriptions=subscriptions,
            stats=stats,
            admin=Admin(topics, subscriptions, stats),
            namespaces=namespaces,
            access=ProducerAccess(
                topics,
                producer,
                producer_state,
                namespaces,
                dedup,
                runtime,
                settings.producer_lease_ms,
                settings.receive_max_wait_ms,
                settings.commit_max_attempts,
            ),
            entries=entries,
            compaction=Compaction(topics, compaction_store, _launcher_of(settings), runtime),
        )


@dataclass(frozen=True)
class Stores:
    """The engine's storage adapters, one per store port."""

    topics: TopicStore
    log: LogStore
    cursors: CursorStore
    entries: EntryStore
    policies: PolicyStore
    producer_state: ProducerStateStore
    buffers: BufferStore
    compaction: CompactionStore


def aws_stores(settings: Settings, dynamodb, s3) -> Stores:
    """The DynamoDB and S3 adapters on the settings' tables and bucket."""
    return Stores(
        topics=TopicStore(dynamodb, settings.topics_table),
        log=LogStore(dynamodb, settings.log_table),
        cursors=CursorStore(dynamodb, settings.cursors_table),
        entries=EntryStore(s3, settings.entries_bucket),
        policies=PolicyStore(dynamodb, settings.topics_table),
        producer_state=ProducerStateStore(dynamodb, settings.cursors_table),
        buffers=BufferStore(dynamodb, settings.cursors_table),
        compaction=CompactionStore(dynamodb, settings.cursors_table, settings.log_table),
    )


def _launcher_of(settings: Settings):
    """A factory of the job launcher ``settings`` name (made on first use: a Glue client is
    not worth building in every Lambda container)."""

    def make():
        from magnetar_core.adapters.jobs import launcher_from_settings

        return launcher_from_settings(settings)

    return make
