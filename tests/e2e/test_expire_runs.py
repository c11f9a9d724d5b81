"""Runs of the expire job on the embedded stack (``expire_support``): one that crashed after
deleting items loses nothing, and an incremental run reads only what became expirable since
the last one. Each test has its own namespace."""

from __future__ import annotations

import time
import uuid

import pytest
import requests
from expire_support import await_backlog, index_ids, log_key_of, objects_under, run_expire

from magnetar_bench.aws_recorder import Recorder, RecordingProxy
from magnetar_jobs.common import parse_args, spark_session
from magnetar_jobs.expire_extract import extract_incremental
from magnetar_jobs.expire_incremental import WindowArgs
from magnetar_jobs.expire_load import LoadOptions, load_ledgers
from magnetar_jobs.expire_transform import ExpireParams, transform

pytestmark = [pytest.mark.emulator, pytest.mark.usefixtures("spark")]


@pytest.fixture
def namespace(local_stack) -> str:
    name = f"public/exp{uuid.uuid4().hex[:8]}"
    local_stack.create_namespaces(name)
    return name


@pytest.mark.slow
def test_a_run_that_crashed_after_deleting_items_loses_nothing_and_the_full_pass_collects(
    client, local_stack, aws_clients, namespace
):
    topic = f"persistent://{namespace}/crash"
    consumer = client.subscribe(topic, "s")
    producer = client.create_producer(topic, batching_enabled=False)
    ids = [producer.send(b"x" * (5000 if i % 2 == 0 else 1)) for i in range(4)]  # 0, 2: S3
    for _ in range(3):
        consumer.acknowledge(consumer.receive(10_000))
    await_backlog(local_stack, topic, "s", 1)  # the SDK sends its acks in groups, later
    env = local_stack.environment
    args = parse_args(
        ["--bucket", env["ENTRIES_BUCKET"], "--topics-table", env["TOPICS_TABLE"],
         "--log-table", env["LOG_TABLE"], "--cursors-table", env["CURSORS_TABLE"],
         "--endpoint-url", local_stack.aws_endpoint_url]
    )  # fmt: skip
    spark = spark_session("expire")
    now = int(time.time() * 1000)
    data = extract_incremental(spark, args, None, namespace, WindowArgs(now, 600_000))
    plan = transform(data.index, data.cursors, data.policies, ExpireParams(now, 600_000))
    load_ledgers(spark, args, plan, LoadOptions(now, 600_000, 0))  # then the crash: no trash
    key = log_key_of(topic, ids[0])
    prefix = f"entries/persistent/{namespace}/crash/"
    assert index_ids(aws_clients, local_stack, key) == [3]
    assert len(objects_under(aws_clients, local_stack, prefix)) == 2  # 1 and 3 are inline

    again = run_expire(local_stack, namespace, "--orphan-age-ms", "0", "--now-ms", str(now + 1))
    assert (again.entries_deleted, again.details.get("orphans_deleted", 0)) == (0, 0)
    assert len(objects_under(aws_clients, local_stack, prefix)) == 2  # incremental: no listing
    last = consumer.receive(10_000)  # what was not acknowledged is still there
    assert (last.data(), last.message_id().entry_id()) == (b"x", 3)

    full = run_expire(
        local_stack, namespace, "--orphan-age-ms", "0", "--now-ms", str(now + 2),
        "--full-pass", "true",
    )  # fmt: skip
    assert (full.entries_deleted, full.details["orphans_deleted"]) == (0, 2)
    assert len(objects_under(aws_clients, local_stack, prefix)) == 0
    assert index_ids(aws_clients, local_stack, key) == [3]
    consumer.acknowledge(last)
    consumer.close()


def test_an_incremental_run_reads_only_what_became_expirable_since_the_last_one(
    client, local_stack, namespace
):
    body = {"retentionTimeInMinutes": 60, "retentionSizeInMB": -1}
    response = requests.post(
        f"{local_stack.url}/admin/v2/namespaces/{namespace}/retention", json=body
    )
    assert response.status_code == 204
    topic = f"persistent://{namespace}/retained"
    consumer = client.subscribe(topic, "s")
    producer = client.create_producer(topic, batching_enabled=False)
    for i in range(20):
        producer.send(f"m{i}".encode())
    for _ in range(20):
        consumer.acknowledge(consumer.receive(10_000))
    consumer.close()
    lease = ("--consumer-lease-ms", "86400000")

    full = run_expire(local_stack, namespace, *lease, "--full-pass", "true")
    with RecordingProxy(local_stack.aws_endpoint_url, Recorder()) as proxy:
        quiet = run_expire(local_stack, namespace, *lease, endpoint_url=proxy.url)
    assert (full.entries_deleted, full.details["index_items_read"]) == (0, 20)
    assert (quiet.entries_deleted, quiet.details["index_items_read"]) == (0, 1)
    assert quiet.details["full_pass"] == 0
    seen = proxy.recorder.snapshot()  # nothing new: one small Query of the log, no Scan
    log_table = local_stack.environment["LOG_TABLE"]
    assert seen["units"][f"{log_table} RRU"] == 1.0
    assert seen["requests"]["dynamodb.Scan"] == 1  # the topics table
    assert seen["requests"]["s3.ListObjectsV2"] == 1  # due trash manifests, not the entries

    two_hours_later = str(int(time.time() * 1000) + 7_200_000)
    aged = run_expire(local_stack, namespace, *lease, "--now-ms", two_hours_later)
    assert (aged.entries_deleted, aged.details["index_items_read"]) == (19, 20)  # the head stays
    after = run_expire(local_stack, namespace, *lease, "--now-ms", two_hours_later)
    assert (after.entries_deleted, after.details["index_items_read"]) == (0, 1)
