"""The expire job under a namespace's policies, on the embedded stack (``expire_support``): a
message TTL moves cursors past expired messages, retention keeps acknowledged ones, and
deduplication keeps knowing producers whose entries expired. Each test has its own namespace."""

from __future__ import annotations

import time
import uuid

import pytest
import requests
from expire_support import index_ids, log_key_of, run_expire

import magnetar as pulsar
from magnetar_core.engine import Engine
from magnetar_core.settings import Settings
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.names import TopicName

pytestmark = [pytest.mark.emulator, pytest.mark.usefixtures("spark")]


@pytest.fixture
def namespace(local_stack) -> str:
    name = f"public/exp{uuid.uuid4().hex[:8]}"
    local_stack.create_namespaces(name)
    return name


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
