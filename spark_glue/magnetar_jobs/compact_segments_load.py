"""compact-segments, the I/O part run in executors: write a segment, switch the index.

Per planned segment, in this order (each step idempotent, so a re-run or a run after a crash
ends consistent):
1. PUT the segment object (entries back to back, read with ranged GETs). Its key names its
   bytes (see compact_segments_transform), so an object already there of the planned size
   is kept; one of another size is never overwritten (the segment is skipped).
2. A trash manifest of the members' old objects, due ``now + grace``, each key with the index
   item that must stop referencing it (garbage.purge_due keeps keys still referenced: a
   crash before step 3 deletes nothing the index needs).
3. Per member, a conditional UpdateItem ``SET obj = :seg, off = :off REMOVE d`` if
   ``obj = :old AND off = :old_off``: a member expired or switched meanwhile is left as it
   is. An inline member (its bytes ``d`` in its index item, ``obj`` empty) is read from the
   plan, has no old object to trash, and its switch drops ``d``: DynamoDB storage shrinks.
Readers follow the index: before the switch they read the old object, after it the
segment's byte range, and old objects outlive every reader for the grace period.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from botocore.exceptions import ClientError

from .common import JobArgs, dynamodb_client, s3_client
from .garbage import schedule_deletes

JOB = "compact-segments"


@dataclass(frozen=True)
class Member:
    """One entry of a segment: where it is now and where it goes (bytes)."""

    eid: int
    obj: str
    off: int
    len: int
    seg_off: int
    d: bytes | None = None
    """An inline member's bytes (``obj`` empty)."""


@dataclass(frozen=True)
class Segment:
    """One planned segment (a plan row of compact_segments_transform)."""

    pk: str
    seg_key: str
    bytes: int
    members: tuple[Member, ...]

    @classmethod
    def of(cls, row) -> Segment:
        """From a plan Row of the Spark transform."""
        members = tuple(
            Member(m.eid, m.obj, m.off, m.len, m.seg_off, _bytes(m.d)) for m in row.members
        )
        return cls(row.pk, row.seg_key, row.bytes, members)

    @classmethod
    def from_plan(cls, plan: dict) -> Segment:
        """From a plan dict of ``plan_ledger`` (members as tuples)."""
        members = tuple(Member(*m) for m in plan["members"])
        return cls(plan["pk"], plan["seg_key"], plan["bytes"], members)


@dataclass(frozen=True)
class SegmentResult:
    """What happened to one segment. ``outcome``: ``written`` (PUT now), ``existed`` (same
    size already there), ``conflict`` (another size there: skipped), ``missing`` (a member's
    object was gone: skipped)."""

    pk: str
    seg_key: str
    outcome: str
    planned: int
    switched: int
    switched_bytes: int
    manifest: str = ""
    switched_inline: int = 0
    """How many of the switched members were inline (no object replaced)."""


def _bytes(data) -> bytes | None:
    """A binary column's value as bytes (Spark hands out bytearray)."""
    return None if data is None else bytes(data)


def _code(exc: ClientError) -> str:
    return exc.response.get("Error", {}).get("Code", "")


class SegmentWriter:
    """Writes segments and switches index items; one per executor task (own clients)."""

    def __init__(self, s3, dynamodb, bucket: str, log_table: str, threads: int = 8) -> None:
        self._s3 = s3
        self._ddb = dynamodb
        self._bucket = bucket
        self._table = log_table
        self._pool = ThreadPoolExecutor(max_workers=max(threads, 1))

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def existing_size(self, key: str) -> int | None:
        """The size of an object, or None when there is none (one HEAD)."""
        try:
            return int(self._s3.head_object(Bucket=self._bucket, Key=key)["ContentLength"])
        except ClientError as exc:
            if _code(exc) in ("404", "NoSuchKey", "NotFound"):
                return None
            raise

    def _read(self, m: Member) -> bytes | None:
        if m.d is not None:
            return m.d if len(m.d) == m.len else None
        try:
            body = self._s3.get_object(
                Bucket=self._bucket, Key=m.obj, Range=f"bytes={m.off}-{m.off + m.len - 1}"
            )["Body"].read()
        except ClientError as exc:
            if _code(exc) in ("NoSuchKey", "404", "InvalidRange"):
                return None
            raise
        return body if len(body) == m.len else None

    def put_segment(self, seg: Segment) -> str:
        """Step 1; returns ``written``, ``existed``, ``conflict`` or ``missing``."""
        size = self.existing_size(seg.seg_key)
        if size is not None:
            return "existed" if size == seg.bytes else "conflict"
        parts = list(self._pool.map(self._read, seg.members))
        datas = [p for p in parts if p is not None]
        if len(datas) < len(parts):
            return "missing"
        self._s3.put_object(Bucket=self._bucket, Key=seg.seg_key, Body=b"".join(datas))
        return "written"

    def schedule_trash(self, seg: Segment, due_ms: int, new_id=None) -> str:
        """Step 2: the manifest of the members' old objects (with their index items); inline
        members have none (``""``: nothing to trash, no manifest)."""
        stored = [m for m in seg.members if m.obj]
        keys = [m.obj for m in stored]
        extra = {} if new_id is None else {"new_id": new_id}
        return schedule_deletes(
            self._s3,
            self._bucket,
            keys,
            due_ms,
            JOB,
            sizes={m.obj: m.len for m in stored},
            refs={m.obj: (seg.pk, m.eid) for m in stored},
            **extra,
        )

    def _switch_one(self, seg: Segment, m: Member) -> bool:
        try:
            self._ddb.update_item(
                TableName=self._table,
                Key={"pk": {"S": seg.pk}, "eid": {"N": str(m.eid)}},
                UpdateExpression="SET obj = :seg, #off = :off REMOVE d",
                ConditionExpression="obj = :old AND #off = :old_off",
                ExpressionAttributeNames={"#off": "off"},
                ExpressionAttributeValues={
                    ":seg": {"S": seg.seg_key},
                    ":off": {"N": str(m.seg_off)},
                    ":old": {"S": m.obj},
                    ":old_off": {"N": str(m.off)},
                },
            )
        except ClientError as exc:
            if _code(exc) == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def switch(self, seg: Segment, members: Iterable[Member] | None = None) -> list[Member]:
        """Step 3 for ``members`` (all by default); returns the ones switched now."""
        chosen = list(seg.members if members is None else members)
        done = self._pool.map(lambda m: self._switch_one(seg, m), chosen)
        return [m for m, ok in zip(chosen, done, strict=True) if ok]

    def compact(self, seg: Segment, due_ms: int) -> SegmentResult:
        """Steps 1-3 for one segment."""
        outcome = self.put_segment(seg)
        if outcome in ("conflict", "missing"):
            return SegmentResult(seg.pk, seg.seg_key, outcome, len(seg.members), 0, 0)
        manifest = self.schedule_trash(seg, due_ms)
        switched = self.switch(seg)
        return SegmentResult(
            seg.pk,
            seg.seg_key,
            outcome,
            len(seg.members),
            len(switched),
            sum(m.len for m in switched),
            manifest,
            sum(1 for m in switched if m.d is not None),
        )


def load_partition(
    rows: Iterable, args: JobArgs, due_ms: int, threads: int
) -> Iterator[SegmentResult]:
    """mapPartitions body: compact every planned segment of this Spark partition."""
    writer = SegmentWriter(
        s3_client(args), dynamodb_client(args), args.bucket, args.log_table, threads
    )
    try:
        for row in rows:
            yield writer.compact(Segment.of(row), due_ms)
    finally:
        writer.close()
