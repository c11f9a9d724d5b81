"""The cost model of ``magnetar perf expire-cost``: measured per-item request counts scaled
to a retained size, priced with shared/PRICES.md (``costs``).

Scaling rules (what grows with what):

- every run, per partition: what the incremental run with nothing new costs in DynamoDB
  (cursors Query, policy reads, the window's first items), measured per partition; its S3
  requests (the trash listing) once per run;
- full pass, per retained index item: the difference between the full and the incremental
  run with nothing new (the log Scan and the per-ledger Query read every item), measured per
  item; per object: one ListObjectsV2 per 1,000 objects; its record in the topics table
  (1 GetItem, 1 PutItem) per run;
- per entry of traffic (at steady state one entry leaves retention for each that arrives):
  the difference between the run after traffic and the one with nothing new, measured per
  entry (reading the expired items, the stats' fold, the dedup replay of the new ones, the
  BatchWriteItem deletes, trash manifests).

Glue: 2 G.1X workers (2 DPU), billed per second with a 1-minute minimum; a run's minutes are
an assumption (``GLUE_MINUTES_FLOOR`` plus the index bytes a run reads at
``GLUE_READ_BYTES_PER_S``), not a measurement: no Glue here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from magnetar_bench.costs import (
    DYNAMODB_PER_RRU,
    DYNAMODB_PER_WRU,
    S3_READ_PER_REQUEST,
    S3_WRITE_PER_REQUEST,
)

GLUE_DPU = 2
GLUE_PER_DPU_MINUTE = 0.44 / 60
GLUE_MINUTES_FLOOR = 1.0
GLUE_READ_BYTES_PER_S = 40e6
"""Assumed index read rate of a full pass on 2 G.1X (8 tasks at ~5 MB/s of DynamoDB JSON)."""
RUNS_PER_DAY = 96
SIZES = {"1 GB": 1e9, "1 TB": 1e12, "10 TB": 1e13}
TRAFFIC_ENTRIES = 1000 * 900
"""15 minutes at 1,000 msg/s, one message per entry."""
ENTRIES_PER_SEGMENT = 8192
"""8 MiB segments of ~1 KB entries (compact-segments' default target)."""
S3_WRITES = ("s3.ListObjectsV2", "s3.PutObject", "s3.DeleteObjects", "s3.DeleteObject")


@dataclass(frozen=True)
class Usage:
    """Request units and requests of one run (or per unit of something)."""

    rru: float = 0.0
    wru: float = 0.0
    s3_writes: float = 0.0  # LIST, PUT, DELETE(s): $0.005 per 1,000
    s3_reads: float = 0.0  # GET, HEAD: $0.0004 per 1,000
    item_bytes_read: float = 0.0

    @classmethod
    def of(cls, run: dict, item_bytes: float = 0.0) -> Usage:
        units, requests = run["units"], run["requests"]
        return cls(
            rru=sum(v for k, v in units.items() if k.endswith("RRU")),
            wru=sum(v for k, v in units.items() if k.endswith("WRU")),
            s3_writes=sum(requests.get(k, 0) for k in S3_WRITES),
            s3_reads=requests.get("s3.GetObject", 0) + requests.get("s3.HeadObject", 0),
            item_bytes_read=item_bytes,
        )

    def __add__(self, other: Usage) -> Usage:
        return Usage(*(a + b for a, b in zip(self.astuple(), other.astuple(), strict=True)))

    def __sub__(self, other: Usage) -> Usage:
        return Usage(*(max(0.0, a - b) for a, b in zip(self.astuple(), other.astuple(), strict=True)))  # fmt: skip

    def __mul__(self, k: float) -> Usage:
        return Usage(*(a * k for a in self.astuple()))

    def astuple(self) -> tuple[float, ...]:
        return (self.rru, self.wru, self.s3_writes, self.s3_reads, self.item_bytes_read)

    def glue_minutes(self) -> float:
        return max(GLUE_MINUTES_FLOOR, GLUE_MINUTES_FLOOR + self.item_bytes_read / GLUE_READ_BYTES_PER_S / 60)  # fmt: skip

    def dollars(self) -> dict[str, float]:
        out = {
            "dynamodb": self.rru * DYNAMODB_PER_RRU + self.wru * DYNAMODB_PER_WRU,
            "s3": self.s3_writes * S3_WRITE_PER_REQUEST + self.s3_reads * S3_READ_PER_REQUEST,
            "glue": GLUE_DPU * self.glue_minutes() * GLUE_PER_DPU_MINUTE,
        }
        return {**out, "total": sum(out.values())}

    def report(self) -> dict:
        return {
            "rru": round(self.rru),
            "wru": round(self.wru),
            "s3_list_put_delete": round(self.s3_writes),
            "s3_get": round(self.s3_reads),
            "glue_dpu_minutes": round(GLUE_DPU * self.glue_minutes(), 1),
            "usd": {k: round(v, 4) for k, v in self.dollars().items()},
        }


@dataclass(frozen=True)
class Measured:
    """Per-unit usage from the four measured runs."""

    per_run: Usage
    per_partition: Usage
    per_retained_item: Usage
    per_traffic_entry: Usage
    item_bytes: float
    entries_per_object: int
    message_bytes: int

    @classmethod
    def of(cls, runs: dict, opts, item_bytes: float) -> Measured:
        """From the runs of ``expire_cost.measure``; ``item_bytes``: the mean stored size of
        a retained index item."""
        partitions, items = opts.partitions, opts.partitions * opts.retained
        quiet_full = Usage.of(runs["quiet_full"])
        quiet = Usage.of(runs["quiet_incremental"])
        traffic = Usage.of(runs["traffic_incremental"])
        per_item = (quiet_full - quiet) * (1 / items)
        # per item: reads only (the full pass's one write is its record, counted per run);
        # S3 listings are priced by object count at scale, not by this run's few pages; the
        # full pass reads each item twice (Scan, Query): Glue time
        per_item = Usage(per_item.rru, 0.0, 0.0, 0.0, 2 * item_bytes)
        per_entry = (traffic - quiet) * (1 / (partitions * opts.new))
        return cls(
            # S3 of a quiet run (the trash listing) is per run; its DynamoDB per partition
            per_run=Usage(s3_writes=quiet.s3_writes, s3_reads=quiet.s3_reads),
            per_partition=Usage(quiet.rru / partitions, quiet.wru / partitions),
            per_retained_item=per_item,
            # S3 (trash manifests, the purge) grows with freed objects: ``traffic_s3``
            per_traffic_entry=Usage(per_entry.rru, per_entry.wru, 0.0, 0.0, 3 * item_bytes),
            item_bytes=item_bytes,
            entries_per_object=opts.entries_per_object,
            message_bytes=opts.message_bytes,
        )


def traffic_s3(entries: float) -> Usage:
    """S3 requests of expiring ``entries`` segment members: one trash manifest PUT per
    10,000 freed objects, and the purge after the grace (the manifest's GET and DELETE, one
    DeleteObjects per 1,000 objects, the trash listing)."""
    objects = math.ceil(entries / ENTRIES_PER_SEGMENT)
    manifests = math.ceil(objects / 10_000)
    return Usage(
        s3_writes=manifests + math.ceil(objects / 1000) + manifests + 1, s3_reads=manifests
    )


def extrapolate(m: Measured, partitions: int = 100) -> dict:
    """Per-run usage and dollars at each of ``SIZES`` retained: before (a full pass every
    run) and after (incremental, plus a daily full pass spread over the day's runs)."""
    out = {}
    for label, size in SIZES.items():
        items = size / m.message_bytes
        objects = items / ENTRIES_PER_SEGMENT
        listing = Usage(s3_writes=3 + math.ceil(objects / 1000))
        incremental = m.per_run + m.per_partition * partitions
        full = incremental + m.per_retained_item * items + listing + Usage(rru=1.0, wru=1.0)
        traffic = m.per_traffic_entry * TRAFFIC_ENTRIES + traffic_s3(TRAFFIC_ENTRIES)
        out[label] = {
            "index_items": int(items),
            "before": {"nothing_new": full.report(), "traffic": (full + traffic).report()},
            "after": {
                "nothing_new": incremental.report(),
                "traffic": (incremental + traffic).report(),
                "daily_full_pass": full.report(),
                "average_run_with_traffic": _average(incremental + traffic, full),
            },
        }
    return out


def _average(run: Usage, full: Usage) -> dict:
    """A traffic run plus its 1/96 share of the day's full pass."""
    dollars = run.dollars()["total"] + full.dollars()["total"] / RUNS_PER_DAY
    return {"usd": round(dollars, 4)}
