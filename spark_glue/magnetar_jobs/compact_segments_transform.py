"""compact-segments, the pure part: which entries go into which segment object.

Input: index rows (``catalog.index_schema``). Output: one row per segment to write
(``PLAN_COLUMNS``), its members in entry-id order with their offsets inside the segment.

Rules, per ledger in entry-id order:
- *eligible*: an entry (``n > 0``) in its own object or inline in its index item (``d``; not
  already in a segment), of at most ``max_entry_bytes``, not among the ledger's last
  ``head_entries`` items, and not in the ledger's *young tail*: from the first inline entry
  published (``pt1``) at or after ``inline_before_ms`` on, every item stays where it is
  (a young inline entry is likely still being read, with no S3 GET; moving one costs an
  UpdateItem priced by its size: docs/architecture/producing.md, "Inline entries");
- markers (``n = 0``: fences, epoch markers) are skipped and never touched;
- any other item (already in a segment, too big) *breaks* the run of eligible entries;
- inside a run, an entry goes to bucket ``floor(start / target)`` where ``start`` is the
  run's byte count before it: segments are about ``target_segment_bytes`` (at most one entry
  more), and a bucket's members depend only on immutable facts, so a segment key always names
  the same bytes (a re-run writes the same object again);
- a bucket is written when it holds at least ``min_entries`` entries and is *closed* (a later
  bucket of its run exists, or the run was broken), or, when it is the open end of the log,
  when it holds at least ``min_tail_bytes``.
Segment key: ``segments/<domain>/<tenant>/<namespace>/<topic>/<ledger>/<first eid>-<last eid>``.
"""

from __future__ import annotations

from dataclasses import dataclass

SEGMENT_PREFIX = "segments/"
MEMBER_DDL = "struct<eid:bigint,obj:string,off:bigint,len:bigint,seg_off:bigint,d:binary>"
"""A member: where its bytes are now (``obj``/``off``/``len``, or ``d`` for an inline
entry, ``obj`` then empty) and where they go in the segment (``seg_off``)."""
PLAN_COLUMNS = (
    ("pk", "string"),
    ("seg_key", "string"),
    ("first_eid", "bigint"),
    ("last_eid", "bigint"),
    ("entries", "bigint"),
    ("bytes", "bigint"),
    ("members", f"array<{MEMBER_DDL}>"),
)


@dataclass(frozen=True)
class SegmentParams:
    """Sizes in bytes. ``min_tail_bytes`` None: half the target. ``inline_before_ms``
    (epoch ms): inline entries published from then on start the young tail (None: none
    is young)."""

    target_segment_bytes: int = 8 * 1024 * 1024
    max_entry_bytes: int = 1024 * 1024
    min_entries: int = 2
    min_tail_bytes: int | None = None
    head_entries: int = 0
    inline_before_ms: int | None = None

    def __post_init__(self) -> None:
        if self.target_segment_bytes < 1 or self.max_entry_bytes < 1:
            raise ValueError("target_segment_bytes and max_entry_bytes must be at least 1")
        if self.min_entries < 2:
            raise ValueError("min_entries must be at least 2 (one entry gains nothing)")
        if self.head_entries < 0:
            raise ValueError("head_entries must be at least 0")

    @property
    def tail_bytes(self) -> int:
        return (
            self.target_segment_bytes // 2 if self.min_tail_bytes is None else self.min_tail_bytes
        )


def segment_key(pk: str, first_eid: int, last_eid: int) -> str:
    """The segment object key for a ledger's ``pk`` (``<topic>|<ledger>``) and eid range."""
    topic, _, ledger = pk.rpartition("|")
    return f"{SEGMENT_PREFIX}{topic.replace('://', '/', 1)}/{ledger}/{first_eid}-{last_eid}"


def transform(index_df, params: SegmentParams):
    """Plan the segments of the index rows in ``index_df`` (see the module docstring)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    by_eid = Window.partitionBy("pk").orderBy("eid")
    from_end = Window.partitionBy("pk").orderBy(F.col("eid").desc())
    whole = Window.partitionBy("pk")
    marker = F.col("n") <= 0
    in_segment = F.col("obj").startswith(SEGMENT_PREFIX)
    rows = index_df.withColumn("_from_end", F.row_number().over(from_end))
    in_head = F.col("_from_end") <= F.lit(params.head_entries)
    if params.inline_before_ms is not None:
        young = F.col("d").isNotNull() & (F.col("pt1") >= F.lit(params.inline_before_ms))
        rows = rows.withColumn("_young_from", F.min(F.when(young, F.col("eid"))).over(whole))
        in_head = in_head | (
            F.col("_young_from").isNotNull() & (F.col("eid") >= F.col("_young_from"))
        )
    breaker = ~marker & (in_segment | (F.col("len") > params.max_entry_bytes) | (F.col("len") <= 0))
    rows = (
        rows.withColumn("_breaker", breaker)
        .withColumn("_eligible", ~marker & ~breaker & ~in_head)
        .withColumn("_run", F.sum(F.col("_breaker").cast("long")).over(by_eid))
        .withColumn("_last_run", F.max("_run").over(whole))
        .where("_eligible")
    )
    by_run = Window.partitionBy("pk", "_run").orderBy("eid")
    rows = rows.withColumn("_start", F.sum("len").over(by_run) - F.col("len")).withColumn(
        "_bucket", F.floor(F.col("_start") / F.lit(params.target_segment_bytes))
    )
    rows = rows.withColumn("_last_bucket", F.max("_bucket").over(Window.partitionBy("pk", "_run")))
    bucket = Window.partitionBy("pk", "_run", "_bucket")
    rows = rows.withColumn("seg_off", F.col("_start") - F.min("_start").over(bucket))
    closed = (F.col("_run") < F.col("_last_run")) | (F.col("_bucket") < F.col("_last_bucket"))
    segments = (
        rows.groupBy("pk", "_run", "_bucket")
        .agg(
            F.min("eid").alias("first_eid"),
            F.max("eid").alias("last_eid"),
            F.count("*").alias("entries"),
            F.sum("len").alias("bytes"),
            F.sort_array(
                F.collect_list(F.struct("eid", "obj", "off", "len", "seg_off", "d"))
            ).alias("members"),
            F.first(closed).alias("_closed"),
        )
        .where(
            (F.col("entries") >= params.min_entries)
            & (F.col("_closed") | (F.col("bytes") >= params.tail_bytes))
        )
    )
    topic = F.regexp_replace(F.substring_index("pk", "|", 1), "://", "/")
    key = F.concat(
        F.lit(SEGMENT_PREFIX),
        topic,
        F.lit("/"),
        F.substring_index("pk", "|", -1),
        F.lit("/"),
        F.col("first_eid").cast("string"),
        F.lit("-"),
        F.col("last_eid").cast("string"),
    )
    return segments.select(
        "pk",
        key.alias("seg_key"),
        "first_eid",
        "last_eid",
        "entries",
        F.col("bytes").cast("bigint").alias("bytes"),
        "members",
    )


def plan_ledger(rows: list[tuple], params: SegmentParams) -> list[dict]:
    """The same plan as ``transform`` for one ledger's index rows (``catalog.INDEX_COLUMNS``
    tuples), in plain Python: the single-process baseline of the benchmark, and an oracle
    for the Spark transform in tests. Returns plan rows as dicts (``PLAN_COLUMNS``; members
    as ``(eid, obj, off, len, seg_off, d)`` tuples), by first entry id."""
    rows = sorted(rows, key=lambda r: r[1])
    head_from = len(rows) - params.head_entries
    cutoff = params.inline_before_ms
    young = [r[1] for r in rows if cutoff is not None and r[11] is not None and r[7] >= cutoff]
    young_from = min(young, default=None)
    buckets: dict[tuple[int, int], list[tuple]] = {}
    run = start = 0
    for i, (pk, eid, obj, off, size, n, *_rest, data) in enumerate(rows):
        if n <= 0:
            continue
        if obj.startswith(SEGMENT_PREFIX) or size > params.max_entry_bytes or size <= 0:
            run, start = run + 1, 0
            continue
        if i >= head_from or (young_from is not None and eid >= young_from):
            continue
        buckets.setdefault((run, start // params.target_segment_bytes), []).append(
            (pk, eid, obj, off, size, start, data)
        )
        start += size
    out = []
    for (run_id, bucket), members in buckets.items():
        last_bucket = max(b for r, b in buckets if r == run_id)
        closed = run_id < run or bucket < last_bucket
        total = sum(m[4] for m in members)
        if len(members) < params.min_entries or not (closed or total >= params.tail_bytes):
            continue
        base = members[0][5]
        pk = members[0][0]
        out.append(
            {
                "pk": pk,
                "seg_key": segment_key(pk, members[0][1], members[-1][1]),
                "first_eid": members[0][1],
                "last_eid": members[-1][1],
                "entries": len(members),
                "bytes": total,
                "members": [(m[1], m[2], m[3], m[4], m[5] - base, m[6]) for m in members],
            }
        )
    return sorted(out, key=lambda p: p["first_eid"])
