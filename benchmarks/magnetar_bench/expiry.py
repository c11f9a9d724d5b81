"""Expire throughput on the embedded stack, against the same work done by a single-process
boto3 loop in the same run. Not a test: its output goes to docs/benchmarks.md.

    magnetar perf expire [--entries 10000] [--partitions 4] [--size 200]
        [--acked 0.9] [--io-threads 8] [--shuffle-partitions N] [--entries-per-object 1]

Two identical data sets (N single-message entries spread over P partitions, written straight
to S3 and the log table, one durable subscription per partition whose mark-delete covers the
``--acked`` fraction) are expired in their own namespaces: one by ``expire.main`` (local[*]),
one by a plain loop that does the same reads and writes one request at a time — purge, bucket
listing, trash manifests, index Query, cursors, dedup snapshot, BatchWriteItem deletes,
trash manifest. Spark's start-up is measured apart.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

from magnetar_core.adapters.aws.cursors import CursorStore
from magnetar_core.adapters.aws.log import LogStore
from magnetar_core.adapters.aws.producers import ProducerStateStore
from magnetar_core.domain.cursor.state import SHARED, CursorState
from magnetar_core.domain.log import IndexEntry, log_key
from magnetar_jobs import garbage
from magnetar_jobs.catalog import query_index
from magnetar_jobs.expire_extract import list_objects
from magnetar_jobs.expire_load import delete_items, snapshot_dedup
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.names import TopicName

NOW_MS = 1_763_700_000_000


def load_dataset(
    stack, namespace: str, entries: int, partitions: int, size: int, acked: float, per_object=1
):
    """Commit ``entries`` entries (objects of ``per_object`` entries, as segments hold them,
    + index items) and one cursor per partition whose mark-delete covers the ``acked``
    fraction; returns the log keys."""
    s3, ddb = stack.client("s3"), stack.client("dynamodb")
    bucket, table = stack.name("EntriesBucket"), stack.name("LogTable")
    cursors = CursorStore(ddb, stack.name("CursorsTable"))
    topics = [TopicName.parse(f"persistent://public/{namespace}/t{p}") for p in range(partitions)]

    def write_partition(p: int) -> str:
        topic, pk = topics[p], log_key(str(topics[p]), 1)
        ddb.put_item(
            TableName=stack.name("TopicsTable"),
            Item={
                "pk": {"S": topic.namespace_name},
                "name": {"S": topic.local},
                "ledger": {"N": "1"},
                "parts": {"N": "0"},
                "state": {"S": "active"},
                "ver": {"N": "1"},
                "created": {"N": "1"},
            },
        )
        prefix = "entries/" + str(topic).replace("://", "/") + "/"
        items = []
        count = len(range(p, entries, partitions))
        for first in range(0, count, per_object):
            key, body = f"{prefix}{uuid.uuid4().hex}", b""
            for eid in range(first, min(first + per_object, count)):
                message = EntryMessage(b"x" * size, sequence_id=eid, publish_time_ms=NOW_MS + eid)
                data = encode_entry([message], producer_name=f"perf-{p}")
                entry = IndexEntry(
                    eid, key, len(body), len(data), 1, False, NOW_MS + eid, NOW_MS + eid,
                    f"perf-{p}", eid, eid,
                )  # fmt: skip
                items.append({"PutRequest": {"Item": entry.to_item(pk)}})
                body += data
            s3.put_object(Bucket=bucket, Key=key, Body=body)
        for i in range(0, len(items), 25):
            request = {table: items[i : i + 25]}
            while request:
                request = ddb.batch_write_item(RequestItems=request).get("UnprocessedItems")
        state = CursorState.new("s", SHARED, -1, True)
        state.mark_delete = int(count * acked) - 1
        state.read_position = state.mark_delete + 1
        cursors.put(pk, state)
        return pk

    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(write_partition, range(partitions)))


def loop_baseline(stack, namespace: str, keys: list[str], now_ms: int) -> dict:
    """The same expiry by one process, one request at a time (default retention, no TTL)."""
    from magnetar_core.adapters.aws.clients import RequestCounter

    counter = RequestCounter()
    s3, ddb = stack.client("s3"), stack.client("dynamodb")
    for client in (s3, ddb):
        client.meta.events.register("before-call.*.*", counter.hook)
    bucket, log_table = stack.name("EntriesBucket"), stack.name("LogTable")
    cursors = CursorStore(ddb, stack.name("CursorsTable"))
    producers = ProducerStateStore(ddb, stack.name("CursorsTable"))
    start = time.perf_counter()
    garbage.purge_due(s3, bucket, now_ms, ddb, log_table)
    listed = list_objects(s3, bucket, [f"entries/persistent/public/{namespace}/"])
    garbage.trashed_keys(s3, bucket)
    entries = size = objects = 0
    for pk in keys:
        rows = list(query_index(ddb, log_table, pk))
        held = [c.mark_delete for c in cursors.list(pk) if c.durable]
        last = max(r[1] for r in rows)
        bound = min(held) if held else last
        gone = [r for r in rows if r[1] <= bound and r[1] < last]
        if not gone:
            continue
        snapshot_dedup(LogStore(ddb, log_table), producers, pk, max(r[1] for r in gone))
        delete_items(ddb, log_table, pk, (r[1] for r in gone))
        kept = {r[2] for r in rows if r[1] > bound or r[1] == last}
        freed = {r[2]: r[3] + r[4] for r in gone if r[2] and r[2] not in kept}
        garbage.schedule_deletes(s3, bucket, freed, now_ms, "expire-loop", freed)
        entries += len(gone)
        size += sum(r[4] for r in gone)
        objects += len(freed)
    seconds = time.perf_counter() - start
    return {
        "seconds": round(seconds, 2),
        "entries": entries,
        "bytes": size,
        "objects_trashed": objects,
        "objects_listed": len(listed),
        "aws_requests": dict(sorted(counter.snapshot().items())),
    }


def run_benchmark(
    entries: int,
    partitions: int,
    size: int,
    acked: float,
    io_threads: int,
    shuffle: list,
    per_object: int = 1,
) -> dict:
    """Start a stack, load two data sets, expire one with Spark and one with a loop."""
    from magnetar_jobs.common import spark_session
    from magnetar_local.launcher import DEFAULT_SCRIPTS_DIR
    from magnetar_local.stack import LocalStack

    scripts = str(DEFAULT_SCRIPTS_DIR)
    if scripts not in sys.path:
        sys.path.insert(0, scripts)
    core = str(DEFAULT_SCRIPTS_DIR.parent / "layers/core/python")
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (scripts, core, os.environ.get("PYTHONPATH", "")) if p
    )
    import expire

    with LocalStack().start() as stack:
        spark_ns, loop_ns = f"perfx{uuid.uuid4().hex[:6]}", f"perfy{uuid.uuid4().hex[:6]}"
        t0 = time.perf_counter()
        load_dataset(stack, spark_ns, entries, partitions, size, acked, per_object)
        load_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        spark = spark_session("expire")
        spark.sparkContext.setLogLevel("ERROR")
        spark.range(1).count()
        startup_s = time.perf_counter() - t0
        argv = ["--bucket", stack.name("EntriesBucket"), "--endpoint-url", stack.aws_endpoint_url]
        argv += ["--topics-table", stack.name("TopicsTable"), "--log-table", stack.name("LogTable")]
        argv += ["--cursors-table", stack.name("CursorsTable"), "--region", stack.region]
        argv += ["--namespace", f"public/{spark_ns}", "--io-threads", str(io_threads)]
        argv += ["--full-pass", "true"]  # the loop lists and reads everything too
        argv += shuffle
        t0 = time.perf_counter()
        summary = expire.main(argv)
        spark_s = time.perf_counter() - t0
        cores = spark.sparkContext.defaultParallelism
        loop_keys = load_dataset(stack, loop_ns, entries, partitions, size, acked, per_object)
        loop = loop_baseline(stack, loop_ns, loop_keys, int(time.time() * 1000))
    return {
        "entries": entries,
        "partitions": partitions,
        "payload_bytes": size,
        "acked": acked,
        "entries_per_object": per_object,
        "spark_cores": cores,
        "load_seconds": round(load_s, 1),
        "spark_startup_seconds": round(startup_s, 1),
        "spark": {
            "seconds": round(spark_s, 2),
            "entries": summary.entries_deleted,
            "bytes": summary.bytes_deleted,
            "objects_trashed": summary.details.get("objects_trashed", 0),
            "entries_per_second": round(summary.entries_deleted / spark_s, 1),
        },
        "loop": {**loop, "entries_per_second": round(loop["entries"] / loop["seconds"], 1)},
        "loop_over_spark_time": round(loop["seconds"] / spark_s, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="magnetar perf expire", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--size", type=int, default=200, help="payload bytes per entry")
    parser.add_argument("--acked", type=float, default=0.9, help="fraction acknowledged")
    parser.add_argument("--io-threads", type=int, default=8, help="requests in flight per task")
    parser.add_argument("--shuffle-partitions", help="the job's --shuffle-partitions")
    parser.add_argument("--entries-per-object", type=int, default=1, help="1: one object each")
    args = parser.parse_args(argv)
    shuffle = ["--shuffle-partitions", args.shuffle_partitions] if args.shuffle_partitions else []
    with contextlib.redirect_stdout(sys.stderr):  # job progress must not mix with the report
        report = run_benchmark(
            args.entries,
            args.partitions,
            args.size,
            args.acked,
            args.io_threads,
            shuffle,
            args.entries_per_object,
        )
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
