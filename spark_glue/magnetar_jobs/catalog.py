"""What the maintenance jobs work on: live partitions, dead ledgers, the log index as rows.

Topics table items: ``pk`` = ``domain://tenant/namespace``, ``name`` = the topic's local
name (names starting with ``$`` are namespace policy items), ``ledger``, ``parts`` (0: not
partitioned), ``state`` (``active`` / ``deleted``). A partitioned topic's partitions
``<name>-partition-<i>`` share its ledger. A log partition key is ``<partition topic>|<ledger>``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from magnetar_core.domain.log import log_key
from magnetar_wire.names import TopicName

from .common import JobArgs, dynamodb_client


@dataclass(frozen=True)
class PartitionInfo:
    """One persistent partition (or non-partitioned topic) in its current ledger."""

    topic: str
    partition_key: str
    ledger_id: int


def _scan(ddb, table: str, **kwargs) -> Iterator[dict]:
    for page in ddb.get_paginator("scan").paginate(TableName=table, **kwargs):
        yield from page["Items"]


def _live(items: Iterable[dict]) -> dict[str, PartitionInfo]:
    """Partition topic name -> PartitionInfo of every active persistent topic item."""
    out: dict[str, PartitionInfo] = {}
    for item in items:
        local = item["name"]["S"]
        if local.startswith("$") or item.get("state", {}).get("S") != "active":
            continue
        name = TopicName.parse(f"{item['pk']['S']}/{local}")
        if not name.persistent:
            continue
        ledger = int(item["ledger"]["N"])
        parts = int(item.get("parts", {"N": "0"})["N"])
        names = [name.partition(i) for i in range(parts)] if parts else [name]
        for part in names:
            # A partitioned parent wins over a stray item of the same partition name, as
            # magnetar_core.services.topics.Topics.resolve does.
            if parts or str(part) not in out:
                out[str(part)] = PartitionInfo(str(part), log_key(str(part), ledger), ledger)
    return out


def partitions(args: JobArgs, topic: str | None = None) -> list[PartitionInfo]:
    """Every persistent partition's current ledger, by topic name (one Scan of the topics
    table). ``topic`` (full or short name; a partitioned topic's base name selects all its
    partitions) restricts the list; unknown names give an empty list."""
    ddb = dynamodb_client(args)
    live = _live(_scan(ddb, args.topics_table))
    if topic is not None:
        wanted = TopicName.parse(topic)
        live = {
            k: p for k, p in live.items() if k == str(wanted) or TopicName.parse(k).base == wanted
        }
    return [live[k] for k in sorted(live)]


def dead_ledgers(args: JobArgs) -> list[str]:
    """Log partition keys that no live topic owns (deleted topics, superseded ledgers).

    Scans the log table (keys only) before reading the topics table: a topic is created
    before its first index item is committed, so a ledger born during the run is never
    taken for dead.
    """
    ddb = dynamodb_client(args)
    seen = _log_keys(ddb, args.log_table)
    live = {p.partition_key for p in _live(_scan(ddb, args.topics_table)).values()}
    return sorted(seen - live)


def _log_keys(ddb, table: str) -> set[str]:
    return {item["pk"]["S"] for item in _scan(ddb, table, ProjectionExpression="pk")}


INDEX_COLUMNS = (
    ("pk", "string"),
    ("eid", "bigint"),
    ("obj", "string"),
    ("off", "bigint"),
    ("len", "bigint"),
    ("n", "int"),
    ("pt0", "bigint"),
    ("pt1", "bigint"),
    ("da", "bigint"),
    ("fence", "boolean"),
    ("pc", "boolean"),
    ("d", "binary"),
)
"""Columns of an index row (``index_frame``): the log item's attributes of the same names;
``n`` = 0 marks fences and epoch markers, ``pc`` a chunk other than a message's last, ``d``
an inline entry's bytes (None: the entry is in ``obj``; docs/architecture/producing.md, "Inline
entries")."""


def index_schema():
    """The Spark schema of ``index_frame`` rows (explicit types: Spark 3.5 and 4)."""
    from pyspark.sql import types as T

    kinds = {
        "string": T.StringType(),
        "bigint": T.LongType(),
        "int": T.IntegerType(),
        "boolean": T.BooleanType(),
        "binary": T.BinaryType(),
    }
    return T.StructType([T.StructField(n, kinds[t], True) for n, t in INDEX_COLUMNS])


def index_row(item: dict) -> tuple:
    """One log item as a tuple in ``INDEX_COLUMNS`` order."""

    def num(name: str) -> int:
        return int(item[name]["N"]) if name in item else 0

    return (
        item["pk"]["S"],
        num("eid"),
        item.get("obj", {}).get("S", ""),
        num("off"),
        num("len"),
        num("n"),
        num("pt0"),
        num("pt1"),
        num("da"),
        item.get("fence", {}).get("BOOL", False),
        item.get("pc", {}).get("BOOL", False),
        bytes(item["d"]["B"]) if "d" in item else None,
    )


def query_index(ddb, table: str, pk: str, start: int = 0) -> Iterator[tuple]:
    """Index rows of one ledger from ``start``, ascending (paginated, consistent Query)."""
    pages = ddb.get_paginator("query").paginate(
        TableName=table,
        KeyConditionExpression="pk = :pk AND eid >= :s",
        ExpressionAttributeValues={":pk": {"S": pk}, ":s": {"N": str(start)}},
        ProjectionExpression="pk, eid, obj, #off, #len, n, pt0, pt1, da, fence, pc, d",
        ExpressionAttributeNames={"#off": "off", "#len": "len"},
        ConsistentRead=True,
    )
    for page in pages:
        yield from map(index_row, page["Items"])


def index_rows_paged(
    ddb, table: str, pk: str, start: int = 0, first_page: int = 8, growth: int = 8
) -> Iterator[tuple]:
    """Index rows of one ledger from ``start``, ascending, lazily: pages of ``first_page``
    items, each ``growth`` times the last (then 1 MB pages), so a reader that stops after a
    few rows pays for a few rows, not a 1 MB page (Query bills the items it reads)."""
    kwargs = {
        "TableName": table,
        "KeyConditionExpression": "pk = :pk AND eid >= :s",
        "ExpressionAttributeValues": {":pk": {"S": pk}, ":s": {"N": str(start)}},
        "ProjectionExpression": "pk, eid, obj, #off, #len, n, pt0, pt1, da, fence, pc, d",
        "ExpressionAttributeNames": {"#off": "off", "#len": "len"},
        "ConsistentRead": True,
    }
    limit: int | None = first_page
    while True:
        page = ddb.query(**kwargs, **({"Limit": limit} if limit else {}))
        yield from map(index_row, page["Items"])
        if "LastEvaluatedKey" not in page:
            return
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        limit = limit * growth if limit and limit * growth <= 10_000 else None


def index_frame(spark, args: JobArgs, partition_keys: list[str]):
    """The log index of the given ledgers as a DataFrame (``index_schema``), read by the
    executors: the ledgers spread over up to 4 Spark partitions per core, each Query-ing
    the log table with its own client."""
    keys = sorted(set(partition_keys))
    if not keys:
        return spark.createDataFrame([], index_schema())

    def read(pks: Iterable[str]) -> Iterator[tuple]:
        ddb = dynamodb_client(args)
        for pk in pks:
            yield from query_index(ddb, args.log_table, pk)

    slices = min(len(keys), 4 * spark.sparkContext.defaultParallelism)
    rdd = spark.sparkContext.parallelize(keys, slices).mapPartitions(read)
    return spark.createDataFrame(rdd, index_schema())
