"""Reads of an incremental expire run: per-ledger index windows, and when to do a full pass.

An incremental run reads, per live ledger, its cursors and the window ``expire_window``
picks (the executors Query each ledger from its first remaining item and stop early); it
neither scans the log table for dead ledgers nor lists the bucket for orphans. A full pass
does (as every run did before), at most every ``--full-pass-every-ms``: the time of the last
full pass lives in the topics table (item ``$jobs`` / ``$expire``, written only after a
complete unnarrowed full pass, and only forward).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import catalog
from .common import JobArgs, dynamodb_client
from .expire_window import CursorBound, LedgerPolicy, window

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

STATE_PK, STATE_NAME = "$jobs", "$expire"
"""The topics table item holding ``full_ms``, the start of the last full pass (epoch ms)."""


@dataclass(frozen=True)
class WindowArgs:
    """What the windows depend on besides the stored rows: the run's time and the consumer
    lease (a reader's mark-delete holds entries only while a consumer is live)."""

    now_ms: int
    consumer_lease_ms: int


def cursor_bounds(rows: Iterable, args: WindowArgs) -> dict[str, list[CursorBound]]:
    """``CursorBound``s by ledger from ``CURSOR_SCHEMA`` rows."""
    out: dict[str, list[CursorBound]] = {}
    for r in rows:
        live = any(args.now_ms - s <= args.consumer_lease_ms for s in r.seen)
        out.setdefault(r.pk, []).append(CursorBound(r.durable, r.durable or live, r.md))
    return out


def window_frame(
    spark, args: JobArgs, policies: list[tuple], cursors: DataFrame, now: WindowArgs
) -> DataFrame:
    """The index windows of the live ledgers in ``policies`` (``POLICY_SCHEMA`` rows), read
    by the executors: ``index_schema`` rows, materialised."""
    bounds = cursor_bounds(cursors.collect(), now)
    work = [
        (row[0], LedgerPolicy(now.now_ms, row[1], row[2], row[3], tuple(bounds.get(row[0], ()))))
        for row in policies
    ]
    if not work:
        return spark.createDataFrame([], catalog.index_schema())

    def read(ledgers: Iterable[tuple[str, LedgerPolicy]]) -> Iterator[tuple]:
        ddb = dynamodb_client(args)
        for pk, policy in ledgers:
            yield from window(
                policy, functools.partial(catalog.index_rows_paged, ddb, args.log_table, pk)
            )

    slices = min(len(work), 4 * spark.sparkContext.defaultParallelism)
    rows = spark.sparkContext.parallelize(work, slices).mapPartitions(read)
    return spark.createDataFrame(rows, catalog.index_schema()).localCheckpoint(eager=True)


def full_pass_due(last_full_ms: int | None, now_ms: int, every_ms: int) -> bool:
    """Whether a run at ``now_ms`` is a full pass (``every_ms`` <= 0: never by itself)."""
    if every_ms <= 0:
        return False
    return last_full_ms is None or now_ms - last_full_ms >= every_ms


def last_full_pass(args: JobArgs) -> int | None:
    """The start of the last recorded full pass (None: never)."""
    item = (
        dynamodb_client(args)
        .get_item(
            TableName=args.topics_table,
            Key={"pk": {"S": STATE_PK}, "name": {"S": STATE_NAME}},
            ConsistentRead=True,
        )
        .get("Item")
    )
    return int(item["full_ms"]["N"]) if item and "full_ms" in item else None


def record_full_pass(args: JobArgs, started_ms: int) -> bool:
    """Record a completed full pass that started at ``started_ms`` (only forward); False
    when a later one is recorded already."""
    ddb = dynamodb_client(args)
    try:
        ddb.put_item(
            TableName=args.topics_table,
            Item={
                "pk": {"S": STATE_PK},
                "name": {"S": STATE_NAME},
                "full_ms": {"N": str(started_ms)},
            },
            ConditionExpression="attribute_not_exists(full_ms) OR full_ms < :t",
            ExpressionAttributeValues={":t": {"N": str(started_ms)}},
        )
    except ddb.exceptions.ConditionalCheckFailedException:
        return False
    return True
