"""Ports: what the services need from storage, timers and job runners, as Protocols.

The services see only these; the adapters implement them (``adapters/aws``: DynamoDB, S3,
Step Functions and Glue; in-memory ones for tests) and the composition root
(``engine``) picks which. Keys: ``pk`` is a partition ledger's log key
(``<partition topic>|<ledger id>``, see ``domain.log.log_key``) unless said otherwise. Times
are epoch milliseconds unless a name says otherwise. Every conditional write raises
``ConditionFailed`` when it loses its race; every method may raise ``TooManyRequests``
(throttled) or ``StorageFault`` (the store failed), the adapters' translations of the
store's own errors.

One module per role (``log``, ``partition_state``, ``signals``, ``tenancy``, ``extensions``);
every port is imported from here.
"""

from __future__ import annotations

from dataclasses import dataclass

from magnetar_core.ports.extensions import (
    HISTORY_PERIOD_MS,
    HISTORY_WINDOW_MS,
    FunctionOutputs,
    FunctionSandbox,
    FunctionStateAccess,
    FunctionStateStore,
    FunctionStore,
    History,
    MetricsHistory,
    Point,
    SchemaStore,
    TargetDirectory,
    TriggerStore,
    TriggerTarget,
)
from magnetar_core.ports.log import (
    BufferStore,
    EntryStore,
    LogStore,
    TopicStore,
)
from magnetar_core.ports.partition_state import (
    CompactionStore,
    CursorStore,
    ProducerStateStore,
)
from magnetar_core.ports.signals import (
    ChannelWakes,
    CommitSignal,
    Connections,
    JobLauncher,
    TimerStarter,
    TriggerWakes,
    WatchStore,
)
from magnetar_core.ports.tenancy import (
    CallerIdentity,
    NamespaceStore,
    PermissionStore,
    PolicyStore,
    SecretParameters,
    TenantStore,
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
    tenants: TenantStore
    permissions: PermissionStore
    namespaces: NamespaceStore
    triggers: TriggerStore
    functions: FunctionStore
    function_state: FunctionStateStore
    schemas: SchemaStore
    watches: WatchStore


__all__ = [
    "BufferStore",
    "CallerIdentity",
    "ChannelWakes",
    "CommitSignal",
    "CompactionStore",
    "Connections",
    "CursorStore",
    "EntryStore",
    "FunctionOutputs",
    "FunctionSandbox",
    "FunctionStateAccess",
    "FunctionStateStore",
    "FunctionStore",
    "HISTORY_PERIOD_MS",
    "HISTORY_WINDOW_MS",
    "History",
    "JobLauncher",
    "LogStore",
    "MetricsHistory",
    "NamespaceStore",
    "PermissionStore",
    "Point",
    "PolicyStore",
    "ProducerStateStore",
    "SchemaStore",
    "SecretParameters",
    "Stores",
    "TenantStore",
    "TimerStarter",
    "TopicStore",
    "TriggerStore",
    "TargetDirectory",
    "TriggerTarget",
    "TriggerWakes",
    "WatchStore",
]
