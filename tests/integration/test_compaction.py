"""Topic compaction on the emulator: the compact-topic job's main() against the local stack,
then readCompacted cursors served by the engine."""

from __future__ import annotations

import io
import uuid
from contextlib import redirect_stdout

import pytest
from delivered import entry_ids

from magnetar_core.adapters.aws.compaction import CompactionStore
from magnetar_core.domain.compaction import CompactionInProgress, ledger_segment_prefix
from magnetar_core.domain.errors import NotAllowedError
from magnetar_core.engine import Engine
from magnetar_wire import EntryMessage, decode_entry, encode_entry
from magnetar_wire.names import TopicName

pytestmark = pytest.mark.emulator


def _entry(*messages: tuple[str | None, bytes | None]) -> bytes:
    """An entry of ``(key, payload)`` messages; payload None is a null value."""
    return encode_entry(
        [
            EntryMessage(
                payload=p or b"", key=k, null_value=p is None, sequence_id=i, publish_time_ms=1
            )
            for i, (k, p) in enumerate(messages)
        ],
        producer_name="compaction-it",
    )


def _run_job(local_stack, settings, *extra: str):
    """Run compact_topic.main() on the local stack (on the run's Spark); returns its summary."""
    import compact_topic

    argv = [
        "--bucket", settings.entries_bucket,
        "--topics-table", settings.topics_table,
        "--log-table", settings.log_table,
        "--cursors-table", settings.cursors_table,
        "--endpoint-url", local_stack.aws_endpoint_url,
        "--region", settings.region,
        *extra,
    ]  # fmt: skip
    with redirect_stdout(io.StringIO()):
        return compact_topic.main(argv)


@pytest.fixture
def run_job(local_stack, settings, spark):
    """Runs compact_topic.main() with the given arguments (``_run_job``)."""
    return lambda *extra: _run_job(local_stack, settings, *extra)


KEYED = (
    [("a", b"a1")],
    [("b", b"b1"), ("c", b"c1"), (None, b"x")],
    [("a", b"a2")],
    [("c", None)],
    [("d", b"d1"), ("b", b"b2")],
)


def _publish_keyed(engine, topic):
    for messages in KEYED:
        engine.producer.publish(topic, _entry(*messages))


@pytest.fixture
def keyed(engine, topic):
    """e0 a=a1 | e1 [b=b1, c=c1, keyless x] | e2 a=a2 | e3 c=null | e4 [d=d1, b=b2]."""
    _publish_keyed(engine, topic)
    return topic


@pytest.fixture(scope="module")
def compacted_keyed(local_stack, settings, engine_clients, spark):
    """A topic as ``keyed``, compacted once, for the tests that only read it (each on a
    subscription of its own; none publishes to it or compacts it again): one job run for
    both (a run costs about a CPU-second)."""
    topic = TopicName.parse(f"persistent://public/default/it-{uuid.uuid4().hex[:10]}")
    _publish_keyed(Engine.build(settings, clients=engine_clients), topic)
    _run_job(local_stack, settings, "--topic", str(topic))
    return topic


def _read(engine, topic, subscription, consumer_id, n=100):
    """``[(entry_id, batch index or -1, key, payload)]`` of one receive, masks applied."""
    out = []
    for d in engine.subscriptions.receive(topic, subscription, consumer_id, n, 0):
        decoded = decode_entry(d.data)
        indexes = d.batch_indexes if d.batch_indexes is not None else range(len(decoded.messages))
        for i in indexes:
            m = decoded.messages[i]
            out.append((d.entry_id, i if decoded.header.batched else -1, m.key, m.payload))
    return out


def _reader(engine, topic, name):
    handle = engine.subscriptions.subscribe(
        topic, name, None, "Exclusive", earliest=True, durable=False, read_compacted=True
    )
    return handle.consumer_id


VIEW = [(2, -1, "a", b"a2"), (4, 0, "d", b"d1"), (4, 1, "b", b"b2")]


@pytest.mark.slow
def test_a_compacted_reader_sees_latest_per_key_up_to_the_horizon_then_the_live_log(
    engine, keyed, run_job
):
    summary = run_job("--topic", str(keyed))
    assert (summary.partitions, summary.entries_compacted) == (1, 2)
    assert engine.compaction.status(keyed) == {"status": "SUCCESS", "lastError": ""}
    engine.producer.publish(keyed, _entry(("a", b"a3")))
    engine.producer.publish(keyed, _entry(("c", b"c2")))
    reader = _reader(engine, keyed, "compacted-reader")
    assert _read(engine, keyed, "compacted-reader", reader) == [
        *VIEW,
        (5, -1, "a", b"a3"),
        (6, -1, "c", b"c2"),
    ]


def test_a_normal_consumer_still_sees_every_message(engine, compacted_keyed):
    keyed = compacted_keyed
    c = engine.subscriptions.subscribe(keyed, "all", None, "Exclusive", earliest=True)
    got = _read(engine, keyed, "all", c.consumer_id)
    assert [(e, k, p) for e, _, k, p in got] == [
        (0, "a", b"a1"),
        (1, "b", b"b1"),
        (1, "c", b"c1"),
        (1, None, b"x"),
        (2, "a", b"a2"),
        (3, "c", b""),
        (4, "d", b"d1"),
        (4, "b", b"b2"),
    ]


@pytest.mark.slow
def test_a_rerun_with_nothing_new_changes_nothing_and_a_later_run_folds_in_new_messages(
    engine, keyed, run_job, aws_clients, settings
):
    run_job("--topic", str(keyed))
    store = CompactionStore(aws_clients.dynamodb, settings.cursors_table, settings.log_table)
    ref = engine.topics.resolve(keyed, create=False)
    first = store.get(ref.key)
    again = run_job("--topic", str(keyed))
    assert again.details["partitions_unchanged"] == 1
    second = store.get(ref.key)
    assert (second.ledger, second.horizon, second.retired) == (first.ledger, 4, [])
    assert _read(engine, keyed, "r1", _reader(engine, keyed, "r1")) == VIEW

    engine.producer.publish(keyed, _entry(("a", b"a3"), ("b", None)))
    run_job("--topic", str(keyed))
    third = store.get(ref.key)
    assert third.horizon == 5 and third.ledger != first.ledger
    assert [(r.ledger, r.trashed) for r in third.retired] == [(first.ledger, True)]
    trash = aws_clients.s3.list_objects_v2(Bucket=settings.entries_bucket, Prefix="trash/")
    listed = [o["Key"] for o in trash.get("Contents", [])]
    assert any("compact-topic" in key for key in listed)
    assert ledger_segment_prefix(first.ledger).startswith("compacted/persistent/public/default/")
    assert _read(engine, keyed, "r2", _reader(engine, keyed, "r2")) == [
        (4, 0, "d", b"d1"),
        (5, 0, "a", b"a3"),
    ]


def test_a_durable_compacted_subscription_acknowledges_what_the_view_dropped(
    engine, compacted_keyed
):
    keyed = compacted_keyed
    subs = engine.subscriptions
    c = subs.subscribe(keyed, "durable", None, "Failover", earliest=True, read_compacted=True)
    delivered = subs.receive(keyed, "durable", c.consumer_id, 100, 0)
    assert [(d.entry_id, d.batch_indexes) for d in delivered] == [(2, None), (4, None)]
    subs.acknowledge(keyed, "durable", c.consumer_id, entry_ids(delivered), False)
    stats = engine.admin.stats(keyed, partitioned=False)["subscriptions"]["durable"]
    ledger = engine.topics.get(keyed).ledger_id
    assert (stats["msgBacklog"], stats["markDeletePosition"]) == (0, f"{ledger}:4")


def test_a_kept_batch_entry_comes_masked_and_a_big_entry_gets_an_object_of_its_own(
    engine, topic, run_job, aws_clients, settings
):
    engine.producer.publish(topic, _entry(("a", b"a1"), ("b", b"b1"), ("a", b"a2")))
    engine.producer.publish(topic, _entry(("c", b"c" * 2000)))
    engine.producer.publish(topic, _entry(("d", b"d1")))
    summary = run_job("--topic", str(topic), "--max-entry-bytes", "1000")
    assert summary.details["segments_written"] == 3
    reader = _reader(engine, topic, "masked")
    delivered = engine.subscriptions.receive(topic, "masked", reader, 100, 0)
    assert [(d.entry_id, d.batch_indexes) for d in delivered] == [(0, (1, 2)), (1, None), (2, None)]
    store = CompactionStore(aws_clients.dynamodb, settings.cursors_table, settings.log_table)
    pointer = store.get(engine.topics.resolve(topic, create=False).key)
    objects = [c.entry.object_key for c in store.read_from(pointer.ledger, 0, 9)]
    assert [key.rsplit("/", 1)[1] for key in objects] == ["0-0", "1-1", "2-2"]


def test_a_run_that_cannot_read_an_entry_reports_error_with_the_reason(
    engine, topic, run_job, aws_clients, settings
):
    engine.producer.publish(topic, _entry(("a", b"a1" * 3000)))  # too large to go inline
    ref = engine.topics.resolve(topic, create=False)
    item = engine.subscriptions.context.log.get_many(ref.key, [0])[0]
    aws_clients.s3.delete_object(Bucket=settings.entries_bucket, Key=item.object_key)
    summary = run_job("--topic", str(topic))
    assert summary.details["partitions_failed"] == 1
    status = engine.compaction.status(topic)
    assert status["status"] == "ERROR"
    assert "EntryUnreadable: entry 0 (entries/" in status["lastError"]
    assert "NoSuchKey" in status["lastError"]


def test_a_trigger_while_running_is_a_conflict_and_the_job_finishes_the_triggered_run(
    settings, keyed, run_job
):
    started = []

    class Launcher:
        def start(self, job, args):
            started.append((job, args))
            return "run-1"

    engine = Engine.build(settings, launcher=Launcher())
    run_id = engine.compaction.trigger(keyed)
    assert started == [("compact-topic", {"topic": str(keyed), "run-id": run_id})]
    assert engine.compaction.status(keyed) == {"status": "RUNNING", "lastError": ""}
    with pytest.raises(CompactionInProgress, match="Compaction already in progress"):
        engine.compaction.trigger(keyed)
    run_job("--topic", str(keyed), "--run-id", run_id)
    assert engine.compaction.status(keyed) == {"status": "SUCCESS", "lastError": ""}


def test_compacted_reads_need_an_exclusive_or_failover_subscription(engine, topic):
    with pytest.raises(NotAllowedError, match="Read compacted can only be used"):
        engine.subscriptions.subscribe(
            topic, "shared", None, "Shared", earliest=True, read_compacted=True
        )


@pytest.mark.slow
def test_a_partitioned_topic_is_compacted_on_every_partition(engine, topic, run_job):
    engine.admin.create_topic(topic, 2)
    for i, key in ((0, "a"), (0, "a"), (1, "b"), (1, "c")):
        engine.producer.publish(topic.partition(i), _entry((key, f"{key}{i}".encode())))
    assert engine.compaction.status(topic) == {"status": "NOT_RUN", "lastError": ""}
    summary = run_job("--topic", str(topic))
    assert (summary.partitions, summary.entries_compacted) == (2, 3)
    assert engine.compaction.status(topic) == {"status": "SUCCESS", "lastError": ""}
    part = topic.partition(0)
    assert _read(engine, part, "p0", _reader(engine, part, "p0")) == [(1, -1, "a", b"a0")]


def test_a_run_after_a_crash_retires_the_crashed_runs_ledger_and_deletes_it_once_due(
    engine, keyed, run_job, aws_clients, settings
):
    from magnetar_core.adapters.aws.compaction import compacted_item
    from magnetar_core.domain.compaction import CompactionState, compacted_ledger_key

    ref = engine.topics.resolve(keyed, create=False)
    store = CompactionStore(aws_clients.dynamodb, settings.cursors_table, settings.log_table)
    crashed = compacted_ledger_key(ref.key, "crashed")
    state = CompactionState()
    state.start("crashed", crashed, now_ms=1, stale_after_ms=1)
    store.put(ref.key, state)
    source = aws_clients.dynamodb.get_item(
        TableName=settings.log_table, Key={"pk": {"S": ref.key}, "eid": {"N": "0"}}
    )["Item"]
    half = compacted_item(source, crashed, ledger_segment_prefix(crashed) + "0-0", 0, 1, None)
    aws_clients.dynamodb.put_item(TableName=settings.log_table, Item=half)
    segment = ledger_segment_prefix(crashed) + "0-0"
    aws_clients.s3.put_object(Bucket=settings.entries_bucket, Key=segment, Body=b"x")

    run_job("--topic", str(keyed), "--stale-after-ms", "1000", "--grace-ms", "0")
    after = store.get(ref.key)
    assert (after.status, after.horizon, after.retired) == ("SUCCESS", 4, [])
    assert store.read_from(crashed, 0, 10) == []
    manifests = aws_clients.s3.list_objects_v2(Bucket=settings.entries_bucket, Prefix="trash/")
    bodies = [
        aws_clients.s3.get_object(Bucket=settings.entries_bucket, Key=m["Key"])["Body"].read()
        for m in manifests.get("Contents", [])
    ]
    assert any(segment.encode() in body for body in bodies)
    assert _read(engine, keyed, "after-crash", _reader(engine, keyed, "after-crash")) == VIEW
