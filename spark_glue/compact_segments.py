"""compact-segments: merge a partition's small entry objects into segment objects.

    spark-submit spark_glue/compact_segments.py --JOB_NAME compact-segments \
        --bucket B --table-prefix magnetar [--endpoint-url http://127.0.0.1:PORT] \
        [--topic T] [--target-segment-bytes 8388608] [--max-entry-bytes 1048576] \
        [--min-tail-bytes N] [--head-entries 0] [--grace-ms 900000] [--io-threads 8] \
        [--batch-segments N] [--inline-min-age-ms 86400000]

Inline entries (bytes in their index item) move into segments once published more than
``--inline-min-age-ms`` ago (docs/architecture/producing.md, "Inline entries").

Extract: the live partitions (topics table) and their index items (log table, read in
executors). Transform: magnetar_jobs.compact_segments_transform (pure). Load:
magnetar_jobs.compact_segments_load in executors (boto3, no Hadoop S3 connector), in
batches so progress is printed as segments complete. First of all, trash manifests that fell
due are purged. Prints a summary at the end; ``main`` returns it.
"""

from __future__ import annotations

import time

from magnetar_jobs.catalog import index_frame, partitions
from magnetar_jobs.common import (
    dynamodb_client,
    parse_args,
    s3_client,
    spark_session,
)
from magnetar_jobs.compact_segments_load import JOB, load_partition
from magnetar_jobs.compact_segments_transform import SegmentParams, transform
from magnetar_jobs.garbage import purge_due
from magnetar_jobs.reporting import Progress, Summary

DEFAULTS = {
    "target-segment-bytes": str(8 * 1024 * 1024),
    "max-entry-bytes": str(1024 * 1024),
    "head-entries": "0",
    "inline-min-age-ms": str(24 * 3600 * 1000),
    "grace-ms": str(15 * 60 * 1000),
    "io-threads": "8",
}


def params_of(args, now_ms: int) -> SegmentParams:
    """The transform's parameters from the job options at ``now_ms`` (epoch ms); raises
    ValueError when malformed."""
    tail = args.option("min-tail-bytes")
    return SegmentParams(
        target_segment_bytes=args.int_option("target-segment-bytes", 8 * 1024 * 1024),
        max_entry_bytes=args.int_option("max-entry-bytes", 1024 * 1024),
        min_tail_bytes=int(tail) if tail else None,
        head_entries=args.int_option("head-entries", 0),
        inline_before_ms=now_ms - args.int_option("inline-min-age-ms", 24 * 3600 * 1000),
    )


def main(argv: list[str] | None = None, now_ms=lambda: int(time.time() * 1000)) -> Summary:
    """Run the job; returns the printed Summary (``now_ms``: the clock, epoch ms)."""
    args = parse_args(argv, {"JOB_NAME": JOB, **DEFAULTS})
    params = params_of(args, now_ms())
    grace_ms = args.int_option("grace-ms", 900_000)
    threads = args.int_option("io-threads", 8)
    started = time.monotonic()
    summary = Summary(JOB)
    progress = Progress(JOB, unit="segments")

    objects, freed = purge_due(
        s3_client(args), args.bucket, now_ms(), dynamodb_client(args), args.log_table
    )
    summary.add(objects_deleted=objects, bytes_deleted=freed)
    progress.note(f"purged {objects} objects ({freed} bytes) of due trash manifests")

    spark = spark_session(args.job_name)
    parts = partitions(args, args.option("topic"))
    summary.partitions = len(parts)
    index = index_frame(spark, args, [p.partition_key for p in parts])
    plan = transform(index, params).orderBy("pk", "first_eid").collect()
    progress.total = len(plan)
    planned_entries = sum(r.entries for r in plan)
    progress.note(f"{len(parts)} partitions: {len(plan)} segments of {planned_entries} entries")

    slices = spark.sparkContext.defaultParallelism
    batch = args.int_option("batch-segments", 0) or max(4 * slices, 1)
    due_ms = now_ms() + grace_ms
    for i in range(0, len(plan), batch):
        rows = plan[i : i + batch]
        results = (
            spark.sparkContext.parallelize(rows, min(len(rows), slices))
            .mapPartitions(lambda it: load_partition(it, args, due_ms, threads))
            .collect()
        )
        for r in results:
            summary.add(entries_compacted=r.switched, bytes_compacted=r.switched_bytes)
            summary.add(**{f"segments_{r.outcome}": 1})
            summary.add(entries_not_switched=r.planned - r.switched)
        summary.add(objects_replaced=sum(r.switched - r.switched_inline for r in results))
        summary.add(inline_entries_moved=sum(r.switched_inline for r in results))
        progress.advance(
            n=len(results),
            entries=summary.entries_compacted,
            bytes=summary.bytes_compacted,
        )
    summary.seconds = round(time.monotonic() - started, 3)
    summary.print()
    return summary


if __name__ == "__main__":
    main()
