"""Extract of the compact-topic job: boto3 inside Spark executors (load:
``compact_topic_load``).

The index items of a partition's log after the previous horizon, plus the items of
the previous compacted ledger (the view so far), read by executors in entry-id slices; each
entry's header and per-message metadata are read with a ranged GET and decoded with
``magnetar_wire`` (payloads are never decompressed). One row per entry (``ENTRY_SCHEMA``)
carries its source item (pickled), its byte range and its messages; a previously compacted
entry carries only the messages it kept.
"""

from __future__ import annotations

import math
import pickle
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

from magnetar_core.adapters.aws.compaction import kept_of
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
    pages = ddb.get_paginator("query").paginate(
        TableName=table,
        KeyConditionExpression="pk = :pk AND eid BETWEEN :a AND :b",
        ExpressionAttributeValues={
            ":pk": {"S": pk},
            ":a": {"N": str(low)},
            ":b": {"N": str(high)},
        },
        ConsistentRead=True,
    )
    for page in pages:
        yield from page["Items"]


def get_range(s3, bucket: str, key: str, offset: int, length: int) -> bytes:
    rng = f"bytes={offset}-{offset + length - 1}"
    return s3.get_object(Bucket=bucket, Key=key, Range=rng)["Body"].read()


def entry_metadata(s3, bucket: str, key: str, offset: int, length: int):
    """An entry's header and per-message metadata (``EntryMetadata``): one ranged GET, two
    when the metadata is longer than the first probe."""
    data = get_range(s3, bucket, key, offset, min(length, _METADATA_PROBE_BYTES))
    need = HEADER_SIZE + read_header(data).metadata_len
    if need > len(data):
        data += get_range(s3, bucket, key, offset + len(data), need - len(data))
    return read_metadata(data, verify_crc=False)


def entry_row(s3, bucket: str, item: dict) -> tuple | None:
    """One ``ENTRY_SCHEMA`` row for a log (or compacted) item: its id, the pickled item (an
    inline entry's bytes in its ``d``), its byte range and its messages (only the kept ones of a compacted item); None for markers.
    Raises EntryUnreadable naming the entry when its bytes cannot be read or decoded."""
    count = int(item.get("n", {"N": "0"})["N"])
    if count == 0 or item.get("fence", {}).get("BOOL", False):
        return None  # markers and fences hold no messages
    obj, off, length = item["obj"]["S"], int(item["off"]["N"]), int(item["len"]["N"])
    eid = int(item["eid"]["N"])
    try:
        if "d" in item:  # inline: the bytes are in the item (no request)
            meta = read_metadata(bytes(item["d"]["B"]), verify_crc=False)
        else:
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
