"""expire: retention, message TTL and garbage collection on Spark (Glue / EMR / spark-submit).

    expire.py --bucket B --table-prefix P [--endpoint-url U] [--topic T | --namespace TN/NS]
        [--consumer-lease-ms 60000] [--orphan-age-ms 3600000] [--grace-ms 900000]
        [--orphan-prefixes entries/,segments/,compacted/] [--orphans false] [--now-ms N]
        [--io-threads 8] [--shuffle-partitions N]

1. purge: objects of trash manifests now due are deleted (``garbage.purge_due``);
2. extract (``magnetar_jobs.expire_extract``): live partitions with their effective TTL and
   retention, dead ledgers, the bucket listing, the log index, cursors, trash manifests;
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
from magnetar_jobs.expire_extract import extract
from magnetar_jobs.expire_load import JOB, LoadOptions, load
from magnetar_jobs.expire_transform import ExpireParams, transform
from magnetar_jobs.reporting import Progress, Summary

DEFAULT_GRACE_MS = 900_000
DEFAULT_ORPHAN_AGE_MS = 3_600_000


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
    spark = spark_session(JOB)
    if args.option("shuffle-partitions"):
        spark.conf.set("spark.sql.shuffle.partitions", args.int_option("shuffle-partitions", 200))
    progress = Progress(JOB)
    summary = Summary(JOB)

    purged, purged_bytes = garbage.purge_due(
        s3_client(args), args.bucket, now_ms, dynamodb_client(args), args.log_table
    )
    progress.note(f"purged {purged} objects of due trash manifests")
    data = extract(spark, args, topic, namespace, orphans)
    progress.note(
        f"extracted {len(data.ledgers.live)} partitions, {len(data.ledgers.dead)} dead ledgers"
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

    summary.add(
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
