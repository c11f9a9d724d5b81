"""Load of the compact-topic job: boto3 inside Spark executors (extract:
``compact_topic_extract``).

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

from magnetar_core.adapters.aws.compaction import compacted_item
from magnetar_wire import read_metadata

from .common import JobArgs, dynamodb_client, s3_client
from .compact_topic_extract import EntryUnreadable, get_range, query_between


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


def kept_entry_bytes(s3, bucket: str, row) -> bytes:
    """A kept entry's bytes, CRC checked: from its pickled item when inline, else one ranged
    GET. Raises EntryUnreadable naming the entry."""
    try:
        inline = pickle.loads(row["item"]).get("d")
        if inline is not None:
            data = bytes(inline["B"])
        else:
            data = get_range(s3, bucket, row["obj"], row["off"], row["len"])
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
        datas = list(pool.map(partial(kept_entry_bytes, s3, args.bucket), group))
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
