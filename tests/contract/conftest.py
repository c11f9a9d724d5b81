"""One contract for every store, run on the in-memory adapters and on the AWS adapters.

``backend`` is parametrized: ``memory`` (fast, unmarked) and ``aws`` (the DynamoDB/S3
adapters on the embedded emulator, marked ``emulator``). Each test names its own keys
(``uid``) so tests never see each other's items on the shared emulator tables.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from magnetar_core.adapters.memory import MemoryTables, memory_stores
from magnetar_core.domain.compaction import CompactedEntry


@dataclass
class Backend:
    """The stores of one backend plus what the contract needs beside the ports: seeding a
    compacted ledger (the compaction job's writes) and the timer workflow's release."""

    name: str
    stores: Any
    seed_compacted: Callable[[str, list[CompactedEntry]], None]
    release: Callable[[str, str, int], bool]
    log_with_clock: Callable[[Callable[[], int]], Any]
    """Another log store on the same tables (another process) whose clock is the given one."""


def _memory_backend() -> Backend:
    from magnetar_core.adapters.memory import LogStore

    tables = MemoryTables()
    stores = memory_stores(tables)
    return Backend(
        "memory",
        stores,
        stores.compaction.put_compacted,
        stores.cursors.release,
        lambda clock: LogStore(tables, now_ms=clock),
    )


def _aws_backend(request: pytest.FixtureRequest) -> Backend:
    from botocore.exceptions import ClientError

    from magnetar_core.adapters.aws.compaction import compacted_item
    from magnetar_core.engine import aws_stores
    from magnetar_core.settings import Settings

    stack = request.getfixturevalue("local_stack")
    clients = request.getfixturevalue("aws_clients")
    settings = Settings.from_env(stack.environment)
    ddb = clients.dynamodb

    def seed(ledger: str, entries: list[CompactedEntry]) -> None:
        for e in entries:
            item = compacted_item(
                e.entry.to_item(ledger), ledger, e.entry.object_key, e.entry.offset,
                e.entry.length, e.kept,
            )  # fmt: skip
            ddb.put_item(TableName=settings.log_table, Item=item)

    def release(pk: str, sub: str, bucket: int) -> bool:
        """The UpdateItem of infra/statemachines/redelivery-timer.asl.json."""
        try:
            ddb.update_item(
                TableName=settings.cursors_table,
                Key={"pk": {"S": pk}, "sub": {"S": sub}},
                UpdateExpression="ADD rel :bucket SET ver = ver + :one",
                ConditionExpression="attribute_exists(ver)",
                ExpressionAttributeValues={":bucket": {"NS": [str(bucket)]}, ":one": {"N": "1"}},
            )
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def log_with_clock(clock: Callable[[], int]) -> Any:
        from magnetar_core.adapters.aws.log import LogStore

        return LogStore(ddb, settings.log_table, settings.cursors_table, now_ms=clock)

    stores = aws_stores(settings, ddb, clients.s3)
    return Backend("aws", stores, seed, release, log_with_clock)


@pytest.fixture(params=["memory", pytest.param("aws", marks=pytest.mark.emulator)])
def backend(request: pytest.FixtureRequest) -> Backend:
    if request.param == "memory":
        return _memory_backend()
    return _aws_backend(request)


@pytest.fixture
def stores(backend: Backend) -> Any:
    return backend.stores


@pytest.fixture
def uid() -> str:
    """A fresh name part: keys of this test only."""
    return uuid.uuid4().hex[:12]
