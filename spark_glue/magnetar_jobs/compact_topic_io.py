"""Extract and load of the compact-topic job: boto3 inside Spark executors.

Extract: the index items of a partition's log after the previous horizon, plus the items of
the previous compacted ledger (the view so far), read by executors in entry-id slices; each
entry's header and per-message metadata are read with a ranged GET and decoded with
``magnetar_wire`` (payloads are never decompressed). One row per entry (``ENTRY_SCHEMA``)
carries its source item (pickled), its byte range and its messages; a previously compacted
entry carries only the messages it kept.

Load: the kept entries, in entry-id order, are copied (CRC verified) into compacted segment
objects of about ``segment_bytes`` under the run's prefix, and their compacted ledger items
written (``storage.compaction.compacted_item``). Object keys and items are deterministic per
run, so a retried task rewrites the same things.
"""

from __future__ import annotations

import math
import pickle
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from magnetar_core.adapters.aws.compaction import compacted_item, kept_of
from magnetar_wire import HEADER_SIZE, read_header, read_metadata

from .common import JobArgs, dynamodb_client, s3_client
from .compact_topic_transform import MESSAGE_SCHEMA

ENTRY_SCHEMA = StructType(
    [
        StructField("entry_id", LongType(), False),
        StructField("item", BinaryType(), False),
        StructField("obj", StringType(), False),
        StructField("off", LongType(), False),
        StructField("len", LongType(), False),
        StructField(
            "messages",
            ArrayType(
                StructType([f for f in MESSAGE_SCHEMA.fields if f.name != "entry_id"]), False
            ),
            False,
        ),
    ]
)
_METADATA_PROBE_BYTES = 16 * 1024


class EntryUnreadable(RuntimeError):
    """An entry's bytes could not be read or decoded (names the entry and object)."""


def error_text(exc: BaseException) -> str:
    """A one-line reason for the pointer's ``lastError``: for an error raised in a Python
    worker (Spark wraps it with the worker's traceback), the worker's exception line."""
    text = str(exc).strip()
    if "Traceback (most recent call last)" in text:
        lines = [ln for ln in text.splitlines() if ln.strip() and not ln[0].isspace()]
        return lines[-1] if lines else text
    return f"{type(exc).__name__}: {text}"


def slices(low: int, high: int, count: int) -> list[tuple[int, int]]:
    """``[low, high]`` cut into at most ``count`` contiguous inclusive ranges."""
    if high < low:
        return []
    size = math.ceil((high - low + 1) / max(1, count))
    return [(s, min(high, s + size - 1)) for s in range(low, high + 1, size)]


def query_between(ddb, table: str, pk: str, low: int, high: int) -> Iterator[dict]:
    """Items of one ledger with ids in ``[low, high]``, ascending (paginated, consistent)."""
    kwargs = {
        "TableName": table,
        "KeyConditionExpression": "pk = :pk AND eid BETWEEN :a AND :b",
        "ExpressionAttributeValues": {
            ":pk": {"S": pk},
            ":a": {"N": str(low)},
            ":b": {"N": str(high)},
        },
        "ConsistentRead": True,
    }
    while True:
        page = ddb.query(**kwargs)
        yield from page["Items"]
        if "LastEvaluatedKey" not in page:
            return
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _get(s3, bucket: str, key: str, offset: int, length: int) -> bytes:
    rng = f"bytes={offset}-{offset + length - 1}"
    return s3.get_object(Bucket=bucket, Key=key, Range=rng)["Body"].read()


def entry_metadata(s3, bucket: str, key: str, offset: int, length: int):
    """An entry's header and per-message metadata (``EntryMetadata``): one ranged GET, two
    when the metadata is longer than the first probe."""
    data = _get(s3, bucket, key, offset, min(length, _METADATA_PROBE_BYTES))
    need = HEADER_SIZE + read_header(data).metadata_len
    if need > len(data):
        data += _get(s3, bucket, key, offset + len(data), need - len(data))
    return read_metadata(data, verify_crc=False)


def entry_row(s3, bucket: str, item: dict) -> tuple | None:
    """One ``ENTRY_SCHEMA`` row for a log (or compacted) item: its id, the pickled item, its
    byte range and its messages (only the kept ones of a compacted item); None for markers.
    Raises EntryUnreadable naming the entry when its bytes cannot be read or decoded."""
    count = int(item.get("n", {"N": "0"})["N"])
    if count == 0 or item.get("fence", {}).get("BOOL", False):
        return None  # markers and fences hold no messages
    obj, off, length = item["obj"]["S"], int(item["off"]["N"]), int(item["len"]["N"])
    eid = int(item["eid"]["N"])
    try:
        meta = entry_metadata(s3, bucket, obj, off, length)
    except Exception as exc:
        raise EntryUnreadable(f"entry {eid} ({obj}): {type(exc).__name__}: {exc}") from exc
    kept = kept_of(item)
    messages = []
    for i, m in enumerate(meta.messages):
        if kept is not None and i not in kept:
            continue
        chunk = m.chunk
        uuid = f"{meta.producer_name}\x00{chunk.uuid}" if chunk else None
        messages.append(
            (
                i,
                m.key,
                m.null_value,
                uuid,
                chunk.chunk_id if chunk else None,
                chunk.total_chunks if chunk else None,
                m.publish_time_ms,
            )
        )
    return (eid, pickle.dumps(item), obj, off, length, messages)


def _read_slices(args: JobArgs, tasks: Iterable[tuple[str, int, int]]) -> Iterator[tuple]:
    ddb, s3 = dynamodb_client(args), s3_client(args)
    with ThreadPoolExecutor(max_workers=8) as pool:
        for pk, low, high in tasks:
            items = list(query_between(ddb, args.log_table, pk, low, high))
            for row in pool.map(partial(entry_row, s3, args.bucket), items):
                if row is not None:
                    yield row


def extract(
    spark,
    args: JobArgs,
    log_key: str,
    previous_ledger: str,
    previous_horizon: int,
    head: int,
    slice_entries: int = 2000,
) -> DataFrame:
    """Entries of the previous compacted view (ids up to ``previous_horizon``) and of the
    log after it (up to ``head``), as ``ENTRY_SCHEMA`` rows read by the executors."""
    parallelism = spark.sparkContext.defaultParallelism
    tasks: list[tuple[str, int, int]] = []
    if previous_ledger and previous_horizon >= 0:
        wanted = min(4 * parallelism, math.ceil((previous_horizon + 1) / slice_entries))
        tasks += [(previous_ledger, a, b) for a, b in slices(0, previous_horizon, wanted)]
    fresh = math.ceil((head - previous_horizon) / slice_entries)
    tasks += [(log_key, a, b) for a, b in slices(previous_horizon + 1, head, fresh)]
    if not tasks:
        return spark.createDataFrame([], ENTRY_SCHEMA)
    rdd = spark.sparkContext.parallelize(tasks, len(tasks)).mapPartitions(
        partial(_read_slices, args)
    )
    return spark.createDataFrame(rdd, ENTRY_SCHEMA)


def messages_of(entries: DataFrame) -> DataFrame:
    """One ``MESSAGE_SCHEMA`` row per message of the extracted entries."""
    exploded = entries.select("entry_id", F.explode("messages").alias("m"))
    return exploded.select("entry_id", "m.*").select(*MESSAGE_SCHEMA.fieldNames())


# -- load ---------------------------------------------------------------------------------


def _batch_write(ddb, table: str, requests: list[dict]) -> None:
    for i in range(0, len(requests), 25):
        pending = {table: requests[i : i + 25]}
        for attempt in range(12):
            left = ddb.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
            if not left:
                break
            pending = left
            time.sleep(min(1.0, 0.02 * 2**attempt))
        else:
            raise RuntimeError(f"DynamoDB kept items of {table} unprocessed; retry the job")


def _copy(s3, bucket: str, row) -> bytes:
    try:
        data = _get(s3, bucket, row["obj"], row["off"], row["len"])
        read_metadata(data, verify_crc=True)  # never copy a damaged entry
    except Exception as exc:
        where = f"entry {row['entry_id']} ({row['obj']})"
        raise EntryUnreadable(f"{where}: {type(exc).__name__}: {exc}") from exc
    return data


def _write_segments(
    args: JobArgs,
    ledger: str,
    prefix: str,
    segment_bytes: int,
    max_entry_bytes: int,
    rows: Iterable,
) -> Iterator[tuple[int, int, int, int]]:
    """Copy one Spark partition's kept entries (sorted by id) into segments of about
    ``segment_bytes``; an entry above ``max_entry_bytes`` gets an object of its own (the
    receive path hands big entries out as a presigned URL of their whole object). Yields
    ``(entries, bytes, messages, segments)`` per segment written."""
    ddb, s3 = dynamodb_client(args), s3_client(args)
    group: list = []
    size = 0

    def flush(pool) -> tuple[int, int, int, int]:
        datas = list(pool.map(partial(_copy, s3, args.bucket), group))
        key = f"{prefix}{group[0]['entry_id']}-{group[-1]['entry_id']}"
        s3.put_object(Bucket=args.bucket, Key=key, Body=b"".join(datas))
        offset, puts, kept = 0, [], 0
        for row, data in zip(group, datas, strict=True):
            item = compacted_item(
                pickle.loads(row["item"]), ledger, key, offset, len(data), row["kept"]
            )
            puts.append({"PutRequest": {"Item": item}})
            offset += len(data)
            kept += len(row["kept"])
        _batch_write(ddb, args.log_table, puts)
        return (len(group), offset, kept, 1)

    with ThreadPoolExecutor(max_workers=8) as pool:
        for row in rows:
            if row["len"] > max_entry_bytes:
                if group:
                    yield flush(pool)
                group = [row]
                yield flush(pool)
                group, size = [], 0
                continue
            group.append(row)
            size += row["len"]
            if size >= segment_bytes:
                yield flush(pool)
                group, size = [], 0
        if group:
            yield flush(pool)


def load(
    spark,
    args: JobArgs,
    plan: DataFrame,
    ledger: str,
    prefix: str,
    segment_bytes: int,
    max_entry_bytes: int = 1024 * 1024,
) -> tuple[int, int, int, int]:
    """Write the kept entries (``plan``: entry_id, kept, item, obj, off, len) as compacted
    segments and ledger items (see ``_write_segments``); returns ``(entries, bytes,
    messages, segments)``."""
    total = plan.agg(F.sum("len")).collect()[0][0] or 0
    if total == 0:
        return (0, 0, 0, 0)
    parallelism = spark.sparkContext.defaultParallelism
    parts = max(1, min(math.ceil(total / segment_bytes), 4 * parallelism))
    ordered = plan.repartitionByRange(parts, "entry_id").sortWithinPartitions("entry_id")
    written = ordered.rdd.mapPartitions(
        partial(_write_segments, args, ledger, prefix, segment_bytes, max_entry_bytes)
    ).collect()
    entries, size, messages, segments = (sum(w[i] for w in written) for i in range(4))
    return entries, size, messages, segments


# -- driver-side cleanup ------------------------------------------------------------------


def list_objects(s3, bucket: str, prefix: str) -> dict[str, int]:
    """``key -> size`` of the objects under ``prefix``."""
    out: dict[str, int] = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        out.update({o["Key"]: int(o["Size"]) for o in page.get("Contents", [])})
    return out


def delete_ledger(ddb, table: str, ledger: str) -> int:
    """Delete every item of a compacted ledger; returns how many."""
    keys = [
        {"DeleteRequest": {"Key": {"pk": i["pk"], "eid": i["eid"]}}}
        for i in query_between(ddb, table, ledger, 0, 2**63 - 1)
    ]
    _batch_write(ddb, table, keys)
    return len(keys)
