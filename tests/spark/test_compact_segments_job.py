"""compact-segments end to end on the emulator: produce through the engine, compact with the
job's main(), and read the same messages before, during and after; old objects deleted only
once the grace has passed; re-runs and runs after a crash end consistent."""

from __future__ import annotations

import dataclasses
import time
import uuid

import compact_segments
import pytest

from magnetar_core.engine import Engine
from magnetar_core.settings import Settings
from magnetar_jobs.catalog import index_frame, query_index
from magnetar_jobs.common import dynamodb_client, engine_of, parse_args, s3_client
from magnetar_jobs.compact_segments_load import Segment, SegmentWriter
from magnetar_jobs.compact_segments_transform import transform
from magnetar_jobs.garbage import due_of, manifests, purge_due, read_manifest
from magnetar_wire import EntryMessage, decode_entry, encode_entry
from magnetar_wire.names import TopicName

BIG = 5000  # above --max-entry-bytes: stays in its own object


@pytest.fixture(scope="module")
def settings(local_stack) -> Settings:
    return Settings.from_env(local_stack.environment)


@pytest.fixture
def topic(local_stack) -> TopicName:
    name = TopicName.parse(f"persistent://public/seg{uuid.uuid4().hex[:8]}/t")
    local_stack.create_namespaces(f"{name.tenant}/{name.namespace}")
    return name


@pytest.fixture
def argv(local_stack, topic) -> list[str]:
    return [
        "--JOB_NAME", "compact-segments",
        "--bucket", local_stack.name("EntriesBucket"),
        "--table-prefix", local_stack.template.stack_name,
        "--endpoint-url", local_stack.aws_endpoint_url,
        "--region", local_stack.region,
        "--topic", str(topic),
        "--target-segment-bytes", "2000",
        "--max-entry-bytes", "4096",
        "--min-tail-bytes", "1",
        "--grace-ms", "60000",
    ]  # fmt: skip


def now_ms() -> int:
    return int(time.time() * 1000)


def _entry(*payloads: bytes, key: str | None = None) -> bytes:
    messages = [
        EntryMessage(payload=p, sequence_id=i, publish_time_ms=1_700_000_000_000 + i, key=key)
        for i, p in enumerate(payloads)
    ]
    return encode_entry(messages, producer_name="seg-test")


def _produce(settings: Settings, topic: TopicName, count: int) -> list[bytes]:
    """Entries 0..count-1: even ones inline in their index items, odd ones (and the big
    entry 7) in S3 objects of their own."""
    inline = Engine.build(settings)
    stored = Engine.build(dataclasses.replace(settings, index_inline_max_bytes=0))
    sent: list[bytes] = []
    for i in range(count):
        engine = inline if i % 2 == 0 else stored
        if i == 7:
            payloads = [b"B" * BIG]
        elif i % 4 == 0:
            payloads = [f"m{i}-{j}".encode() * 20 for j in range(3)]  # a batch of 3
        else:
            payloads = [f"m{i}".encode() * 30]
        engine.producer.publish(topic, _entry(*payloads, key=f"k{i % 3}"))
        sent.extend(payloads)
    return sent


def _read_all(settings: Settings, topic: TopicName, subscription: str) -> list[bytes]:
    """Every message from the earliest position, through a fresh engine (no cached index)."""
    subs = Engine.build(settings).subscriptions
    consumer = subs.subscribe(topic, subscription, None, "Exclusive", earliest=True)
    out: list[bytes] = []
    while True:
        delivered = subs.receive(topic, subscription, consumer.consumer_id, 100, 0)
        if not delivered:
            return out
        for d in delivered:
            messages = decode_entry(d.data).messages
            indexes = d.batch_indexes if d.batch_indexes is not None else range(len(messages))
            out.extend(messages[i].payload for i in indexes)


def _pk(args, topic: TopicName) -> str:
    """The topic's log key in its current ledger (ledger ids are clock-based)."""
    return engine_of(args).topics.resolve(topic, create=False).key


def _index(args, topic: TopicName) -> list[tuple]:
    return list(query_index(dynamodb_client(args), args.log_table, _pk(args, topic)))


def _exists(args, key: str) -> bool:
    found = s3_client(args).list_objects_v2(Bucket=args.bucket, Prefix=key)
    return any(o["Key"] == key for o in found.get("Contents", []))


def _plan(spark, args, topic) -> list[Segment]:
    index = index_frame(spark, args, [_pk(args, topic)])
    rows = (
        transform(index, compact_segments.params_of(args, now_ms())).orderBy("first_eid").collect()
    )
    return [Segment.of(r) for r in rows]


@pytest.mark.slow
def test_reads_before_during_and_after_a_compaction_return_the_same_messages(
    spark, settings, topic, argv
):
    args = parse_args(argv)
    sent = _produce(settings, topic, 30)
    before = _index(args, topic)
    assert [(row[2] == "", row[11] is not None) for row in before] == [
        (e % 2 == 0, e % 2 == 0) for e in range(30)
    ]  # even entries inline: no object, their bytes in the item
    assert _read_all(settings, topic, "before") == sent

    # during: every segment written and its trash manifest too, then the first three of each
    # one's members switched (a crash)
    plan = _plan(spark, args, topic)
    # entry 7 is too big; 29 alone is the open end of the log, not worth a segment
    assert [(s.members[0].eid, s.members[-1].eid) for s in plan] == [
        (0, 6),
        (8, 14),
        (15, 21),
        (22, 28),
    ]
    writer = SegmentWriter(s3_client(args), dynamodb_client(args), args.bucket, args.log_table)
    for seg in plan:
        assert writer.put_segment(seg) == "written"
        writer.schedule_trash(seg, due_ms=now_ms() + 60_000)
        assert len(writer.switch(seg, seg.members[:3])) == 3
    writer.close()
    during = _index(args, topic)
    assert sum(row[2].startswith("segments/") for row in during) == 12
    assert _read_all(settings, topic, "during") == sent

    # after: the job plans what is left (3-6, 11-14, 18-21, 25-29) and finishes it
    summary = compact_segments.main(argv)
    after = _index(args, topic)
    assert [row[2].startswith("segments/") for row in after] == [e != 7 for e in range(30)]
    assert summary.entries_compacted == 17
    assert [row[11] for row in after] == [None] * 30  # no inline bytes left in the index
    # of 3-6, 11-14, 18-21, 25-29: the even ones were inline, the odd ones objects
    assert (summary.details["inline_entries_moved"], summary.details["objects_replaced"]) == (8, 9)
    assert summary.details["segments_written"] == 4
    assert summary.details["entries_not_switched"] == 0
    assert _read_all(settings, topic, "after") == sent

    # the old objects outlive the grace: gone only from the due time on
    old = {row[2] for row in before if row[1] != 7 and row[2]}
    assert len(old) == 14
    assert all(_exists(args, key) for key in old)
    due = min(read_manifest(s3_client(args), args.bucket, m)["due_ms"] for m in manifests(
        s3_client(args), args.bucket) if "-compact-segments-" in m)  # fmt: skip
    ddb = dynamodb_client(args)
    purge_due(s3_client(args), args.bucket, due - 1, ddb, args.log_table)
    assert all(_exists(args, key) for key in old)
    again = compact_segments.main(argv, now_ms=lambda: due + 120_000)  # past every grace
    # the 14 replaced entry objects; trash other tests of this worker's stack left due by
    # then goes in the same purge (the run purges the whole bucket's due manifests)
    assert again.objects_deleted >= 14
    assert [m for m in manifests(s3_client(args), args.bucket) if due_of(m) <= due + 120_000] == []
    assert not any(_exists(args, key) for key in old)
    assert again.entries_compacted == 0
    assert _read_all(settings, topic, "purged") == sent
    assert _index(args, topic) == after


def test_a_run_after_a_crash_after_the_segment_puts_ends_consistent(spark, settings, topic, argv):
    args = parse_args(argv)
    sent = _produce(settings, topic, 12)
    plan = _plan(spark, args, topic)
    writer = SegmentWriter(s3_client(args), dynamodb_client(args), args.bucket, args.log_table)
    assert [writer.put_segment(seg) for seg in plan] == ["written"] * len(plan)
    writer.close()
    assert _read_all(settings, topic, "crashed") == sent

    summary = compact_segments.main(argv)
    assert summary.details["segments_existed"] == len(plan)
    assert summary.entries_compacted == 11  # all but the big entry
    assert _read_all(settings, topic, "after") == sent

    rerun = compact_segments.main(argv)
    assert (rerun.entries_compacted, rerun.details.get("segments_written", 0)) == (0, 0)
    assert _read_all(settings, topic, "rerun") == sent


def test_a_member_expired_since_the_plan_is_not_recreated_and_its_object_purged(
    spark, settings, topic, argv
):
    args = parse_args(argv)
    _produce(settings, topic, 4)
    (seg,) = _plan(spark, args, topic)
    gone = seg.members[1]
    ddb = dynamodb_client(args)
    key = {"pk": {"S": seg.pk}, "eid": {"N": str(gone.eid)}}
    ddb.delete_item(TableName=args.log_table, Key=key)  # expired since the plan

    writer = SegmentWriter(s3_client(args), ddb, args.bucket, args.log_table)
    result = writer.compact(seg, due_ms=1)
    writer.close()

    assert (result.outcome, result.planned, result.switched) == ("written", 4, 3)
    assert "Item" not in ddb.get_item(TableName=args.log_table, Key=key, ConsistentRead=True)
    assert [row[1] for row in _index(args, topic) if row[2] == seg.seg_key] == [0, 2, 3]
    purge_due(s3_client(args), args.bucket, 2, ddb, args.log_table)
    stored = [m.obj for m in seg.members if m.obj]  # 0 and 2 were inline: no object
    assert [m.eid for m in seg.members if m.obj] == [1, 3]
    assert [_exists(args, key) for key in stored] == [False, False]
