"""A consumer that watched the notification channel (idle) holds its lease through its
connection; when ``magnetar local`` is killed no ``$disconnect`` comes for that connection,
so the restarted service disconnects the connections it finds recorded: the killed
consumer's in-flight messages come back one lease later (``CONSUMER_LEASE_MS``), not after
the hold's two hours.

Nothing here is waited out on a clock the claim does not need: the services run with a 5 s
lease (``magnetar local --consumer-lease-ms``; the template's is 60 s, which the test once
waited in real time: one lease is still more than a thousand times shorter than the hold),
and the SDK's long-polls wait 1 s instead of 5 s (``RECEIVE_WAIT_MS``), so its consumer
watches the channel after two empty ones (``IDLE_POLLS``), which the test awaits, instead
of 13 s of idling that assumed it. A long-poll shorter than the lease also keeps the
restarted service's consumer, idle while the killed one's messages wait, from lapsing
itself between two receives."""

from __future__ import annotations

import threading
import time

import pytest
from durable_service import Service

import magnetar as pulsar
from magnetar._consumer import polling

pytestmark = pytest.mark.emulator

TOPIC = "persistent://public/default/held-by-a-watch"
LEASE_S = 5.0  # the services' CONSUMER_LEASE_MS (the template's is 60 s)
OPTIONS = ("--consumer-lease-ms", str(int(LEASE_S * 1000)))
LONG_POLL_MS = 1000  # the SDK's long-poll wait here (5 s by default): shorter than the lease
WATCH_LIMIT_S = 30.0  # two empty long-polls and a watch, on a loaded machine


@pytest.mark.slow
def test_a_watching_consumer_killed_with_the_service_gives_its_messages_back_after_a_lease(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(polling, "RECEIVE_WAIT_MS", LONG_POLL_MS)
    home, data = tmp_path / "home", tmp_path / "data"
    service = Service(home, data, *OPTIONS)
    first = pulsar.Client(service.url, operation_timeout_seconds=5)
    idle = first.subscribe(TOPIC, "s", consumer_type=pulsar.ConsumerType.Shared)
    producer = first.create_producer(TOPIC, batching_enabled=False)
    _await_watching(idle)  # idle: the consumer watches the channel (its lease is held)
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


def _await_watching(consumer: pulsar.Consumer) -> None:
    """Until the consumer sleeps on the notification channel, its partition watched."""
    deadline = time.monotonic() + WATCH_LIMIT_S
    channel = consumer._core.channel
    assert channel is not None, "the service advertised no notification channel"
    while not channel.sleeping(TOPIC):
        assert time.monotonic() < deadline, f"the consumer did not watch in {WATCH_LIMIT_S} s"
        time.sleep(0.05)  # the SDK's poll thread: nothing to wait on but its state
