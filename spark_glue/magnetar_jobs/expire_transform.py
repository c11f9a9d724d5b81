"""Expiry as pure DataFrame transforms (Pulsar's retention and message TTL).

Inputs are plain rows: the log index (``catalog.index_schema``: one row per index item),
the cursors (``CURSOR_SCHEMA``), each partition's policies (``POLICY_SCHEMA``) and, for
orphans, the bucket listing (``OBJECT_SCHEMA``). Times are epoch milliseconds.

- **TTL** (``ttl_marks``): a durable cursor's mark-delete moves to the newest entry whose
  publish time (``pt1``, the newest message of the entry) is older than ``now - ttl`` —
  Pulsar acknowledges expired messages, delayed ones too; never backwards; markers (fences,
  epoch markers: ``n`` = 0) never count as expired.
- **Holders** (``plan_cursors``): entries above a durable cursor's mark-delete (after its TTL
  move) or above a *live* non-durable reader's (a consumer seen within the lease) are kept,
  and so is every entry a cursor still holds in its delayed set.
- **Retention** (``delete_bounds``): an entry every holder is done with is kept while it is
  within the retention limits and deleted once *either* is exceeded, as Pulsar does: time —
  published more than ``retention_minutes`` ago; size — the entry and everything after it
  in the log weigh more than ``retention_mb``. ``-1`` is infinite, ``0`` (the default) keeps
  nothing, so acknowledged entries go.
- **Prefix**: deletion is always a prefix of the ledger (everything below the first entry
  that must be kept), as Pulsar trims front ledgers only; the last index item (the head the
  dense commit protocol appends after) is always kept.
- **Objects** (``objects_to_trash``): an object goes to trash once no remaining index item
  references it (a segment holds many entries). **Orphans**: objects no index item
  references and no trash manifest lists, older than the orphan age. **Dead ledgers**: every
  item but the fence.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

MB = 1024 * 1024

CURSOR_SCHEMA = StructType(
    [
        StructField("pk", StringType(), False),
        StructField("sub", StringType(), False),
        StructField("durable", BooleanType(), False),
        StructField("md", LongType(), False),
        StructField("rp", LongType(), False),
        StructField("ver", LongType(), False),
        StructField("seen", ArrayType(LongType(), False), False),
        StructField(
            "delayed",
            ArrayType(
                StructType(
                    [StructField("lo", LongType(), False), StructField("hi", LongType(), False)]
                ),
                False,
            ),
            False,
        ),
    ]
)
"""One cursor: mark-delete ``md``, read position ``rp``, version ``ver``, ``seen`` the last
time each consumer was seen (epoch ms), ``delayed`` its delayed set as closed ranges."""

POLICY_SCHEMA = StructType(
    [
        StructField("pk", StringType(), False),
        StructField("ttl_seconds", IntegerType(), False),
        StructField("retention_minutes", IntegerType(), False),
        StructField("retention_mb", IntegerType(), False),
    ]
)
"""One live partition's effective policies; ``transform`` treats the ledgers listed here as
the live ones (every live partition needs its row)."""

OBJECT_SCHEMA = StructType(
    [
        StructField("key", StringType(), False),
        StructField("size", LongType(), False),
        StructField("modified_ms", LongType(), False),
    ]
)
"""One object of the bucket listing."""


@dataclass(frozen=True)
class ExpireParams:
    """``now_ms``: the time of the run; ``consumer_lease_ms``: a consumer not seen for longer
    is gone (CONSUMER_LEASE_MS); ``orphan_age_ms``: unreferenced objects younger are left."""

    now_ms: int
    consumer_lease_ms: int = 60_000
    orphan_age_ms: int = 3_600_000


def ttl_marks(index: DataFrame, cursors: DataFrame, policies: DataFrame, now_ms: int) -> DataFrame:
    """``(pk, sub, ttl_md)`` of every durable cursor the TTL moves forward.

    ``ttl_md`` is the newest entry (markers aside) published more than ``ttl_seconds`` before
    ``now_ms``, kept only where it is above the cursor's mark-delete.
    """
    cutoff = F.lit(now_ms) - F.col("ttl_seconds").cast("long") * 1000
    expired = (
        index.join(policies.where(F.col("ttl_seconds") > 0), "pk")
        .where((F.col("n") > 0) & (F.col("pt1") < cutoff))
        .groupBy("pk")
        .agg(F.max("eid").alias("ttl_md"))
    )
    return (
        cursors.where(F.col("durable"))
        .join(expired, "pk")
        .where(F.col("ttl_md") > F.col("md"))
        .select("pk", "sub", "ttl_md")
    )


def plan_cursors(cursors: DataFrame, marks: DataFrame, params: ExpireParams) -> DataFrame:
    """Every cursor with what the run does to it and what it holds back.

    Adds ``ttl_md`` (None: no TTL move), ``planned_md`` (mark-delete after the move),
    ``lapsed`` (some consumer's lease lapsed: expire it), ``live`` (consumers left),
    ``drop`` (a non-durable cursor left without consumers: delete it), ``holds`` (its
    mark-delete bounds deletion: durable, or non-durable and live) and ``first_delayed``
    (its smallest delayed entry above ``planned_md``, or None).
    """
    now, lease = F.lit(params.now_ms), F.lit(params.consumer_lease_ms)
    live = F.size(F.filter("seen", lambda s: now - s <= lease))
    planned = F.greatest("md", F.coalesce("ttl_md", "md"))
    above = F.filter("delayed", lambda r: r["hi"] > F.col("planned_md"))
    first_delayed = F.array_min(
        F.transform(above, lambda r: F.greatest(r["lo"], F.col("planned_md") + 1))
    )
    return (
        cursors.join(marks, ["pk", "sub"], "left")
        .withColumn("planned_md", planned)
        .withColumn("live", live)
        .withColumn("lapsed", F.size("seen") > F.col("live"))
        .withColumn("drop", ~F.col("durable") & (F.col("live") == 0))
        .withColumn("holds", F.col("durable") | (F.col("live") > 0))
        .withColumn("first_delayed", first_delayed)
    )


def cursor_actions(plan: DataFrame) -> DataFrame:
    """The cursors the load must write: ``(pk, sub, ver, ttl_md, lapsed, drop)``."""
    return plan.where(F.col("ttl_md").isNotNull() | F.col("lapsed") | F.col("drop")).select(
        "pk", "sub", "ver", "ttl_md", "lapsed", "drop"
    )


def _policy_column(name: str) -> Column:
    return F.coalesce(F.col(name), F.lit(0))


def delete_bounds(index: DataFrame, plan: DataFrame, policies: DataFrame, now_ms: int) -> DataFrame:
    """``(pk, first_kept, last_eid)`` per live ledger: entries below ``first_kept`` go.

    An entry is kept when it is the ledger's last item, above a holder's planned mark-delete,
    at or above a still-delayed entry, or within retention (both limits not exceeded).
    """
    holders = plan.groupBy("pk").agg(
        F.min(F.when(F.col("holds"), F.col("planned_md"))).alias("hold_md"),
        F.min(F.when(~F.col("drop"), F.col("first_delayed"))).alias("delayed_from"),
    )
    minutes, mb = _policy_column("retention_minutes"), _policy_column("retention_mb")
    newest_first = Window.partitionBy("pk").orderBy(F.col("eid").desc())
    newer_bytes = F.sum("len").over(newest_first.rowsBetween(Window.unboundedPreceding, 0))
    rows = (
        index.join(policies, "pk", "left")
        .join(holders, "pk", "left")
        .withColumn("last_eid", F.max("eid").over(Window.partitionBy("pk")))
        .withColumn("newer_bytes", newer_bytes)
    )
    time_out = (minutes >= 0) & (F.lit(now_ms) - F.col("pt1") > minutes.cast("long") * 60_000)
    size_out = (mb >= 0) & (F.col("newer_bytes") > mb.cast("long") * MB)
    keep = (
        (F.col("eid") == F.col("last_eid"))
        | (F.col("hold_md").isNotNull() & (F.col("eid") > F.col("hold_md")))
        | (F.col("delayed_from").isNotNull() & (F.col("eid") >= F.col("delayed_from")))
        | ~(time_out | size_out)
    )
    return (
        rows.where(keep)
        .groupBy("pk")
        .agg(F.min("eid").alias("first_kept"), F.max("last_eid").alias("last_eid"))
    )


DELETED_COLUMNS = ("pk", "eid", "obj", "off", "len")


def deletable_entries(index: DataFrame, bounds: DataFrame) -> DataFrame:
    """Index items of live ledgers below their ``first_kept``: ``DELETED_COLUMNS``."""
    return (
        index.join(bounds, "pk").where(F.col("eid") < F.col("first_kept")).select(*DELETED_COLUMNS)
    )


def dead_ledger_entries(index: DataFrame, dead_keys: DataFrame) -> DataFrame:
    """Every item of a dead ledger but its fence (kept: it stops a producer holding a stale
    head from committing into the dead ledger): ``DELETED_COLUMNS``."""
    return (
        index.join(dead_keys, "pk", "left_semi")
        .where(~F.coalesce(F.col("fence"), F.lit(False)))
        .select(*DELETED_COLUMNS)
    )


def objects_to_trash(index: DataFrame, deleted: DataFrame) -> DataFrame:
    """``(obj, bytes, pks)``: objects of deleted items that no remaining item references.

    ``bytes`` is the object's extent as the index knows it (the end of its last byte range);
    ``pks`` the ledgers whose deletions free it (the load trashes an object only when every
    one of them was deleted).
    """
    refs = index.where(F.col("obj") != "").select("pk", "eid", "obj")
    remaining = refs.join(deleted.select("pk", "eid"), ["pk", "eid"], "left_anti")
    freed = (
        deleted.where(F.col("obj") != "")
        .groupBy("obj")
        .agg(
            F.max(F.col("off") + F.col("len")).alias("bytes"),
            F.sort_array(F.collect_set("pk")).alias("pks"),
        )
    )
    return freed.join(remaining.select("obj").distinct(), "obj", "left_anti")


def orphans(
    objects: DataFrame, index: DataFrame, trashed: DataFrame, params: ExpireParams
) -> DataFrame:
    """``(key, size)`` of listed objects older than the orphan age that no index item
    references and no trash manifest lists (``trashed``: one ``key`` column)."""
    referenced = index.where(F.col("obj") != "").select(F.col("obj").alias("key")).distinct()
    old = F.lit(params.now_ms) - F.col("modified_ms") > F.lit(params.orphan_age_ms)
    return (
        objects.where(old)
        .join(referenced, "key", "left_anti")
        .join(trashed.select("key"), "key", "left_anti")
        .select("key", "size")
    )


@dataclass(frozen=True)
class ExpirePlan:
    """What one run does: cursor writes, index items to delete (live and dead ledgers),
    objects to trash once their items are gone, and orphans to delete."""

    cursors: DataFrame
    deleted: DataFrame
    dead: DataFrame
    trash: DataFrame
    orphans: DataFrame | None


def transform(
    index: DataFrame,
    cursors: DataFrame,
    policies: DataFrame,
    params: ExpireParams,
    dead_keys: DataFrame | None = None,
    objects: DataFrame | None = None,
    trashed: DataFrame | None = None,
) -> ExpirePlan:
    """The whole plan of a run from the extracted rows (nothing is read or written here).

    ``index`` holds the items of the live ledgers (those in ``policies``) and of the dead
    ones (``dead_keys``, one ``pk`` column); ``objects``/``trashed`` (optional) drive
    orphan collection.
    """
    live_index = index.join(policies.select("pk"), "pk", "left_semi")
    marks = ttl_marks(live_index, cursors, policies, params.now_ms)
    plan = plan_cursors(cursors, marks, params)
    bounds = delete_bounds(live_index, plan, policies, params.now_ms)
    deleted = deletable_entries(live_index, bounds)
    dead = dead_ledger_entries(index, dead_keys) if dead_keys is not None else deleted.limit(0)
    trash = objects_to_trash(index, deleted.unionByName(dead))
    found = None
    if objects is not None:
        found = orphans(
            objects, index, trashed if trashed is not None else objects.limit(0), params
        )
    return ExpirePlan(cursor_actions(plan), deleted, dead, trash, found)
