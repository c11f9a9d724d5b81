"""The expire job on the embedded stack: SDK produce/consume, then ``expire.main`` against the
emulator (``expire_support``): what a pass deletes and what it keeps. Each test works in its
own namespace and runs the job on that namespace only, so other tests' topics are never
touched (so do test_expire_policies.py and test_expire_runs.py)."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta

import pytest
import requests
from expire_support import (
    await_backlog,
    cursor_item,
    index_ids,
    log_key_of,
    objects_under,
    run_expire,
    stats_when,
)

import magnetar as pulsar
from magnetar_core.engine import Engine
from magnetar_core.settings import Settings
from magnetar_jobs import garbage
from magnetar_wire.names import TopicName

pytestmark = [pytest.mark.emulator, pytest.mark.usefixtures("spark")]


@pytest.fixture
def namespace(local_stack) -> str:
    name = f"public/exp{uuid.uuid4().hex[:8]}"
    local_stack.create_namespaces(name)
    return name


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
    await_backlog(local_stack, topic, "s", 0)  # the SDK sends its acks in groups, later
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

    # what the next run does first (expire.main: garbage.purge_due, the trash due by then;
    # test_acknowledged_entries_go... sees a run do it): called alone, not a whole Spark pass
    env = local_stack.environment
    garbage.purge_due(aws_clients.s3, bucket, int(later), aws_clients.dynamodb, env["LOG_TABLE"])
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
    await_backlog(local_stack, topic, "s", 0)  # the SDK sends its acks in groups, later
    assert run_expire(local_stack, namespace).entries_deleted == 3

    late = client.subscribe(topic, "late", initial_position=pulsar.InitialPosition.Earliest)
    got = late.receive(10_000)
    assert (got.data(), got.message_id().entry_id()) == (b"m3", 3)
    late.close()
    consumer.close()
