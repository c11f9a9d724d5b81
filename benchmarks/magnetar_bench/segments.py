"""``magnetar perf segments``: compact-segments throughput on the embedded stack, against the
same work done by a single-process boto3 loop in the same run.

Two identical data sets (N single-message entries of ``--size`` payload bytes spread over
``--partitions`` partitions, written straight to S3 and the log table) are compacted: one by
the Spark job (``compact_segments.main``, local[*]), one by a plain loop in this process that
plans with ``plan_ledger`` and writes with the same SegmentWriter, one request at a time.
Spark's start-up is measured apart. Not a test: its output goes to docs/benchmarks.md.
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

from magnetar_core.domain.log import IndexEntry, log_key


def _entry_bytes(size: int, i: int) -> bytes:
    from magnetar_wire import EntryMessage, encode_entry

    payload = (f"{i:08d}" * (size // 8 + 1))[:size].encode()
    message = EntryMessage(payload=payload, sequence_id=i, publish_time_ms=1_763_700_000_000 + i)
    return encode_entry([message], producer_name="perf")


def _load_dataset(stack, namespace: str, entries: int, partitions: int, size: int) -> list[str]:
    """Write ``entries`` committed entries (objects + index items); returns the topics."""
    from magnetar_wire.names import TopicName

    s3, ddb = stack.client("s3"), stack.client("dynamodb")
    bucket, table = stack.name("EntriesBucket"), stack.name("LogTable")
    topics_table = stack.name("TopicsTable")
    topics = [TopicName.parse(f"persistent://public/{namespace}/t{p}") for p in range(partitions)]
    for t in topics:
        ddb.put_item(
            TableName=topics_table,
            Item={
                "pk": {"S": t.namespace_name},
                "name": {"S": t.local},
                "ledger": {"N": "1"},
                "parts": {"N": "0"},
                "state": {"S": "active"},
                "ver": {"N": "1"},
                "created": {"N": "1"},
            },
        )

    def write_partition(p: int) -> None:
        topic = topics[p]
        prefix = "entries/" + str(topic).replace("://", "/") + "/"
        items = []
        for eid in range(p, entries, partitions):
            data = _entry_bytes(size, eid)
            key = f"{prefix}{uuid.uuid4().hex}"
            s3.put_object(Bucket=bucket, Key=key, Body=data)
            entry = IndexEntry(eid // partitions, key, 0, len(data), 1, False, 1, 1, "perf", 0, 0)
            items.append({"PutRequest": {"Item": entry.to_item(log_key(str(topic), 1))}})
        for i in range(0, len(items), 25):
            request = {table: items[i : i + 25]}
            while request:
                request = ddb.batch_write_item(RequestItems=request).get("UnprocessedItems")

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(write_partition, range(partitions)))
    return [str(t) for t in topics]


def _job_argv(stack, options: dict[str, str]) -> list[str]:
    argv = [
        "--JOB_NAME", "compact-segments",
        "--bucket", stack.name("EntriesBucket"),
        "--topics-table", stack.name("TopicsTable"),
        "--log-table", stack.name("LogTable"),
        "--cursors-table", stack.name("CursorsTable"),
        "--endpoint-url", stack.aws_endpoint_url,
        "--region", stack.region,
    ]  # fmt: skip
    for key, value in options.items():
        argv += [f"--{key}", value]
    return argv


def _loop_baseline(stack, topics: list[str], options: dict[str, str]) -> dict:
    """The same compaction by one process, one request at a time (no Spark, no threads)."""
    from magnetar_core.adapters.aws.clients import RequestCounter
    from magnetar_jobs.catalog import query_index
    from magnetar_jobs.compact_segments_load import Segment, SegmentWriter
    from magnetar_jobs.compact_segments_transform import SegmentParams, plan_ledger

    counter = RequestCounter()
    s3, ddb = stack.client("s3"), stack.client("dynamodb")
    for client in (s3, ddb):
        client.meta.events.register("before-call.*.*", counter.hook)
    params = SegmentParams(
        target_segment_bytes=int(options["target-segment-bytes"]),
        min_tail_bytes=int(options["min-tail-bytes"]),
    )
    writer = SegmentWriter(s3, ddb, stack.name("EntriesBucket"), stack.name("LogTable"), 1)
    due = int(time.time() * 1000) + int(options["grace-ms"])
    entries = size = segments = 0
    start = time.perf_counter()
    for topic in topics:
        rows = list(query_index(ddb, stack.name("LogTable"), log_key(topic, 1)))
        for plan in plan_ledger(rows, params):
            result = writer.compact(Segment.from_plan(plan), due)
            entries += result.switched
            size += result.switched_bytes
            segments += 1
    seconds = time.perf_counter() - start
    writer.close()
    return {
        "seconds": round(seconds, 2),
        "entries": entries,
        "bytes": size,
        "segments": segments,
        "aws_requests": dict(sorted(counter.snapshot().items())),
    }


def run_benchmark(entries: int, partitions: int, size: int, options: dict[str, str]) -> dict:
    """Start a stack, load two data sets, compact one with Spark and one with a loop."""
    from magnetar_jobs.common import spark_session
    from magnetar_local.launcher import DEFAULT_SCRIPTS_DIR
    from magnetar_local.stack import LocalStack

    scripts = str(DEFAULT_SCRIPTS_DIR)
    if scripts not in sys.path:
        sys.path.insert(0, scripts)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (scripts, str(DEFAULT_SCRIPTS_DIR.parent / "layers/core/python"),
                    os.environ.get("PYTHONPATH", "")) if p
    )  # fmt: skip
    import compact_segments

    with LocalStack().start() as stack:
        spark_ns, loop_ns = f"perfs{uuid.uuid4().hex[:6]}", f"perfl{uuid.uuid4().hex[:6]}"
        t0 = time.perf_counter()
        _load_dataset(stack, spark_ns, entries, partitions, size)
        load_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        spark = spark_session("perf-segments")
        spark.sparkContext.setLogLevel("ERROR")
        spark.range(1).count()
        startup_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        summary = compact_segments.main(_job_argv(stack, options))  # the only data so far
        spark_s = time.perf_counter() - t0
        cores = spark.sparkContext.defaultParallelism
        loop_topics = _load_dataset(stack, loop_ns, entries, partitions, size)
        loop = _loop_baseline(stack, loop_topics, options)
    mb = summary.bytes_compacted / 1e6
    return {
        "entries": entries,
        "partitions": partitions,
        "payload_bytes": size,
        "options": options,
        "spark_cores": cores,
        "load_seconds": round(load_s, 1),
        "spark_startup_seconds": round(startup_s, 1),
        "spark": {
            "seconds": round(spark_s, 2),
            "entries": summary.entries_compacted,
            "bytes": summary.bytes_compacted,
            "segments": summary.details.get("segments_written", 0),
            "entries_per_second": round(summary.entries_compacted / spark_s, 1),
            "megabytes_per_second": round(mb / spark_s, 2),
        },
        "loop": {
            **loop,
            "entries_per_second": round(loop["entries"] / loop["seconds"], 1),
            "megabytes_per_second": round(loop["bytes"] / 1e6 / loop["seconds"], 2),
        },
        "loop_over_spark_time": round(loop["seconds"] / spark_s, 2),
    }


def main(argv: list[str] | None = None) -> int:
    """CLI entry: ``magnetar perf segments [--entries N] [--partitions P] [--size B] ...``."""
    parser = argparse.ArgumentParser(
        prog="magnetar perf segments", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--size", type=int, default=1000, help="payload bytes per entry")
    parser.add_argument("--target-segment-bytes", default=str(1024 * 1024))
    parser.add_argument("--io-threads", default="8", help="I/O threads per Spark task")
    args = parser.parse_args(argv)
    options = {
        "target-segment-bytes": args.target_segment_bytes,
        "min-tail-bytes": "1",
        "grace-ms": "900000",
        "io-threads": args.io_threads,
    }
    with contextlib.redirect_stdout(sys.stderr):  # job progress must not mix with the report
        report = run_benchmark(args.entries, args.partitions, args.size, options)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
