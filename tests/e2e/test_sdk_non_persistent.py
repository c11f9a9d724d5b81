"""SDK -> HTTP -> handlers -> emulator: non-persistent topics."""

from __future__ import annotations

import uuid

import pytest

import magnetar as pulsar

pytestmark = pytest.mark.emulator


def test_non_persistent_messages_reach_live_consumers_only(local_stack):
    client = pulsar.Client(local_stack.url)
    topic = f"non-persistent://public/default/np-{uuid.uuid4().hex[:8]}"
    producer = client.create_producer(topic)
    producer.send(b"before anyone listens")
    consumer = client.subscribe(topic, "live")
    producer.send(b"heard")

    msg = consumer.receive(5000)
    consumer.acknowledge(msg)

    assert (msg.data(), msg.topic_name()) == (b"heard", topic)
    with pytest.raises(pulsar.Timeout):
        consumer.receive(500)
    client.close()
