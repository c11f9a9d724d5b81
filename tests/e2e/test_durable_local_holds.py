"""A consumer that watched the notification channel (idle) holds its lease through its
connection; when ``magnetar local`` is killed no ``$disconnect`` comes for that connection,
so the restarted service disconnects the connections it finds recorded: the killed
consumer's in-flight messages come back one lease later (``CONSUMER_LEASE_MS``), not after
the hold's two hours.

The services run with a 30 s lease (``magnetar local --consumer-lease-ms``) instead of the
template's 60 s, which the test waited out in real time: one lease is still four thousand
times shorter than the hold, and the SDK's consumers heartbeat every 20 s."""

from __future__ import annotations

import threading
import time

import pytest
from durable_service import Service

import magnetar as pulsar

pytestmark = pytest.mark.emulator

TOPIC = "persistent://public/default/held-by-a-watch"
LEASE_S = 30.0  # the services' CONSUMER_LEASE_MS (the template's is 60 s)
OPTIONS = ("--consumer-lease-ms", str(int(LEASE_S * 1000)))
IDLE_S = 13.0  # two empty long-polls (5 s each) and the SDK watches the channel


@pytest.mark.slow
def test_a_watching_consumer_killed_with_the_service_gives_its_messages_back_after_a_lease(
    tmp_path,
):
    home, data = tmp_path / "home", tmp_path / "data"
    service = Service(home, data, *OPTIONS)
    first = pulsar.Client(service.url, operation_timeout_seconds=5)
    idle = first.subscribe(TOPIC, "s", consumer_type=pulsar.ConsumerType.Shared)
    producer = first.create_producer(TOPIC, batching_enabled=False)
    with pytest.raises(pulsar.Timeout):
        idle.receive(int(IDLE_S * 1000))  # idle: the consumer watches (its lease is held)
    sent = {f"m{i}" for i in range(5)}
    for payload in sorted(sent):
        producer.send(payload.encode())
    assert idle.receive(5000).data().decode() in sent  # the rest wait in its receiver queue
    service.kill()
    threading.Thread(target=first.close, daemon=True).start()  # cannot reach a dead service
    service = Service(home, data, *OPTIONS)
    client = pulsar.Client(service.url)
    try:
        consumer = client.subscribe(TOPIC, "s", consumer_type=pulsar.ConsumerType.Shared)
        received: set[str] = set()
        deadline = time.monotonic() + LEASE_S + 30.0
        while received != sent and time.monotonic() < deadline:
            try:
                msg = consumer.receive(1000)
            except pulsar.Timeout:
                continue
            received.add(msg.data().decode())
            consumer.acknowledge(msg)
    finally:
        client.close()
        service.terminate()
    assert received == sent
