"""expire: retention, message TTL and garbage collection on Spark (Glue / EMR / spark-submit).

    expire.py --bucket B --table-prefix P [--endpoint-url U] [--topic T | --namespace TN/NS]
        [--consumer-lease-ms 60000] [--orphan-age-ms 3600000] [--grace-ms 900000]
        [--orphan-prefixes entries/,segments/,compacted/] [--orphans false] [--now-ms N]
        [--io-threads 8] [--shuffle-partitions N]
        [--full-pass auto|true|false] [--full-pass-every-ms 86400000]

Incremental runs read, per live ledger, only the index window that can have become
expirable (``magnetar_jobs.expire_window``: from its first remaining item to the first one
that must stay, and the entries whose TTL ran out); a *full pass* reads every ledger whole,
scans the log for dead ledgers and lists the bucket for orphans. ``--full-pass auto`` (the
default) makes a run full when the last recorded full pass of the whole stack is
``--full-pass-every-ms`` old or more (runs narrowed by ``--topic``/``--namespace`` only when
``--full-pass true``); ``true``/``false`` force it.

1. purge: objects of trash manifests now due are deleted (``garbage.purge_due``);
2. extract (``magnetar_jobs.expire_extract``): live partitions with their effective TTL and
   retention, their cursors and index windows; in a full pass the whole index, dead
   ledgers, the bucket listing and the trash manifests;
3. transform (``magnetar_jobs.expire_transform``): TTL cursor moves, the entries every
   holder is done with and retention does not keep (a prefix, never the head), the objects
   they free, orphans older than ``--orphan-age-ms``, dead ledgers' items;
4. load (``magnetar_jobs.expire_load``): conditional cursor writes (lapsed consumers
   removed, gone readers deleted), index deletes, freed objects to trash (deleted after
   ``--grace-ms``: presigned download URLs live 15 minutes), orphans deleted.
With ``--topic`` only that topic's partitions are expired (no dead ledgers, no orphans);
with ``--namespace tenant/ns`` only that namespace's partitions, dead ledgers and objects.
Idempotent: a re-run, or a run after a crash half-way, ends consistent.
"""

from __future__ import annotations

import os
import sys
import time

from magnetar_jobs import garbage
from magnetar_jobs.common import (
    dynamodb_client,
    parse_args,
    s3_client,
    spark_session,
)
from magnetar_jobs.expire_extract import extract, extract_incremental
from magnetar_jobs.expire_incremental import (
    WindowArgs,
    full_pass_due,
    last_full_pass,
    record_full_pass,
)
from magnetar_jobs.expire_load import JOB, LoadOptions, load
from magnetar_jobs.expire_transform import ExpireParams, transform
from magnetar_jobs.reporting import Progress, Summary

DEFAULT_GRACE_MS = 900_000
DEFAULT_ORPHAN_AGE_MS = 3_600_000
DEFAULT_FULL_PASS_EVERY_MS = 86_400_000


def is_full_pass(args, now_ms: int, narrowed: bool) -> bool:
    """Whether this run is a full pass (``--full-pass``); raises ValueError for a bad value."""
    mode = (args.option("full-pass", "auto") or "auto").lower()
    if mode in ("true", "1", "yes"):
        return True
    if mode in ("false", "0", "no"):
        return False
    if mode != "auto":
        raise ValueError(f"--full-pass takes auto, true or false, not {mode!r}")
    every_ms = args.int_option("full-pass-every-ms", DEFAULT_FULL_PASS_EVERY_MS)
    return not narrowed and full_pass_due(last_full_pass(args), now_ms, every_ms)


def main(argv: list[str] | None = None) -> Summary:
    """Run one expiry pass; returns its summary (printed too). Raises ValueError for bad
    arguments."""
    args = parse_args(argv, defaults={"JOB_NAME": JOB})
    started = time.monotonic()
    now_ms = args.int_option("now-ms", int(time.time() * 1000))
    params = ExpireParams(
        now_ms=now_ms,
        consumer_lease_ms=args.int_option(
            "consumer-lease-ms", int(os.environ.get("CONSUMER_LEASE_MS", "60000"))
        ),
        orphan_age_ms=args.int_option("orphan-age-ms", DEFAULT_ORPHAN_AGE_MS),
    )
    grace_ms = args.int_option("grace-ms", DEFAULT_GRACE_MS)
    topic = args.option("topic") or None
    namespace = args.option("namespace") or None
    if topic and namespace:
        raise ValueError("expire takes at most one of --topic and --namespace")
    orphans = (args.option("orphans", "true") or "true").lower() not in ("false", "0", "no")
    narrowed = bool(topic or namespace)
    full = is_full_pass(args, now_ms, narrowed)
    spark = spark_session(JOB)
    if args.option("shuffle-partitions"):
        spark.conf.set("spark.sql.shuffle.partitions", args.int_option("shuffle-partitions", 200))
    progress = Progress(JOB)
    summary = Summary(JOB)

    purged, purged_bytes = garbage.purge_due(
        s3_client(args), args.bucket, now_ms, dynamodb_client(args), args.log_table
    )
    progress.note(f"purged {purged} objects of due trash manifests")
    if full:
        data = extract(spark, args, topic, namespace, orphans)
    else:
        window = WindowArgs(now_ms, params.consumer_lease_ms)
        data = extract_incremental(spark, args, topic, namespace, window)
    items_read = data.index.count()  # materialised by the extract: no second read
    progress.note(
        f"{'full pass' if full else 'incremental'}: extracted {len(data.ledgers.live)} "
        f"partitions, {len(data.ledgers.dead)} dead ledgers, {items_read} index items"
    )
    plan = transform(
        data.index,
        data.cursors,
        data.policies,
        params,
        dead_keys=data.dead_keys,
        objects=data.objects,
        trashed=data.trashed,
    )
    counts = load(
        spark,
        args,
        plan,
        LoadOptions(now_ms, params.consumer_lease_ms, grace_ms, args.int_option("io-threads", 8)),
        progress,
    )

    if full and not narrowed and orphans:
        record_full_pass(args, now_ms)
    summary.add(
        full_pass=int(full),
        index_items_read=items_read,
        partitions=len(data.ledgers.live),
        entries_deleted=counts.pop("entries_deleted", 0),
        bytes_deleted=counts.pop("bytes_deleted", 0),
        objects_deleted=purged + counts.get("orphans_deleted", 0),
        bytes_saved=purged_bytes + counts.get("orphan_bytes", 0),
        objects_purged=purged,
        **counts,
    )
    summary.seconds = time.monotonic() - started
    summary.print()
    return summary


if __name__ == "__main__":
    main(sys.argv[1:])
