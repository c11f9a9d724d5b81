"""magnetar_jobs.catalog and common's clients on the emulator: partitions, dead ledgers and
the log index read by executors."""

from __future__ import annotations

import uuid

import pytest

from magnetar_jobs.catalog import dead_ledgers, index_frame, partitions
from magnetar_jobs.common import engine_of, parse_args, s3_client
from magnetar_local.tenancy import ensure_namespaces
from magnetar_wire.names import TopicName


@pytest.fixture(scope="module")
def job_args(local_stack):
    return parse_args(
        [
            "--JOB_NAME", "catalog-test",
            "--bucket", local_stack.name("EntriesBucket"),
            "--topics-table", local_stack.name("TopicsTable"),
            "--log-table", local_stack.name("LogTable"),
            "--cursors-table", local_stack.name("CursorsTable"),
            "--endpoint-url", local_stack.aws_endpoint_url,
            "--region", local_stack.region,
        ]
    )  # fmt: skip


@pytest.fixture
def namespace(job_args) -> str:
    """A fresh namespace of tenant ``public`` (created), so the listing holds only this
    test's topics."""
    name = f"cat{uuid.uuid4().hex[:8]}"
    ensure_namespaces(engine_of(job_args), f"public/{name}")
    return name


def _entry(payload: bytes) -> bytes:
    from magnetar_wire import EntryMessage, encode_entry

    msg = EntryMessage(payload=payload, sequence_id=0, publish_time_ms=1)
    return encode_entry([msg], producer_name="p")


def test_partitions_lists_every_persistent_partition_in_its_current_ledger(job_args, namespace):
    engine = engine_of(job_args)
    plain = TopicName.parse(f"persistent://public/{namespace}/plain")
    parted = TopicName.parse(f"persistent://public/{namespace}/parted")
    engine.topics.create(plain, 0)
    engine.topics.create(parted, 2)
    first = engine.producer.publish(plain, _entry(b"x")).ledger_id
    engine.topics.delete(plain, partitioned=False, force=True)
    engine.topics.create(plain, 0)  # re-created: a new ledger
    ledger = engine.topics.resolve(plain, create=False, fresh=True).ledger_id
    assert ledger > first
    parts = [engine.topics.resolve(parted.partition(i), create=False) for i in range(2)]

    listed = [
        (p.topic, p.partition_key, p.ledger_id)
        for p in partitions(job_args)
        if f"/{namespace}/" in p.topic
    ]
    assert listed == [
        *((str(r.topic), r.key, r.ledger_id) for r in parts),
        (str(plain), f"{plain}|{ledger}", ledger),
    ]
    assert [str(r.topic) for r in parts] == [f"{parted}-partition-0", f"{parted}-partition-1"]
    assert [p.topic for p in partitions(job_args, topic=str(parted))] == [
        f"{parted}-partition-0",
        f"{parted}-partition-1",
    ]
    assert [p.topic for p in partitions(job_args, topic=f"{parted}-partition-1")] == [
        f"{parted}-partition-1"
    ]
    assert partitions(job_args, topic=f"persistent://public/{namespace}/nope") == []
    assert f"{plain}|{first}" in dead_ledgers(job_args)
    assert f"{plain}|{ledger}" not in dead_ledgers(job_args)


def test_index_frame_reads_every_item_of_the_given_ledgers_in_executors(spark, job_args, namespace):
    engine = engine_of(job_args)
    topic = TopicName.parse(f"persistent://public/{namespace}/idx")
    entries = [_entry(b"m0"), _entry(b"m1" * 4000), _entry(b"m2")]  # 1: too big to inline
    results = [engine.producer.publish(topic, e) for e in entries]
    pk = engine.topics.resolve(topic, create=False).key  # the topic's ledger, clock-based
    assert {res.ledger_id for res in results} == {int(pk.rsplit("|", 1)[1])}

    rows = index_frame(spark, job_args, [pk]).orderBy("eid").collect()

    assert [(r.pk, r.eid, r.n, r.fence, r.pc) for r in rows] == [
        (pk, 0, 1, False, False),
        (pk, 1, 1, False, False),
        (pk, 2, 1, False, False),
    ]
    assert [(r.obj, r.d, r.len) for r in (rows[0], rows[2])] == [
        ("", entries[0], len(entries[0])),
        ("", entries[2], len(entries[2])),
    ]  # inline: the bytes in the item, no object
    assert rows[1].obj.startswith(f"entries/persistent/public/{namespace}/idx/")
    assert rows[1].d is None
    body = s3_client(job_args).get_object(Bucket=job_args.bucket, Key=rows[1].obj)["Body"].read()
    assert (rows[1].off, rows[1].len, body) == (0, len(entries[1]), entries[1])
    assert [r.eid for r in rows] == [res.entry_id for res in results]
    assert index_frame(spark, job_args, []).count() == 0
