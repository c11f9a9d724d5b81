"""An idle SDK consumer waits on the notification channel (issue 16): after two empty
long-polls it watches its partition and makes no HTTP request while nothing is produced;
a produce wakes it and it receives the message; a consumer told of no channel long-polls as
before. Long-polls are shortened to 200 ms so the consumer goes idle quickly."""

from __future__ import annotations

import logging
import socket
import threading
import time
import uuid

import pytest
import requests

import magnetar as pulsar
from magnetar._consumer import polling as _polling
from magnetar._transport import notify as _notify
from magnetar._transport.notify import Channel

QUIET_S = 1.0
"""The idle window counted (a measurement: nothing to await)."""


@pytest.fixture
def short_polls(monkeypatch):
    monkeypatch.setattr(_polling, "RECEIVE_WAIT_MS", 200)


def requests_on(local_stack, topic: str) -> list:
    """A list the gateway appends each answered request on ``topic`` to (from now on)."""
    seen: list = []

    def observe(match, status):
        if match.path_parameters.get("topic") == topic:
            seen.append((match.route.method, match.route.path, status))

    local_stack.gateway.observers.append(observe)
    return seen


def await_sleeping(consumer, topic: str, timeout_s: float = 10.0) -> None:
    core = consumer._core
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if core.subs[0].idle.asleep:
            return
        threading.Event().wait(0.02)
    raise AssertionError("the consumer never went to sleep on the channel")


def test_an_idle_consumer_makes_no_request_and_a_produce_wakes_it(local_stack, client, short_polls):
    name = f"idle-{uuid.uuid4().hex[:8]}"
    topic = f"persistent://public/default/{name}"
    consumer = client.subscribe(topic, "s", consumer_type=pulsar.ConsumerType.Shared)
    producer = client.create_producer(topic)
    await_sleeping(consumer, topic)
    seen = requests_on(local_stack, name)
    threading.Event().wait(QUIET_S)
    assert seen == []
    idle = consumer._core.subs[0].idle  # asleep until a notice or the keepalive (540 s):
    assert idle.asleep and idle.recheck_s is None  # no recheck asked, nothing is due
    assert consumer._core.channel.notices == 0
    producer.send(b"wake up")
    message = consumer.receive(timeout_millis=5000)
    assert message.data() == b"wake up"
    assert consumer._core.channel.notices == 1  # the produce's notice woke it
    consumer.acknowledge(message)


def test_a_consumer_whose_channel_cannot_be_reached_long_polls_as_before(client, short_polls):
    topic = f"persistent://public/default/nochannel-{uuid.uuid4().hex[:8]}"
    consumer = client.subscribe(topic, "s", consumer_type=pulsar.ConsumerType.Shared)
    with socket.socket() as closed:  # a free port nothing listens on
        closed.bind(("127.0.0.1", 0))
        dead = f"ws://127.0.0.1:{closed.getsockname()[1]}/ws"
    consumer._core.channel = Channel(dead, lambda: {}, logging.getLogger("test"))
    sub = consumer._core.subs[0]
    deadline = time.monotonic() + 10
    while sub.idle.empty < _notify.IDLE_POLLS and time.monotonic() < deadline:
        threading.Event().wait(0.02)
    client.create_producer(topic).send(b"still here")
    assert consumer.receive(timeout_millis=5000).data() == b"still here"
    assert not sub.idle.watched and consumer._core.channel.notices == 0


def test_a_closed_consumers_entries_wake_a_sleeping_one(local_stack, client, short_polls):
    topic = f"persistent://public/default/handover-{uuid.uuid4().hex[:8]}"
    other = pulsar.Client(local_stack.url)
    try:
        holder = other.subscribe(topic, "s", consumer_type=pulsar.ConsumerType.Shared)
        other.create_producer(topic).send(b"handed over")
        assert holder.receive(timeout_millis=5000).data() == b"handed over"  # not acknowledged
        sleeper = client.subscribe(topic, "s", consumer_type=pulsar.ConsumerType.Shared)
        await_sleeping(sleeper, topic)
        holder.close()  # its message goes back, without a commit
        assert sleeper.receive(timeout_millis=3000).data() == b"handed over"
    finally:
        other.close()


def test_an_admin_cursor_reset_wakes_a_sleeping_consumer(local_stack, client, short_polls):
    name = f"reset-{uuid.uuid4().hex[:8]}"
    topic = f"persistent://public/default/{name}"
    client.create_producer(topic).send(b"before")
    consumer = client.subscribe(topic, "s", consumer_type=pulsar.ConsumerType.Shared)  # Latest
    await_sleeping(consumer, topic)
    path = f"/admin/v2/persistent/public/default/{name}/subscription/s/resetcursor/0"
    assert requests.post(local_stack.url + path, timeout=10).status_code == 204
    assert consumer.receive(timeout_millis=3000).data() == b"before"
