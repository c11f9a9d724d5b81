"""The security stores (not in ``Stores`` yet) of a contract backend, on the same topics
table as the backend's topic and policy stores."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from magnetar_core.adapters.memory import MemoryTables, memory_stores
from magnetar_core.ports import PermissionStore, PolicyStore, TenantStore, TopicStore


@dataclass
class SecurityStores:
    tenants: TenantStore
    permissions: PermissionStore
    topics: TopicStore
    policies: PolicyStore


def security_stores(backend: Any, request: pytest.FixtureRequest) -> SecurityStores:
    """Memory: fresh tables shared by all four stores; aws: the emulator's topics table."""
    if backend.name == "memory":
        from magnetar_core.adapters.memory import security as memory

        tables = MemoryTables()
        stores = memory_stores(tables)
        return SecurityStores(
            memory.TenantStore(tables),
            memory.PermissionStore(tables),
            stores.topics,
            stores.policies,
        )
    from magnetar_core.adapters.aws import security as aws
    from magnetar_core.settings import Settings

    settings = Settings.from_env(request.getfixturevalue("local_stack").environment)
    ddb = request.getfixturevalue("aws_clients").dynamodb
    return SecurityStores(
        aws.TenantStore(ddb, settings.topics_table),
        aws.PermissionStore(ddb, settings.topics_table),
        backend.stores.topics,
        backend.stores.policies,
    )
