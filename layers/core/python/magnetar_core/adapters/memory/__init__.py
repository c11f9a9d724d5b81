"""In-memory adapters: every store of ``adapters.aws`` with the same methods and semantics
(conditional writes raise ConditionFailed exactly when DynamoDB's condition would fail,
queries in key order, "not found" answers, no TTL sweep), thread-safe, pure Python.

``memory_stores()`` bundles them for ``Engine.assemble``; ``TimerStarter`` releases delay
buckets through the memory cursor store as the runtime's clock passes them.
"""

from __future__ import annotations

from collections.abc import Callable

from magnetar_core.adapters.memory.buffers import BufferStore
from magnetar_core.adapters.memory.compaction import CompactionStore
from magnetar_core.adapters.memory.cursors import CursorStore
from magnetar_core.adapters.memory.entries import DEFAULT_BASE_URL, EntryStore
from magnetar_core.adapters.memory.functions import FunctionStateStore, FunctionStore
from magnetar_core.adapters.memory.log import LogStore
from magnetar_core.adapters.memory.namespaces import NamespaceStore
from magnetar_core.adapters.memory.policies import PolicyStore
from magnetar_core.adapters.memory.producers import ProducerStateStore
from magnetar_core.adapters.memory.schemas import SchemaStore
from magnetar_core.adapters.memory.security import PermissionStore, TenantStore
from magnetar_core.adapters.memory.tables import MemoryTables
from magnetar_core.adapters.memory.timers import TimerStarter
from magnetar_core.adapters.memory.topics import TopicStore
from magnetar_core.adapters.memory.triggers import TriggerStore
from magnetar_core.adapters.memory.watches import RecordingConnections, WatchStore
from magnetar_core.ports import Stores

__all__ = [
    "BufferStore",
    "CompactionStore",
    "CursorStore",
    "EntryStore",
    "FunctionStateStore",
    "FunctionStore",
    "LogStore",
    "MemoryTables",
    "NamespaceStore",
    "PermissionStore",
    "PolicyStore",
    "ProducerStateStore",
    "SchemaStore",
    "TenantStore",
    "TimerStarter",
    "TopicStore",
    "TriggerStore",
    "RecordingConnections",
    "WatchStore",
    "memory_stores",
]


def memory_stores(
    tables: MemoryTables | None = None,
    entries_base_url: str = DEFAULT_BASE_URL,
    now_ms: Callable[[], int] | None = None,
) -> Stores:
    """Every store on one set of in-memory tables (fresh ones when None); presigned entry
    URLs point under ``entries_base_url``; ``now_ms`` is the clock the log judges holes by
    (the wall clock when None; pass the runtime's when it is a fake one)."""
    tables = tables or MemoryTables()
    return Stores(
        topics=TopicStore(tables),
        log=LogStore(tables, now_ms=now_ms),
        cursors=CursorStore(tables),
        entries=EntryStore(entries_base_url),
        policies=PolicyStore(tables),
        producer_state=ProducerStateStore(tables),
        buffers=BufferStore(tables),
        compaction=CompactionStore(tables),
        tenants=TenantStore(tables),
        permissions=PermissionStore(tables),
        namespaces=NamespaceStore(tables),
        triggers=TriggerStore(tables),
        functions=FunctionStore(tables),
        function_state=FunctionStateStore(tables),
        schemas=SchemaStore(tables),
        watches=WatchStore(tables),
    )
