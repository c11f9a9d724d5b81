"""SDK consumers across a segment compaction, with responses large enough that the service
hands some entries out by presigned URL instead of inline (the 3 MiB response budget)."""

from __future__ import annotations

import io
import time
import uuid
from contextlib import redirect_stdout

import pytest

import magnetar as pulsar
from magnetar_core.settings import Settings
from magnetar_local.launcher import job_argv

pytestmark = [pytest.mark.emulator, pytest.mark.usefixtures("spark")]


def _compact(stack, topic: str) -> str:
    """Run compact-segments on ``topic`` (its main(), on the test run's Spark) with the
    arguments the stack's launcher gives it; returns its output."""
    import compact_segments

    settings = Settings.from_env(stack.environment)
    options = {"topic": topic, "target-segment-bytes": str(2 * 1024 * 1024), "min-tail-bytes": "1"}
    with redirect_stdout(io.StringIO()) as output:
        compact_segments.main(job_argv(settings, "compact-segments", options))
    return output.getvalue()


LARGE = [bytes([65 + i % 26]) * 60_000 + str(i).encode() for i in range(80)]  # 4.8 MB
"""Above the 3 MiB response budget once compacted into one segment: some go by URL."""


@pytest.fixture(scope="module")
def compacted_large(local_stack, spark) -> str:
    """A topic holding ``LARGE`` (sent by the SDK, unbatched: an entry each), compacted into
    segments on the run's Spark; the two tests below read it, each on a subscription of its
    own. One topic and one job run for both (a run of the job and 4.8 MB through the
    emulator cost about 2.5 CPU-s): the SDK consumer's test and the raw receive's test read
    the same segment entries, and neither writes to the topic."""
    topic = f"persistent://public/default/segurl-{uuid.uuid4().hex[:8]}"
    client = pulsar.Client(local_stack.url)
    try:
        producer = client.create_producer(topic, batching_enabled=False)
        for payload in LARGE:
            producer.send(payload)
        producer.close()
    finally:
        client.close()
    assert '"entries_compacted": 80,' in _compact(local_stack, topic)
    return topic


def test_a_consumer_reads_large_compacted_entries_fetched_by_url(compacted_large, client):
    consumer = client.subscribe(
        compacted_large, "url-reader", initial_position=pulsar.InitialPosition.Earliest
    )
    got = []
    for _ in range(80):
        msg = consumer.receive(20_000)
        got.append(msg.data())
        consumer.acknowledge(msg)
    consumer.close()
    assert got == LARGE


def test_entries_of_a_segment_handed_out_by_url_name_their_byte_range(local_stack, compacted_large):
    import base64

    import requests

    from magnetar_wire import decode_entry

    base = f"{local_stack.url}/v1/{compacted_large.replace('://', '/')}"
    consumer = requests.post(
        f"{base}/subscriptions/raw/consumers", json={"initialPosition": "Earliest"}, timeout=30
    ).json()["consumerId"]
    got, by_url = [], 0
    while len(got) < len(LARGE):
        response = requests.post(
            f"{base}/subscriptions/raw/consumers/{consumer}/receive",
            json={"maxMessages": 1000, "waitMs": 0, "format": "entry"},
            timeout=60,
        ).json()
        for e in response["entries"]:
            if e["data"] is not None:
                data = base64.b64decode(e["data"])
            else:
                by_url += 1
                end = e["offset"] + e["length"] - 1
                data = requests.get(
                    e["url"], headers={"Range": f"bytes={e['offset']}-{end}"}, timeout=30
                ).content
            got.append(decode_entry(data).messages[0].payload)
    assert by_url > 0  # the response budget sent some by URL
    assert got == LARGE


def test_small_entries_inline_in_the_index_are_received_peeked_dead_lettered_and_moved(
    local_stack, client
):
    import requests

    from magnetar_jobs.catalog import query_index
    from magnetar_jobs.compact_segments_load import Segment, SegmentWriter
    from magnetar_jobs.compact_segments_transform import SegmentParams, plan_ledger

    topic = f"persistent://public/default/inline-{uuid.uuid4().hex[:8]}"
    s3, bucket = local_stack.client("s3"), local_stack.name("EntriesBucket")
    prefix = "entries/" + topic.replace("://", "/") + "/"
    consumer = client.subscribe(
        topic, "s", consumer_type=pulsar.ConsumerType.Shared,
        dead_letter_policy=pulsar.ConsumerDeadLetterPolicy(1),
        negative_ack_redelivery_delay_ms=0,
    )  # fmt: skip
    producer = client.create_producer(topic, batching_enabled=False)
    small, large = b"small and inline", b"L" * 10_000  # above the 4 KB index item
    ledger = producer.send(small).ledger_id()  # the topic's ledger: clock-based
    assert producer.send(large).ledger_id() == ledger
    producer.close()
    stored = s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])
    assert len(stored) == 1  # the large entry's object only: no S3 PUT for the small one

    path = topic.replace("://", "/")
    peeked = requests.get(
        f"{local_stack.url}/admin/v2/{path}/subscription/s/position/1", timeout=30
    )
    assert (peeked.status_code, peeked.content) == (200, small)

    seen = []
    while seen.count(small) < 2 or large not in seen:  # small: delivered, redelivered, dead
        msg = consumer.receive(10_000)
        seen.append(msg.data())
        if msg.data() == large:
            consumer.acknowledge(msg)
        else:
            consumer.negative_acknowledge(msg)
    dead = client.subscribe(
        f"{topic}-s-DLQ", "dead", initial_position=pulsar.InitialPosition.Earliest
    )
    assert dead.receive(10_000).data() == small  # moved by the consumer's next long-poll
    dead.close()
    consumer.close()

    # the segment job's own plan and writer, without Spark (the job itself runs on inline
    # entries in tests/spark/test_compact_segments_job.py): old enough from now on
    ddb, table = local_stack.client("dynamodb"), local_stack.name("LogTable")
    index = list(query_index(ddb, table, f"{topic}|{ledger}"))
    params = SegmentParams(min_tail_bytes=1, inline_before_ms=int(time.time() * 1000))
    (plan,) = plan_ledger(index, params)
    writer = SegmentWriter(s3, ddb, bucket, table)
    result = writer.compact(Segment.from_plan(plan), due_ms=int(time.time() * 1000) + 60_000)
    writer.close()
    assert (result.outcome, result.switched, result.switched_inline) == ("written", 2, 1)
    rows = [r for r in query_index(ddb, table, f"{topic}|{ledger}") if r[5] > 0]
    assert [(r[2] == plan["seg_key"], r[11]) for r in rows] == [(True, None)] * 2

    reader = client.subscribe(topic, "after", initial_position=pulsar.InitialPosition.Earliest)
    assert [reader.receive(10_000).data() for _ in range(2)] == [small, large]
    reader.close()
