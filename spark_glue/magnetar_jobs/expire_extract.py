"""Extract of the expire job: ledgers, policies, cursors, the log index and the bucket listing.

Reads happen in an order that keeps the plan safe: the bucket is listed *before* the index
is read (an object committed meanwhile is then referenced, never taken for an orphan), the
trash manifests after it; the index and the cursors are materialised once
(``localCheckpoint``), so every later step of the plan sees the same rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from pyspark.sql import DataFrame

from magnetar_core.adapters.aws.cursors import CursorStore
from magnetar_core.domain.compaction import compacted_owner
from magnetar_core.domain.cursor.state import CursorState
from magnetar_core.domain.errors import InvalidTopicName
from magnetar_wire.names import TopicName

from . import catalog, garbage
from .common import JobArgs, dynamodb_client, engine_of, s3_client
from .expire_incremental import WindowArgs, window_frame
from .expire_transform import CURSOR_SCHEMA, OBJECT_SCHEMA, POLICY_SCHEMA

ORPHAN_PREFIXES = "entries/,segments/,compacted/"
"""Where entry objects live: produced entries, segments (compact-segments), compacted
segments (compact-topic). ``--orphan-prefixes`` overrides."""


@dataclass(frozen=True)
class Ledgers:
    """Live partitions, dead ledger keys (deleted topics, superseded ledgers, compacted
    ledgers of those) and the compacted ledgers of live partitions (left alone, but their
    objects are referenced)."""

    live: list[catalog.PartitionInfo]
    dead: list[str]
    compacted: list[str]

    @property
    def keys(self) -> list[str]:
        return [p.partition_key for p in self.live] + self.dead + self.compacted


@dataclass(frozen=True)
class ExpireInput:
    """The extracted rows (see ``expire_transform`` for the schemas)."""

    ledgers: Ledgers
    index: DataFrame
    cursors: DataFrame
    policies: DataFrame
    dead_keys: DataFrame
    objects: DataFrame | None
    trashed: DataFrame | None


def _in_namespace(key: str, namespace: str | None) -> bool:
    """Whether log key ``key`` (a compacted ledger's too) belongs to ``tenant/namespace``."""
    if namespace is None:
        return True
    topic = (compacted_owner(key) or key).rpartition("|")[0]
    try:
        name = TopicName.parse(topic)
    except InvalidTopicName:
        return False
    return f"{name.tenant}/{name.namespace}" == namespace


def ledgers(args: JobArgs, topic: str | None, namespace: str | None = None) -> Ledgers:
    """The ledgers a run works on: everything, one namespace's (``tenant/namespace``), or
    only ``topic``'s partitions (then no dead ledgers)."""
    live = [p for p in catalog.partitions(args, topic) if _in_namespace(p.partition_key, namespace)]
    if topic is not None:
        return Ledgers(live, [], [])
    live_keys = {p.partition_key for p in live}
    dead: list[str] = []
    compacted: list[str] = []
    for key in catalog.dead_ledgers(args):
        if not _in_namespace(key, namespace):
            continue
        owner = compacted_owner(key)
        (compacted if owner is not None and owner in live_keys else dead).append(key)
    return Ledgers(live, dead, compacted)


def orphan_prefixes(args: JobArgs, namespace: str | None) -> list[str]:
    """The prefixes listed for orphans (``--orphan-prefixes``), narrowed to a namespace's
    objects (``<prefix>persistent/<tenant>/<namespace>/``) when one is given."""
    prefixes = [p for p in (args.option("orphan-prefixes") or ORPHAN_PREFIXES).split(",") if p]
    if namespace is None:
        return prefixes
    return [f"{p}persistent/{namespace}/" for p in prefixes]


def policy_rows(args: JobArgs, live: Iterable[catalog.PartitionInfo]) -> list[tuple]:
    """``POLICY_SCHEMA`` rows: each partition's effective TTL and retention (fresh reads,
    one per topic)."""
    namespaces = engine_of(args).namespaces
    by_topic: dict[TopicName, tuple[int, int, int]] = {}
    rows = []
    for part in live:
        base = TopicName.parse(part.topic).base
        if base not in by_topic:
            p = namespaces.effective(base, fresh=True)
            by_topic[base] = (p.message_ttl_seconds, p.retention_time_minutes, p.retention_size_mb)
        rows.append((part.partition_key, *by_topic[base]))
    return rows


def cursor_row(pk: str, state: CursorState) -> tuple:
    """One ``CURSOR_SCHEMA`` row."""
    delayed = sorted(r for ranges in state.delayed.values() for r in ranges.ranges())
    return (
        pk,
        state.subscription,
        state.durable,
        state.mark_delete,
        state.read_position,
        state.version,
        sorted(c.seen_ms for c in state.consumers.values()),
        [(lo, hi) for lo, hi in delayed],
    )


def cursor_frame(spark, args: JobArgs, pks: list[str]) -> DataFrame:
    """Every cursor of the given ledgers, read by the executors (one Query per ledger)."""
    if not pks:
        return spark.createDataFrame([], CURSOR_SCHEMA)

    def read(keys: Iterable[str]) -> Iterator[tuple]:
        store = CursorStore(dynamodb_client(args), args.cursors_table)
        for pk in keys:
            for state in store.list(pk):
                yield cursor_row(pk, state)

    rdd = spark.sparkContext.parallelize(pks, min(len(pks), 64)).mapPartitions(read)
    return spark.createDataFrame(rdd, CURSOR_SCHEMA)


def list_objects(s3, bucket: str, prefixes: Iterable[str]) -> list[tuple]:
    """``OBJECT_SCHEMA`` rows of every object under ``prefixes`` (paginated listings)."""
    rows = []
    for prefix in prefixes:
        pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        for page in pages:
            for obj in page.get("Contents", []):
                modified_ms = int(obj["LastModified"].timestamp() * 1000)
                rows.append((obj["Key"], int(obj["Size"]), modified_ms))
    return rows


def extract_incremental(
    spark, args: JobArgs, topic: str | None, namespace: str | None, now: WindowArgs
) -> ExpireInput:
    """What an incremental run plans from: the live ledgers' cursors and index windows
    (``expire_incremental``); no dead ledgers, no bucket listing (the full pass's work)."""
    live = [p for p in catalog.partitions(args, topic) if _in_namespace(p.partition_key, namespace)]
    found = Ledgers(live, [], [])
    cursors = cursor_frame(spark, args, [p.partition_key for p in live]).localCheckpoint(eager=True)
    policies = policy_rows(args, live)
    index = window_frame(spark, args, policies, cursors, now)
    return ExpireInput(
        ledgers=found,
        index=index,
        cursors=cursors,
        policies=spark.createDataFrame(policies, POLICY_SCHEMA),
        dead_keys=spark.createDataFrame([], "pk string"),
        objects=None,
        trashed=None,
    )


def extract(
    spark, args: JobArgs, topic: str | None, namespace: str | None, orphans: bool
) -> ExpireInput:
    """Read everything a full pass plans from (see ``ledgers`` for the scope); ``orphans``
    False (or a ``topic``) skips the bucket listing."""
    found = ledgers(args, topic, namespace)
    s3 = s3_client(args)
    objects = None
    if orphans and topic is None:
        listed = list_objects(s3, args.bucket, orphan_prefixes(args, namespace))
        objects = spark.createDataFrame(listed, OBJECT_SCHEMA)
    index = catalog.index_frame(spark, args, found.keys).localCheckpoint(eager=True)
    live_keys = [p.partition_key for p in found.live]
    cursors = cursor_frame(spark, args, live_keys).localCheckpoint(eager=True)
    trashed = None
    if objects is not None:
        keys = sorted(garbage.trashed_keys(s3, args.bucket))
        trashed = spark.createDataFrame([(k,) for k in keys], "key string")
    return ExpireInput(
        ledgers=found,
        index=index,
        cursors=cursors,
        policies=spark.createDataFrame(policy_rows(args, found.live), POLICY_SCHEMA),
        dead_keys=spark.createDataFrame([(k,) for k in found.dead], "pk string"),
        objects=objects,
        trashed=trashed,
    )
