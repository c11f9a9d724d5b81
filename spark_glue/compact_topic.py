"""compact-topic: Pulsar's topic compaction on Spark (Glue / EMR Serverless / spark-submit).

    compact_topic.py --bucket B --table-prefix P [--endpoint-url U] (--topic T | --all)
        [--run-id R] [--segment-bytes 8388608] [--max-entry-bytes 1048576] [--grace-ms 900000]
        [--chunk-wait-ms 60000] [--stale-after-ms 7200000] [--slice-entries 2000]

First the due trash manifests are purged (``garbage.purge_due``). Then per partition
(every partition of ``--topic``, or of every persistent topic with ``--all``):
1. claim: the ``$compaction`` pointer goes RUNNING for this run (conditional write; a run
   started by the admin route passes its ``--run-id``; another live run → skipped);
2. extract (executors): the previous compacted view plus the log after its horizon, up to
   the horizon of this run (the head at its start, lowered below a chunked message still
   arriving);
3. transform (``magnetar_jobs.compact_topic_transform``): latest value per key, tombstones
   remove keys, keyless messages left out;
4. load (executors): kept entries copied into compacted segment objects (one above
   ``--max-entry-bytes`` alone), the compacted ledger's items written (original entry ids,
   kept batch indexes);
5. switch: the pointer goes SUCCESS with the new ledger and horizon (conditional on this
   run still owning it); the previous ledger is retired: its objects to a trash manifest
   (due after ``--grace-ms``, 15 min as presigned download URLs), its items deleted by a
   later run once due.
A failure records ERROR with the error in the pointer. Idempotent: a re-run with nothing new
past the horizon only reports SUCCESS; a crashed run's ledger is retired by the next run.
"""

from __future__ import annotations

import sys
import time
import uuid

from magnetar_core.adapters.aws.compaction import CompactionStore
from magnetar_core.adapters.aws.log import LogStore
from magnetar_core.domain.compaction import (
    RUNNING,
    CompactionInProgress,
    CompactionState,
    compacted_ledger_key,
    ledger_segment_prefix,
    segment_prefix,
)
from magnetar_core.domain.runtime import Runtime
from magnetar_core.services.compaction import update_state
from magnetar_jobs import catalog, garbage
from magnetar_jobs.common import (
    JobArgs,
    dynamodb_client,
    parse_args,
    s3_client,
    spark_session,
)
from magnetar_jobs.compact_topic_extract import error_text, extract, messages_of
from magnetar_jobs.compact_topic_load import delete_ledger, list_objects, load
from magnetar_jobs.compact_topic_transform import (
    CompactParams,
    kept_batches,
    safe_horizon,
    transform,
)
from magnetar_jobs.reporting import Progress, Summary

JOB = "compact-topic"


class Superseded(Exception):
    """Another run took the partition over (this one was taken for crashed)."""


def _now_ms() -> int:
    return int(time.time() * 1000)


class PartitionCompaction:
    """The driver side of compacting one partition: pointer, cleanup, extract → load."""

    def __init__(self, spark, args: JobArgs, part: catalog.PartitionInfo, run_id: str) -> None:
        self.spark, self.args, self.part, self.run_id = spark, args, part, run_id
        self.pk = part.partition_key
        self.ddb, self.s3 = dynamodb_client(args), s3_client(args)
        self.store = CompactionStore(self.ddb, args.cursors_table, args.log_table)
        self.ledger = compacted_ledger_key(self.pk, run_id)
        self.grace_ms = args.int_option("grace-ms", 900_000)
        self.rt = Runtime()

    def _update(self, change) -> CompactionState:
        return update_state(self.store, self.pk, change, self.rt)

    def claim(self) -> CompactionState:
        """RUNNING for this run; raises CompactionInProgress when another run is live."""
        stale_ms = self.args.int_option("stale-after-ms", 2 * 3600 * 1000)

        def change(state: CompactionState) -> bool:
            state.start(self.run_id, self.ledger, _now_ms(), stale_ms)
            return True

        return self._update(change)

    def switch(self, ledger: str, horizon: int) -> None:
        """SUCCESS with ``ledger`` up to ``horizon``; raises Superseded."""

        def change(state: CompactionState) -> bool:
            if state.status != RUNNING or state.run_id != self.run_id:
                raise Superseded(f"run {state.run_id or '-'} took over {self.part.topic}")
            state.succeed(ledger, horizon, _now_ms())
            return True

        self._update(change)

    def fail(self, error: str) -> None:
        def change(state: CompactionState) -> bool:
            if state.status != RUNNING or state.run_id != self.run_id:
                return False
            state.fail(error, _now_ms())
            return True

        self._update(change)

    def tidy(self) -> int:
        """Retired ledgers: objects into trash (due at retirement + grace), items deleted
        once due. Returns how many objects went to trash."""
        state = self.store.get(self.pk)
        trashed = 0
        pending = state.untrashed()
        for r in pending:
            objects = list_objects(self.s3, self.args.bucket, ledger_segment_prefix(r.ledger))
            due = r.at_ms + self.grace_ms
            garbage.schedule_deletes(self.s3, self.args.bucket, objects, due, JOB, sizes=objects)
            trashed += len(objects)
        names = [r.ledger for r in pending]

        def mark(state: CompactionState) -> bool:
            state.mark_trashed(names)
            return bool(names)

        due = self._update(mark).due_retired(_now_ms(), self.grace_ms)
        for ledger in due:
            delete_ledger(self.ddb, self.args.log_table, ledger)

        def forget(state: CompactionState) -> bool:
            state.forget_retired(due)
            return bool(due)

        self._update(forget)
        return trashed

    def run(self) -> dict[str, int]:
        """Compact the partition; returns counts for the summary. Records ERROR and
        re-raises on failure."""
        try:
            state = self.claim()
        except CompactionInProgress:
            return {"partitions_skipped": 1}
        try:
            counts = self._compact(state)
            counts["objects_trashed"] = self.tidy()
            return counts
        except Superseded:
            return {"partitions_superseded": 1}
        except Exception as exc:
            self.fail(error_text(exc))
            raise

    def _compact(self, state: CompactionState) -> dict[str, int]:
        head = LogStore(self.ddb, self.args.log_table, self.args.cursors_table).head(self.pk)
        if head <= state.horizon:
            self.switch(state.ledger, state.horizon)
            return {"partitions_unchanged": 1}
        slice_entries = self.args.int_option("slice-entries", 2000)
        entries = extract(
            self.spark, self.args, self.pk, state.ledger, state.horizon, head, slice_entries
        ).persist()
        try:
            messages = messages_of(entries)
            chunk_wait_ms = self.args.int_option("chunk-wait-ms", 60_000)
            horizon = safe_horizon(messages, head, _now_ms(), chunk_wait_ms)
            if horizon <= state.horizon:
                self.switch(state.ledger, state.horizon)
                return {"partitions_unchanged": 1}
            kept = kept_batches(transform(messages, CompactParams(horizon)))
            plan = kept.join(entries.select("entry_id", "item", "obj", "off", "len"), "entry_id")
            segment_bytes = self.args.int_option("segment-bytes", 8 * 1024 * 1024)
            prefix = segment_prefix(self.pk, self.run_id)
            max_entry_bytes = self.args.int_option("max-entry-bytes", 1024 * 1024)
            written = load(
                self.spark, self.args, plan, self.ledger, prefix, segment_bytes, max_entry_bytes
            )
            self.switch(self.ledger if written[0] else "", horizon)
            return {
                "entries_compacted": written[0],
                "bytes_compacted": written[1],
                "messages_kept": written[2],
                "segments_written": written[3],
                "horizon": horizon,
            }
        finally:
            entries.unpersist()


def main(argv: list[str] | None = None) -> Summary:
    """Run the job; returns its summary (printed too). Raises ValueError for bad
    arguments; partitions that failed are counted in ``details["partitions_failed"]``."""
    args = parse_args(argv, defaults={"JOB_NAME": JOB})
    topic = args.option("topic")
    every = (args.option("all") or "").lower() in ("true", "1", "yes")
    if bool(topic) == every:
        raise ValueError("compact-topic needs exactly one of --topic T and --all")
    run_id = args.option("run-id") or uuid.uuid4().hex[:16]
    spark = spark_session(JOB)
    started = time.monotonic()
    purged, freed = garbage.purge_due(
        s3_client(args), args.bucket, _now_ms(), dynamodb_client(args), args.log_table
    )
    parts = catalog.partitions(args, topic)
    if topic and not parts:
        raise ValueError(f"topic {topic} does not exist (or is not persistent)")
    progress = Progress(JOB, len(parts))
    summary = Summary(JOB)
    summary.add(objects_deleted=purged, bytes_deleted=freed)
    for part in parts:
        try:
            counts = PartitionCompaction(spark, args, part, run_id).run()
        except Exception as exc:  # noqa: BLE001 - recorded as ERROR; the others go on
            counts = {"partitions_failed": 1}
            progress.note(f"{part.topic}: failed: {error_text(exc)}")
        horizon = counts.pop("horizon", None)
        summary.add(partitions=1, **counts)
        progress.advance(part.topic, **counts, **({} if horizon is None else {"horizon": horizon}))
    summary.seconds = time.monotonic() - started
    summary.print()
    return summary


if __name__ == "__main__":
    result = main(sys.argv[1:])
    sys.exit(1 if result.details.get("partitions_failed") else 0)
