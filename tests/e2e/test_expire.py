"""The expire job on the embedded stack: SDK produce/consume, then ``expire.main`` against the
emulator. Each test works in its own namespace and runs the job on that namespace only, so
other tests' topics are never touched."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta

import expire
import pytest
import requests

import magnetar as pulsar
from magnetar_bench.aws_recorder import Recorder, RecordingProxy
from magnetar_core.engine import Engine
from magnetar_core.settings import Settings
from magnetar_jobs.common import parse_args, spark_session
from magnetar_jobs.expire_extract import extract_incremental
from magnetar_jobs.expire_incremental import WindowArgs
from magnetar_jobs.expire_load import LoadOptions, load_ledgers
from magnetar_jobs.expire_transform import ExpireParams, transform
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.names import TopicName

pytestmark = [pytest.mark.emulator, pytest.mark.usefixtures("spark")]


@pytest.fixture
def namespace(local_stack) -> str:
    name = f"public/exp{uuid.uuid4().hex[:8]}"
    local_stack.create_namespaces(name)
    return name


def run_expire(local_stack, namespace: str, *extra: str, endpoint_url: str | None = None):
    """One expiry pass over ``namespace`` on the stack's tables and bucket."""
    env = local_stack.environment
    argv = ["--bucket", env["ENTRIES_BUCKET"], "--topics-table", env["TOPICS_TABLE"]]
    argv += ["--log-table", env["LOG_TABLE"], "--cursors-table", env["CURSORS_TABLE"]]
    argv += ["--endpoint-url", endpoint_url or local_stack.aws_endpoint_url]
    argv += ["--namespace", namespace]
    return expire.main([*argv, *extra])


def index_ids(aws_clients, local_stack, log_key: str) -> list[int]:
    items = aws_clients.dynamodb.query(
        TableName=local_stack.environment["LOG_TABLE"],
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": log_key}},
        ConsistentRead=True,
    )["Items"]
    return [int(i["eid"]["N"]) for i in items]


def objects_under(aws_clients, local_stack, prefix: str) -> set[str]:
    listing = aws_clients.s3.list_objects_v2(
        Bucket=local_stack.environment["ENTRIES_BUCKET"], Prefix=prefix
    )
    return {o["Key"] for o in listing.get("Contents", [])}


def cursor_item(aws_clients, local_stack, log_key: str, sub: str) -> dict | None:
    return aws_clients.dynamodb.get_item(
        TableName=local_stack.environment["CURSORS_TABLE"],
        Key={"pk": {"S": log_key}, "sub": {"S": sub}},
        ConsistentRead=True,
    ).get("Item")


def log_key_of(topic: str, msg_id) -> str:
    return f"{topic}|{msg_id.ledger_id()}"


def stats_when(local_stack, topic: str, settled, timeout_s: float = 10.0) -> dict:
    """The topic's stats through the HTTP admin route, once ``settled(stats)`` holds (the
    SDK sends acks grouped within 100 ms); the last answer when the deadline passes."""
    url = f"{local_stack.url}/admin/v2/{topic.replace('://', '/')}/stats"
    deadline = time.monotonic() + timeout_s
    while True:
        answer = requests.get(url, timeout=30)
        assert answer.status_code == 200, answer.text
        stats = answer.json()
        if settled(stats) or time.monotonic() > deadline:
            return stats
        time.sleep(0.05)  # as _await_backlog: another process's state, known by asking


@pytest.mark.slow
def test_acknowledged_entries_go_while_unacknowledged_and_delayed_ones_stay(
    client, local_stack, aws_clients, namespace
):
    topic = f"persistent://{namespace}/orders"
    consumer = client.subscribe(topic, "s", consumer_type=pulsar.ConsumerType.Shared)
    producer = client.create_producer(topic, batching_enabled=False)
    body = {i: f"m{i}".encode() * (2000 if i % 2 == 0 else 1) for i in range(9)}  # even: S3
    ids = [producer.send(body[i]) for i in range(6)]
    ids.append(producer.send(b"later", deliver_after=timedelta(hours=1)))  # inline
    ids += [producer.send(body[i]) for i in (7, 8)]
    received = [consumer.receive(10_000) for _ in range(8)]
    assert [m.data() for m in received] == [body[i] for i in (0, 1, 2, 3, 4, 5, 7, 8)]
    for m in received[:4] + received[6:]:
        consumer.acknowledge(m)
    key = log_key_of(topic, ids[0])
    prefix = f"entries/persistent/{namespace}/orders/"
    before = objects_under(aws_clients, local_stack, prefix)
    read = stats_when(local_stack, topic, lambda st: st["subscriptions"]["s"]["msgBacklog"] == 3)
    sub = read["subscriptions"]["s"]  # m4, m5 read and not acknowledged; "later" delayed
    assert (sub["msgBacklog"], sub["msgDelayed"], sub["msgBacklogNoDelayed"]) == (3, 1, 2)
    assert (sub["unackedMessages"], sub["msgOutCounter"]) == (2, 8)
    assert (read["msgInCounter"], read["entriesCount"]) == (9, 9)
    assert read["bytesInCounter"] == read["storageSize"] > 0
    consumer.close()  # what it read and did not acknowledge stays in the backlog
    closed = stats_when(local_stack, topic, lambda st: True)["subscriptions"]["s"]
    assert (closed["msgBacklog"], closed["unackedMessages"], closed["consumers"]) == (3, 0, [])

    summary = run_expire(local_stack, namespace, "--grace-ms", "0")

    assert (summary.partitions, summary.entries_deleted) == (1, 4)
    expired = stats_when(local_stack, topic, lambda st: True)
    assert (expired["msgInCounter"], expired["bytesInCounter"]) == (9, read["bytesInCounter"])
    assert expired["entriesCount"] == 5  # counters cumulative, storage what is left
    assert expired["storageSize"] == read["storageSize"] - summary.bytes_deleted
    assert expired["subscriptions"]["s"]["msgBacklog"] == 3
    assert index_ids(aws_clients, local_stack, key) == [4, 5, 6, 7, 8]
    assert summary.details["objects_trashed"] == 2  # m0, m2; m1, m3 were inline: no object
    assert len(before) == 4  # m0, m2, m4, m8
    assert objects_under(aws_clients, local_stack, prefix) == before  # in trash until due

    again = run_expire(local_stack, namespace)  # purges the due manifest; nothing new to do
    assert (again.entries_deleted, again.details["objects_purged"]) == (0, 2)
    assert len(objects_under(aws_clients, local_stack, prefix)) == 2  # m4, m8

    consumer = client.subscribe(topic, "s", consumer_type=pulsar.ConsumerType.Shared)
    again = [consumer.receive(10_000) for _ in range(2)]  # redelivered after the close
    assert [m.data() for m in again] == [body[4], body[5]]
    for m in again:
        consumer.acknowledge(m)
    next_id = producer.send(b"m9")
    assert next_id.entry_id() == 9
    after = consumer.receive(10_000)
    assert (after.data(), after.message_id().entry_id()) == (b"m9", 9)
    consumer.acknowledge(after)
    with pytest.raises(pulsar.Timeout):
        consumer.receive(1_000)  # the delayed message still waits
    consumer.close()
    end = stats_when(local_stack, topic, lambda st: st["subscriptions"]["s"]["msgBacklog"] == 1)
    assert (end["msgInCounter"], end["msgOutCounter"]) == (10, 11)  # 8 + 2 again + m9
    assert (end["subscriptions"]["s"]["msgBacklog"], end["entriesCount"]) == (1, 6)


@pytest.mark.slow
def test_a_live_reader_keeps_what_it_has_not_read_and_ids_are_never_reused(
    client, local_stack, aws_clients, namespace, engine_clients
):
    topic = f"persistent://{namespace}/feed"
    consumer = client.subscribe(topic, "s")
    producer = client.create_producer(topic, batching_enabled=False)
    ids = [producer.send(f"m{i}".encode()) for i in range(6)]
    for _ in range(6):
        consumer.acknowledge(consumer.receive(10_000))
    _await_backlog(local_stack, topic, "s", 0)  # the SDK sends its acks in groups, later
    # a reader on the engine, so exactly what it was handed out is known (the SDK prefetches)
    subs = Engine.build(
        Settings.from_env(local_stack.environment), clients=engine_clients
    ).subscriptions
    name = TopicName.parse(topic)
    handle = subs.subscribe(name, "reader", "r", "Exclusive", earliest=True, durable=False)
    first = subs.receive(name, "reader", handle.consumer_id, 2, 0)
    assert [e.entry_id for e in first] == [0, 1]
    key = log_key_of(topic, ids[0])

    assert run_expire(local_stack, namespace).entries_deleted == 2
    assert index_ids(aws_clients, local_stack, key) == [2, 3, 4, 5]
    rest = subs.receive(name, "reader", handle.consumer_id, 10, 0)
    assert [(e.entry_id, e.data is not None) for e in rest] == [(e, True) for e in (2, 3, 4, 5)]
    subs.close(name, "reader", handle.consumer_id)

    assert run_expire(local_stack, namespace).entries_deleted == 3
    assert index_ids(aws_clients, local_stack, key) == [5]  # the head stays
    sent = producer.send(b"m6")
    got = consumer.receive(10_000)
    assert (sent.entry_id(), got.data(), got.message_id().entry_id()) == (6, b"m6", 6)
    consumer.acknowledge(got)
    consumer.close()


@pytest.mark.slow
def test_dead_ledgers_orphans_lapsed_consumers_and_gone_readers_are_collected(
    client, local_stack, aws_clients, namespace, engine_clients
):
    gone, live = f"persistent://{namespace}/gone", f"persistent://{namespace}/live"
    producer = client.create_producer(gone, batching_enabled=False)
    gone_ids = [producer.send(b"x" * (5000 if i < 3 else 1)) for i in range(5)]  # 3 in S3
    producer.close()
    response = requests.delete(
        f"{local_stack.url}/admin/v2/persistent/{namespace}/gone", params={"force": "true"}
    )
    assert response.status_code == 204
    # consumers registered without an SDK behind them: nobody keeps their leases alive
    engine = Engine.build(Settings.from_env(local_stack.environment), clients=engine_clients)
    subs = engine.subscriptions
    subs.subscribe(TopicName.parse(live), "s", "c", "Shared", earliest=True)
    subs.subscribe(TopicName.parse(live), "r", "rc", "Exclusive", earliest=True, durable=False)
    live_key = log_key_of(live, client.create_producer(live).send(b"y"))
    bucket = local_stack.environment["ENTRIES_BUCKET"]
    orphan = f"entries/persistent/{namespace}/live/crashed-before-commit"
    aws_clients.s3.put_object(Bucket=bucket, Key=orphan, Body=b"z" * 10)
    gone_prefix = f"entries/persistent/{namespace}/gone/"
    assert len(objects_under(aws_clients, local_stack, gone_prefix)) == 3
    later = str(int(time.time() * 1000) + 5_000)

    summary = run_expire(
        local_stack,
        namespace,
        "--consumer-lease-ms", "1",
        "--orphan-age-ms", "0",
        "--grace-ms", "0",
        "--now-ms", later,
        "--full-pass", "true",
    )  # fmt: skip

    gone_key = log_key_of(gone, gone_ids[0])
    assert index_ids(aws_clients, local_stack, gone_key) == [5]  # the fence stays
    assert summary.details["dead_ledgers"] == 1
    assert summary.details["orphans_deleted"] == 1
    assert orphan not in objects_under(aws_clients, local_stack, f"entries/persistent/{namespace}/")
    assert (summary.details["consumers_expired"], summary.details["readers_deleted"]) == (2, 1)
    assert cursor_item(aws_clients, local_stack, live_key, "r") is None
    assert cursor_item(aws_clients, local_stack, live_key, "s")["nc"]["N"] == "0"
    assert index_ids(aws_clients, local_stack, live_key) == [0]  # "s" holds it, and the head

    run_expire(local_stack, namespace, "--now-ms", later)
    assert objects_under(aws_clients, local_stack, gone_prefix) == set()
    again = client.subscribe(live, "s", consumer_type=pulsar.ConsumerType.Shared)
    assert again.receive(10_000).data() == b"y"
    again.close()


def test_a_subscription_created_at_earliest_after_expiry_starts_at_the_first_kept_entry(
    client, local_stack, aws_clients, namespace
):
    topic = f"persistent://{namespace}/late"
    consumer = client.subscribe(topic, "s")
    producer = client.create_producer(topic, batching_enabled=False)
    for i in range(4):
        producer.send(f"m{i}".encode())
    for _ in range(4):
        consumer.acknowledge(consumer.receive(10_000))
    _await_backlog(local_stack, topic, "s", 0)  # the SDK sends its acks in groups, later
    assert run_expire(local_stack, namespace).entries_deleted == 3

    late = client.subscribe(topic, "late", initial_position=pulsar.InitialPosition.Earliest)
    got = late.receive(10_000)
    assert (got.data(), got.message_id().entry_id()) == (b"m3", 3)
    late.close()
    consumer.close()


def test_a_namespace_ttl_moves_the_cursor_past_expired_unacknowledged_messages(
    client, local_stack, aws_clients, namespace
):
    response = requests.post(
        f"{local_stack.url}/admin/v2/namespaces/{namespace}/messageTTL", json=60
    )
    assert response.status_code == 204
    topic = f"persistent://{namespace}/ttl"
    consumer = client.subscribe(topic, "s", consumer_type=pulsar.ConsumerType.Shared)
    producer = client.create_producer(topic, batching_enabled=False)
    ids = [producer.send(f"m{i}".encode()) for i in range(3)]
    assert [consumer.receive(10_000).data() for _ in range(3)] == [b"m0", b"m1", b"m2"]
    two_minutes_later = str(int(time.time() * 1000) + 120_000)

    summary = run_expire(
        local_stack, namespace, "--now-ms", two_minutes_later, "--consumer-lease-ms", "600000"
    )

    assert (summary.details["cursors_moved"], summary.entries_deleted) == (1, 2)
    assert index_ids(aws_clients, local_stack, log_key_of(topic, ids[0])) == [2]
    stats = requests.get(f"{local_stack.url}/admin/v2/{topic.replace('://', '/')}/stats").json()
    sub = stats["subscriptions"]["s"]
    assert (sub["msgBacklog"], sub["unackedMessages"], sub["markDeletePosition"]) == (
        0,
        0,
        f"{ids[0].ledger_id()}:2",
    )
    producer.send(b"m3")
    assert consumer.receive(10_000).data() == b"m3"  # no redelivery of what expired
    consumer.close()


@pytest.mark.slow
def test_namespace_retention_keeps_acknowledged_messages_until_they_are_older_than_it(
    client, local_stack, aws_clients, namespace
):
    body = {"retentionTimeInMinutes": 60, "retentionSizeInMB": -1}
    response = requests.post(
        f"{local_stack.url}/admin/v2/namespaces/{namespace}/retention", json=body
    )
    assert response.status_code == 204
    topic = f"persistent://{namespace}/kept"
    consumer = client.subscribe(topic, "s")
    producer = client.create_producer(topic, batching_enabled=False)
    ids = [producer.send(f"m{i}".encode()) for i in range(3)]
    for _ in range(3):
        consumer.acknowledge(consumer.receive(10_000))
    key = log_key_of(topic, ids[0])

    assert run_expire(local_stack, namespace).entries_deleted == 0
    assert index_ids(aws_clients, local_stack, key) == [0, 1, 2]
    two_hours_later = str(int(time.time() * 1000) + 7_200_000)
    later = run_expire(
        local_stack, namespace, "--now-ms", two_hours_later, "--consumer-lease-ms", "86400000"
    )
    assert later.entries_deleted == 2
    assert index_ids(aws_clients, local_stack, key) == [2]
    consumer.close()


def test_deduplication_still_knows_producers_whose_entries_expired(
    client, local_stack, aws_clients, namespace, engine_clients
):
    url = f"{local_stack.url}/admin/v2/namespaces/{namespace}/deduplication"
    assert requests.post(url, json=True).status_code == 204
    topic = f"persistent://{namespace}/dedup"
    consumer = client.subscribe(topic, "s")
    for name in ("p", "q"):
        producer = client.create_producer(topic, producer_name=name, batching_enabled=False)
        for seq in (0, 1):
            producer.send(b"x", sequence_id=seq)
        producer.close()
    for _ in range(4):
        consumer.acknowledge(consumer.receive(10_000))
    consumer.close()
    assert run_expire(local_stack, namespace).entries_deleted == 3  # p's entries are gone

    cold = Engine.build(
        Settings.from_env(local_stack.environment), clients=engine_clients
    )  # a new container
    resent = encode_entry(
        [EntryMessage(payload=b"x", sequence_id=1, publish_time_ms=int(time.time() * 1000))],
        producer_name="p",
    )
    assert cold.producer.publish(TopicName.parse(topic), resent).duplicate


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
    _await_backlog(local_stack, topic, "s", 1)  # the SDK sends its acks in groups, later
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


def _await_backlog(local_stack, topic: str, subscription: str, wanted: int) -> None:
    """Wait (at most 30 s) until the subscription's backlog, as the admin stats count it, is
    ``wanted``: the acknowledgements the consumer sent have reached its cursor."""
    url = f"{local_stack.url}/admin/v2/{topic.replace('://', '/')}/stats"
    deadline = time.monotonic() + 30
    backlog = None
    while time.monotonic() < deadline:
        backlog = requests.get(url, timeout=10).json()["subscriptions"][subscription]["msgBacklog"]
        if backlog == wanted:
            return
        time.sleep(0.05)  # another process's state: nothing to wait on but its answers
    raise AssertionError(f"backlog of {subscription} stayed {backlog}, not {wanted}")
