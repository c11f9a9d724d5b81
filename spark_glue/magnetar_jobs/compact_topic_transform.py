"""Topic compaction as a pure DataFrame transform (Pulsar's semantics).

Input: one row per message of one partition's log (``MESSAGE_COLUMNS``): its position
(``entry_id``, ``batch_index`` — the message's place in its entry, 0 for a non-batched one),
its key (None: keyless), whether it is a null value (a tombstone), its chunk info (a chunked
message spans entries: every chunk carries the same ``chunk_uuid``) and publish time.

Output: the positions the compacted view keeps, up to the horizon:
- for every key, only its latest message (the highest position);
- a key whose latest message is a null value is removed;
- keyless messages are left out (as Pulsar's compactor does);
- a chunked message counts as one message at its last chunk's position and, if kept, keeps
  every chunk's position; one whose last chunk is above the horizon is left out.

The transform is incremental by construction: applied to the previous compacted view plus
the log after the previous horizon, it gives the same result as applied to the whole log
(``tests/spark/test_compact_topic_transform.py`` checks both as properties).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BooleanType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

MESSAGE_SCHEMA = StructType(
    [
        StructField("entry_id", LongType(), False),
        StructField("batch_index", IntegerType(), False),
        StructField("key", StringType(), True),
        StructField("is_null", BooleanType(), False),
        StructField("chunk_uuid", StringType(), True),
        StructField("chunk_id", IntegerType(), True),
        StructField("chunk_total", IntegerType(), True),
        StructField("publish_time_ms", LongType(), False),
    ]
)
MESSAGE_COLUMNS = tuple(f.name for f in MESSAGE_SCHEMA.fields)


@dataclass(frozen=True)
class CompactParams:
    """``horizon``: the highest entry id compaction covers (inclusive)."""

    horizon: int


def transform(messages: DataFrame, params: CompactParams) -> DataFrame:
    """The kept positions ``(entry_id, batch_index)`` of the compacted view (unordered)."""
    rows = messages.filter(F.col("entry_id") <= F.lit(params.horizon))
    chunked = F.col("chunk_uuid").isNotNull()
    singles = rows.filter(~chunked).select(
        "entry_id",
        "batch_index",
        "key",
        "is_null",
        F.lit(None).cast(StringType()).alias("chunk_uuid"),
    )
    complete = (
        rows.filter(chunked)
        .groupBy("chunk_uuid")
        .agg(
            F.max(F.struct("entry_id", "batch_index")).alias("last"),
            F.min_by("key", F.col("chunk_id")).alias("key"),
            F.max("chunk_total").alias("total"),
            F.countDistinct("chunk_id").alias("have"),
        )
        .filter(F.col("have") == F.col("total"))
        .select(
            F.col("last.entry_id").alias("entry_id"),
            F.col("last.batch_index").alias("batch_index"),
            "key",
            F.lit(False).alias("is_null"),
            "chunk_uuid",
        )
    )
    latest = (
        singles.unionByName(complete)
        .filter(F.col("key").isNotNull())
        .groupBy("key")
        .agg(F.max(F.struct("entry_id", "batch_index", "is_null", "chunk_uuid")).alias("m"))
        .filter(~F.col("m.is_null"))
        .select(
            F.col("m.entry_id").alias("entry_id"),
            F.col("m.batch_index").alias("batch_index"),
            F.col("m.chunk_uuid").alias("chunk_uuid"),
        )
    )
    plain = latest.filter(F.col("chunk_uuid").isNull()).select("entry_id", "batch_index")
    kept_chunks = latest.filter(F.col("chunk_uuid").isNotNull()).select("chunk_uuid")
    chunk_rows = rows.filter(chunked).join(kept_chunks, "chunk_uuid", "left_semi")
    return plain.unionByName(chunk_rows.select("entry_id", "batch_index"))


def kept_batches(kept: DataFrame) -> DataFrame:
    """Kept positions grouped per entry: ``(entry_id, batch_indexes: sorted array)``."""
    return kept.groupBy("entry_id").agg(F.sort_array(F.collect_set("batch_index")).alias("kept"))


def safe_horizon(messages: DataFrame, head: int, now_ms: int, chunk_wait_ms: int) -> int:
    """The horizon for a run starting at ``head`` (the last committed entry id): ``head``,
    or just below the first chunk of a chunked message still arriving — incomplete at the
    head and started less than ``chunk_wait_ms`` before ``now_ms`` — so that the next run
    sees it whole. Older incomplete messages are abandoned (Pulsar's consumers expire them
    after ``expireTimeOfIncompleteChunkedMessage``, 60 s by default)."""
    pending = (
        messages.filter(F.col("chunk_uuid").isNotNull() & (F.col("entry_id") <= head))
        .groupBy("chunk_uuid")
        .agg(
            F.min("entry_id").alias("first"),
            F.min("publish_time_ms").alias("started"),
            F.max("chunk_total").alias("total"),
            F.countDistinct("chunk_id").alias("have"),
        )
        .filter((F.col("have") < F.col("total")) & (F.col("started") > now_ms - chunk_wait_ms))
        .agg(F.min("first").alias("first"))
        .collect()[0]["first"]
    )
    return head if pending is None else min(head, int(pending) - 1)
