"""``Consumer.close()`` (and the asyncio consumer's) sends the grouped acks and waits for
their answers within the client's ``operation_timeout_seconds``, abandons an in-flight
long-poll instead of awaiting it, and never loses an acknowledged message on a healthy
service; on a stalled one it returns within the timeout and logs what was lost."""

from __future__ import annotations

import asyncio
import logging
import threading
import time

import magnetar as pulsar
from magnetar import asyncio as pulsar_asyncio
from magnetar._consumer.acks import tracker as _acks

SHARED = pulsar.ConsumerType.Shared


def stream(client, stop):
    """Produce numbered messages until ``stop`` is set (its thread, started)."""
    producer = client.create_producer("t")

    def run():
        i = 0
        while not stop.is_set():
            producer.send_async(b"%d" % i, lambda r, m: None)
            i += 1
            if i % 100 == 0:
                producer.flush()
        producer.flush()
        producer.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def acked_come_back(client, acked):
    """The acknowledged messages a new consumer of subscription ``s`` receives."""
    consumer = client.subscribe("t", "s", consumer_type=SHARED)
    back = []
    while True:
        try:
            msg = consumer.receive(1000)
        except pulsar.Timeout:
            break
        consumer.acknowledge(msg)
        if msg.data() in acked:
            back.append(msg.data())
    consumer.close()
    return back


def lost_lines(caplog):
    return [r.getMessage() for r in caplog.records
            if r.levelno >= logging.ERROR and "lost" in r.getMessage()]  # fmt: skip


def test_a_consumer_acking_a_stream_closes_at_once_and_none_of_its_acks_come_back(svc, client):
    consumer = client.subscribe("t", "s", consumer_type=SHARED)
    stop = threading.Event()
    producing = stream(client, stop)
    acked = set()
    while len(acked) < 2000:
        msg = consumer.receive(5000)
        consumer.acknowledge(msg)  # grouped: goes within 100 ms, or with the close
        acked.add(msg.data())
    start = time.monotonic()
    consumer.close()
    took = time.monotonic() - start
    stop.set()
    producing.join()
    assert took < 2.0  # the operation timeout is 30 s
    assert acked_come_back(client, acked) == []


def test_close_abandons_a_long_poll_the_service_has_not_answered(svc, client):
    consumer = client.subscribe("t", "s", consumer_type=SHARED)
    svc.delay["receive"] = 8.0  # every receive stalls well past the close's bound
    polls = len(svc.recorded("receive"))
    assert svc.wait_for(lambda s: len(s.recorded("receive")) > polls)
    start = time.monotonic()
    consumer.close()
    assert time.monotonic() - start < 2.0
    svc.delay.clear()


def test_close_on_a_service_stalling_the_ack_returns_within_the_operation_timeout(svc, caplog):
    client = pulsar.Client(svc.url, operation_timeout_seconds=1)
    consumer = client.subscribe("t", "s", consumer_type=SHARED)
    producer = client.create_producer("t")
    producer.send(b"x")
    msg = consumer.receive(5000)
    svc.delay["ack"] = 4.0
    with caplog.at_level(logging.WARNING, logger="magnetar"):
        consumer.acknowledge(msg)
        start = time.monotonic()
        consumer.close()
        took = time.monotonic() - start
    svc.delay.clear()
    assert took < 1.5
    lost = lost_lines(caplog)
    assert len(lost) == 1 and str(msg.message_id()) in lost[0]
    client.close()


def test_close_while_the_stalled_ack_is_already_in_flight_logs_it_as_lost(svc, caplog):
    client = pulsar.Client(svc.url, operation_timeout_seconds=1)
    consumer = client.subscribe("t", "s", consumer_type=SHARED)
    producer = client.create_producer("t")
    producer.send(b"x")
    msg = consumer.receive(5000)
    svc.delay["ack"] = 4.0
    with caplog.at_level(logging.WARNING, logger="magnetar"):
        consumer.acknowledge(msg)
        assert svc.wait_for(lambda s: len(s.recorded("ack")) == 1)  # the group went out
        start = time.monotonic()
        consumer.close()
        took = time.monotonic() - start
        assert svc.wait_for(lambda s: lost_lines(caplog), timeout=3.0)  # now or just after
    svc.delay.clear()
    assert took < 1.5
    lost = lost_lines(caplog)
    assert len(lost) == 1 and str(msg.message_id()) in lost[0]
    client.close()


def test_the_asyncio_consumer_acking_a_stream_closes_at_once_and_its_acks_stay(svc, client):
    stop = threading.Event()
    acked: set[bytes] = set()

    async def consume():
        async_client = pulsar_asyncio.Client(svc.url)
        consumer = await async_client.subscribe("t", "s", consumer_type=SHARED)
        producing = stream(client, stop)
        while len(acked) < 1000:
            msg = await consumer.receive()
            await consumer.acknowledge(msg)
            acked.add(msg.data())
        start = time.monotonic()
        await consumer.close()
        took = time.monotonic() - start
        stop.set()
        producing.join()
        await async_client.close()
        return took

    assert asyncio.run(consume()) < 2.0
    assert acked_come_back(client, acked) == []


def test_an_ack_sent_as_the_close_began_and_failing_after_it_gave_up_is_logged_as_lost(
    svc, caplog, monkeypatch
):
    client = pulsar.Client(svc.url, operation_timeout_seconds=1)
    consumer = client.subscribe("t", "s", consumer_type=SHARED)
    producer = client.create_producer("t")
    producer.send(b"x")
    msg = consumer.receive(5000)
    svc.delay["ack"] = 3.0
    stop = _acks.AckTracker.stop

    def stop_once_the_group_went(tracker, timeout=None):
        # the group's timer fires just after the close began: its request (1 s timeout)
        # outlives the close's own second
        began = time.monotonic()
        assert svc.wait_for(lambda s: len(s.recorded("ack")) == 1)
        stop(tracker, None if timeout is None else max(timeout - (time.monotonic() - began), 0))

    monkeypatch.setattr(_acks.AckTracker, "stop", stop_once_the_group_went)
    with caplog.at_level(logging.WARNING, logger="magnetar"):
        consumer.acknowledge(msg)
        consumer.close()
        assert svc.wait_for(lambda s: lost_lines(caplog), timeout=3.0)
    svc.delay.clear()
    lost = lost_lines(caplog)
    assert len(lost) == 1 and str(msg.message_id()) in lost[0]
    client.close()
