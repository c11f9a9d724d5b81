"""SDK / HTTP -> handlers -> emulator with the real timer workflow: delayed delivery and
server-side nack delays."""

from __future__ import annotations

import base64
import time
import uuid
from datetime import timedelta

import pytest
import requests

import magnetar as pulsar

pytestmark = pytest.mark.emulator


def topic() -> str:
    return f"persistent://public/default/delay-{uuid.uuid4().hex[:8]}"


def test_a_message_sent_with_deliver_after_2_s_arrives_on_a_shared_subscription_after_it(
    client,
):
    t = topic()
    consumer = client.subscribe(t, "s", consumer_type=pulsar.ConsumerType.Shared)
    producer = client.create_producer(t)
    sent = time.time()
    producer.send(b"x", deliver_after=timedelta(seconds=2))
    producer.send(b"y")

    first = consumer.receive(10_000)
    second = consumer.receive(10_000)
    came = time.time()

    assert (first.data(), second.data()) == (b"y", b"x")
    assert sent + 1.0 <= came <= sent + 2.0 + 1.5  # default mode: up to one tick early
    consumer.acknowledge(first)
    consumer.acknowledge(second)
    consumer.close()


def test_a_message_sent_with_deliver_after_reaches_an_exclusive_subscription_at_once(client):
    t = topic()
    consumer = client.subscribe(t, "s")
    producer = client.create_producer(t)
    sent = time.time()
    producer.send(b"x", deliver_after=timedelta(seconds=30))
    assert consumer.receive(10_000).data() == b"x"
    assert time.time() - sent < 5
    consumer.close()


def _path(local_stack, t: str, sub: str) -> str:
    return f"{local_stack.url}/v1/{t.replace('://', '/')}/subscriptions/{sub}/consumers"


def test_a_nack_with_delay_ms_over_http_redelivers_after_the_delay(local_stack):
    t = topic()
    base = _path(local_stack, t, "n")
    consumer = requests.post(
        base, json={"subscriptionType": "Shared", "initialPosition": "Earliest"}, timeout=30
    ).json()["consumerId"]
    produce = f"{local_stack.url}/v1/{t.replace('://', '/')}/messages"
    payload = base64.b64encode(b"again").decode()
    requests.post(produce, json={"messages": [{"payload": payload}]}, timeout=30).raise_for_status()
    got = requests.post(f"{base}/{consumer}/receive", json={"waitMs": 5000}, timeout=30).json()
    ids = [m["messageId"] for m in got["messages"]]

    bad = requests.post(f"{base}/{consumer}/nack", json={"messageIds": ids, "delayMs": -1})
    assert bad.status_code == 400 and bad.json()["error"] == "InvalidMessage"
    nacked = time.time()
    r = requests.post(f"{base}/{consumer}/nack", json={"messageIds": ids, "delayMs": 2000})
    assert r.json() == {"redelivered": 1}
    messages = []
    while not messages and time.time() < nacked + 10:
        messages = requests.post(
            f"{base}/{consumer}/receive", json={"waitMs": 5000}, timeout=30
        ).json()["messages"]
    came = time.time()

    assert [m["redeliveryCount"] for m in messages] == [1]
    assert nacked + 2.0 <= came <= nacked + 2.0 + 1.0 + 1.5
