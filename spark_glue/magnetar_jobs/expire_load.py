"""Load of the expire job: cursor writes, index deletes, trash manifests, orphan deletes.

Per ledger, in the executors (one client set per Spark partition):
1. live ledger: every planned cursor change (``expire_cursors.apply``: TTL moves, lapsed
   consumers, gone readers); only if all of them held does the ledger lose its planned
   index items — after a dedup snapshot covering them (the dedup state is replayed from the
   log after the snapshot, so it must not need deleted items) and after their messages and
   bytes are folded into the ledger's expired totals (``services.expired_totals``: the
   stats' in-counters stay cumulative) — with BatchWriteItem, 25 keys a request,
   unprocessed keys retried;
2. dead ledger: checked dead again against the topics table, fenced (a producer holding a
   stale head meets the fence, never a free id), its cursor items deleted, then its items.
Then, on the driver, the objects freed by the ledgers that completed go to a trash manifest
(deleted after the grace period), and orphans are deleted. A crash anywhere leaves a state
the next run finishes: items deleted but objects not trashed are orphans by then.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from magnetar_core.adapters.aws.cursors import CursorStore
from magnetar_core.adapters.aws.log import LogStore
from magnetar_core.adapters.aws.producers import ProducerStateStore
from magnetar_core.adapters.aws.topics import TopicStore
from magnetar_core.domain.compaction import compacted_owner
from magnetar_core.domain.errors import ConditionFailed, InvalidTopicName
from magnetar_core.services.expired_totals import fold_expired
from magnetar_core.services.topics.ledgers import fence_ledger
from magnetar_wire.names import TopicName

from . import garbage
from .common import JobArgs, dynamodb_client, s3_client
from .expire_cursors import CursorAction, apply
from .expire_transform import ExpirePlan

if TYPE_CHECKING:
    from pyspark.sql import Row

JOB = "expire"
BATCH_WRITE = 25  # DynamoDB BatchWriteItem limit
DELETE_OBJECTS = 1000  # S3 DeleteObjects limit
MANIFEST_KEYS = 10_000


@dataclass(frozen=True)
class LoadOptions:
    """``now_ms`` of the run, the consumer lease and the trash grace period (ms), and the
    requests each Spark task keeps in flight."""

    now_ms: int
    consumer_lease_ms: int
    grace_ms: int
    io_threads: int = 8


def delete_items(
    ddb, table: str, pk: str, eids: Iterable[int], sleep=time.sleep, threads: int = 1
) -> int:
    """Delete index items of one ledger (BatchWriteItem, 25 keys a request, unprocessed
    keys retried with backoff; ``threads`` requests in flight). Deleting a missing item is
    no error. Returns how many."""
    wanted = sorted(set(eids))

    def write(chunk: list[int]) -> None:
        request: dict[str, object] | None = {
            table: [
                {"DeleteRequest": {"Key": {"pk": {"S": pk}, "eid": {"N": str(e)}}}} for e in chunk
            ]
        }
        attempt = 0
        while request:
            request = ddb.batch_write_item(RequestItems=request).get("UnprocessedItems") or None
            if request:
                sleep(min(1.0, 0.05 * 2**attempt))
                attempt += 1

    chunks = [wanted[i : i + BATCH_WRITE] for i in range(0, len(wanted), BATCH_WRITE)]
    if threads <= 1 or len(chunks) <= 1:
        for chunk in chunks:
            write(chunk)
    else:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            list(pool.map(write, chunks))
    return len(wanted)


def snapshot_dedup(log: LogStore, producers: ProducerStateStore, pk: str, through: int) -> bool:
    """Make the dedup snapshot cover entries up to ``through`` before they are deleted
    (replaying the log after the stored one, as ``Deduplicator.catch_up`` does). True when
    a snapshot was written (a newer one stored meanwhile is fine)."""
    snapshot = producers.snapshot(pk)
    if snapshot.upto >= through:
        return False
    for entry_id, producer, sequence_max, completes in log.producer_tail(pk, snapshot.upto + 1):
        if completes and sequence_max > snapshot.last.get(producer, -1):
            snapshot.last[producer] = sequence_max
        snapshot.upto = max(snapshot.upto, entry_id)
    with contextlib.suppress(ConditionFailed):
        producers.put_snapshot(pk, snapshot)
    return True


def ledger_is_dead(topics: TopicStore, pk: str) -> bool:
    """Whether no topic uses ledger ``pk`` (a compacted ledger: its owner) and a topic item
    shows it superseded or deleted (fresh reads; anything unexpected counts as alive)."""
    owner = compacted_owner(pk) or pk
    topic, _, ledger = owner.rpartition("|")
    try:
        name, ledger_id = TopicName.parse(topic), int(ledger)
    except (InvalidTopicName, ValueError):
        return False
    found = [topics.get(name)]
    if name.partition_index >= 0:
        found.append(topics.get(name.base))
    metas = [m for m in found if m is not None]
    if any(m.active and m.ledger_id == ledger_id for m in metas):
        return False
    return any(m.ledger_id >= ledger_id for m in metas)


class _Ledgers:
    """The stores an executor works with (built inside it from the job's arguments)."""

    def __init__(self, args: JobArgs, options: LoadOptions) -> None:
        self.ddb = dynamodb_client(args)
        self.table = args.log_table
        self.options = options
        self.log = LogStore(self.ddb, args.log_table, args.cursors_table)
        self.cursors = CursorStore(self.ddb, args.cursors_table)
        self.producers = ProducerStateStore(self.ddb, args.cursors_table)
        self.topic_store = TopicStore(self.ddb, args.topics_table)

    def live(self, pk: str, actions: list, deleted: list) -> dict:
        out = _result(pk)

        def hashes_of(entry_ids: list[int]) -> dict[int, tuple[int, ...]]:
            return {e: i.message_hashes() for e, i in self.log.get_many(pk, entry_ids).items()}

        for row in actions:
            action = CursorAction(row.sub, row.ttl_md, row.lapsed, row.drop)
            outcome = apply(
                self.cursors,
                pk,
                action,
                self.options.now_ms,
                self.options.consumer_lease_ms,
                hashes_of,
            )
            out["ok"] &= outcome.ok
            out["cursors_moved"] += outcome.moved
            out["consumers_expired"] += outcome.consumers_expired
            out["readers_deleted"] += outcome.dropped
        if not out["ok"] or not deleted:
            return out
        through = max(r.eid for r in deleted)
        snapshot_dedup(self.log, self.producers, pk, through)
        fold_expired(self.log, self.producers, pk, through)  # stats' counters stay cumulative
        out["entries_deleted"] = self._delete(pk, deleted)
        out["bytes_deleted"] = sum(r.len for r in deleted)
        return out

    def _delete(self, pk: str, rows: list) -> int:
        eids = (r.eid for r in rows)
        return delete_items(self.ddb, self.table, pk, eids, threads=self.options.io_threads)

    def dead(self, pk: str, deleted: list) -> dict:
        out = _result(pk)
        if not ledger_is_dead(self.topic_store, pk):
            out["ok"] = False
            return out
        if compacted_owner(pk) is None:
            fence_ledger(self.log, pk)
            self.cursors.delete_all(pk)
        out["entries_deleted"] = self._delete(pk, deleted)
        out["bytes_deleted"] = sum(r.len for r in deleted)
        out["dead_ledgers"] = 1
        return out


def _result(pk: str) -> dict:
    return {
        "pk": pk,
        "ok": True,
        "cursors_moved": 0,
        "consumers_expired": 0,
        "readers_deleted": 0,
        "entries_deleted": 0,
        "bytes_deleted": 0,
        "dead_ledgers": 0,
    }


def load_ledgers(spark, args: JobArgs, plan: ExpirePlan, options: LoadOptions) -> list[dict]:
    """Cursor writes and index deletes, per ledger in the executors; one result per ledger
    touched (``ok`` False: left for a later run)."""
    actions = plan.cursors.rdd.map(lambda r: (r.pk, r))
    deleted = plan.deleted.rdd.map(lambda r: (r.pk, r))
    dead = plan.dead.rdd.map(lambda r: (r.pk, r))
    grouped = actions.groupWith(deleted, dead)

    def run(
        groups: Iterable[tuple[str, tuple[Iterable[Row], Iterable[Row], Iterable[Row]]]],
    ) -> Iterator[dict]:
        ledgers = _Ledgers(args, options)
        for pk, (acts, dels, deads) in groups:
            deads = list(deads)
            if deads:
                yield ledgers.dead(pk, deads)
            else:
                yield ledgers.live(pk, list(acts), list(dels))

    return grouped.mapPartitions(run).collect()


def trash_objects(s3, args: JobArgs, rows: list, done: set[str], due_ms: int) -> tuple[int, int]:
    """Write trash manifests for the freed objects of ledgers whose deletes completed
    (``done``); returns ``(objects, bytes)`` scheduled."""
    freed = {r.obj: int(r.bytes) for r in rows if set(r.pks) <= done}
    keys = sorted(freed)
    for i in range(0, len(keys), MANIFEST_KEYS):
        chunk = keys[i : i + MANIFEST_KEYS]
        garbage.schedule_deletes(s3, args.bucket, chunk, due_ms, JOB, {k: freed[k] for k in chunk})
    return len(keys), sum(freed.values())


def delete_orphans(s3, bucket: str, rows: list) -> tuple[int, int]:
    """Delete orphan objects (DeleteObjects, 1000 a request); returns ``(objects, bytes)``.
    Raises RuntimeError naming the first object S3 refused to delete."""
    sizes = {r.key: int(r.size) for r in rows}
    keys = sorted(sizes)
    for i in range(0, len(keys), DELETE_OBJECTS):
        chunk = keys[i : i + DELETE_OBJECTS]
        result = s3.delete_objects(
            Bucket=bucket, Delete={"Objects": [{"Key": k} for k in chunk], "Quiet": True}
        )
        errors = result.get("Errors", [])
        if errors:
            raise RuntimeError(f"deleting orphan {errors[0].get('Key')}: {errors[0].get('Code')}")
    return len(keys), sum(sizes.values())


def load(spark, args: JobArgs, plan: ExpirePlan, options: LoadOptions, progress) -> dict:
    """Everything the plan says, in a safe order; returns counters for the summary.

    The deletions are computed once: persisted, the trash step's plan reuses them (Spark
    matches the cached subplan) instead of planning them again.
    """
    cached = [plan.deleted.persist(), plan.dead.persist()]
    try:
        return _load(spark, args, plan, options, progress)
    finally:
        for frame in cached:
            frame.unpersist()


def _load(spark, args: JobArgs, plan: ExpirePlan, options: LoadOptions, progress) -> dict:
    results = load_ledgers(spark, args, plan, options)
    counts: dict[str, int] = {"ledgers_skipped": 0}
    for r in results:
        for name, value in r.items():
            if name not in ("pk", "ok"):
                counts[name] = counts.get(name, 0) + value
        counts["ledgers_skipped"] += not r["ok"]
        if not r["ok"]:
            progress.note(f"{r['pk']}: left for a later run (cursors kept changing)")
    progress.note(
        f"ledgers done: {len(results)}, entries deleted: {counts.get('entries_deleted', 0)}"
    )
    done = {r["pk"] for r in results if r["ok"]}
    s3 = s3_client(args)
    due = options.now_ms + options.grace_ms
    counts["objects_trashed"], counts["bytes_trashed"] = trash_objects(
        s3, args, plan.trash.collect(), done, due
    )
    if plan.orphans is not None:
        counts["orphans_deleted"], counts["orphan_bytes"] = delete_orphans(
            s3, args.bucket, plan.orphans.collect()
        )
    progress.note(
        f"objects to trash: {counts['objects_trashed']}, "
        f"orphans deleted: {counts.get('orphans_deleted', 0)}"
    )
    return counts
