"""Acks and nacks are never dropped silently (retried with backoff on retryable errors, kept
in order per sub-consumer), and acknowledged messages never come back (issue 11, defects 3
and 4) — on the engine over in-memory adapters."""

from __future__ import annotations

import logging
import time

import pytest

import magnetar as pulsar
from magnetar._consumer.acks import tracker as _acks
from magnetar_chaos.observer import observing
from magnetar_chaos.run import chaos_run
from magnetar_chaos.workload import Workload

SHARED = pulsar.ConsumerType.Shared
TOO_BUSY = "Subscription s is too busy; retry"


def produce(client, topic, payloads, **kw):
    producer = client.create_producer(topic, **kw)
    for p in payloads:
        producer.send_async(p, lambda r, m: None)
    producer.flush()
    producer.close()


def cursor(svc, topic="persistent/public/default/t", subscription="s"):
    return svc.stores.cursors.get(svc.key_of(topic), subscription)


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch):
    monkeypatch.setattr(_acks, "RETRY_BASE_SECONDS", 0.02)


# ------------------------------------------------------------------ defect 4: retries


def test_a_nack_answered_503_too_busy_is_sent_again_and_the_message_comes_back(svc, client):
    consumer = client.subscribe("t", "s", consumer_type=SHARED, negative_ack_redelivery_delay_ms=0)
    produce(client, "t", [b"x"])
    msg = consumer.receive(5000)
    svc.fail_next("nack", 503, "ServiceUnitNotReady", TOO_BUSY)
    svc.fail_next("nack", 503, "ServiceUnitNotReady", TOO_BUSY)
    consumer.negative_acknowledge(msg)
    again = consumer.receive(5000)
    assert (again.data(), again.redelivery_count()) == (b"x", 1)
    nacks = svc.recorded("nack")
    assert len(nacks) == 3 and nacks[0].body == nacks[1].body == nacks[2].body


def test_an_ack_answered_429_or_a_timeout_is_sent_again_until_the_cursor_has_it(svc, client):
    consumer = client.subscribe("t", "s", consumer_type=SHARED)
    produce(client, "t", [b"x", b"y"])
    msgs = [consumer.receive(5000) for _ in range(2)]
    svc.fail_next("ack", 429, "TooManyRequests", "slow down")
    svc.fail_next("ack", 504, "Timeout", "gateway timeout")
    for m in msgs:
        consumer.acknowledge(m)
    assert svc.wait_for(lambda s: len(s.recorded("ack")) == 3)
    assert svc.wait_for(lambda s: cursor(s).mark_delete == 1)


def test_a_retried_ack_keeps_its_place_before_a_later_nack_of_the_same_consumer(svc, client):
    consumer = client.subscribe("t", "s", consumer_type=SHARED, negative_ack_redelivery_delay_ms=0)
    produce(client, "t", [b"a", b"b"])
    a, b = consumer.receive(5000), consumer.receive(5000)
    svc.fail_next("ack", 503, "ServiceUnitNotReady", TOO_BUSY)
    consumer.acknowledge(a)
    assert svc.wait_for(lambda s: len(s.recorded("ack")) == 1)
    consumer.negative_acknowledge(b)  # a later group, while the ack waits for its retry
    assert svc.wait_for(lambda s: len(s.recorded("nack")) == 1)
    kinds = [r.kind for r in svc.requests if r.kind in ("ack", "nack")]
    assert kinds == ["ack", "ack", "nack"]


def test_a_refused_ack_is_not_retried_and_is_logged_with_what_was_lost(svc, client, caplog):
    consumer = client.subscribe("t", "s", consumer_type=SHARED)
    produce(client, "t", [b"x"])
    msg = consumer.receive(5000)
    svc.fail_next("ack", 400, "InvalidMessage", "bad ids")
    with caplog.at_level(logging.WARNING, logger="magnetar"):
        consumer.acknowledge(msg)
        assert svc.wait_for(lambda s: s.recorded("ack"))
        consumer.close()
    assert len(svc.recorded("ack")) == 1
    lost = [r for r in caplog.records if r.levelno >= logging.ERROR and "lost" in r.getMessage()]
    assert len(lost) == 1 and str(msg.message_id()) in lost[0].getMessage()


def test_acks_still_failing_when_the_consumer_closes_are_logged_as_lost(svc, caplog):
    client = pulsar.Client(svc.url, operation_timeout_seconds=1)
    consumer = client.subscribe("t", "s", consumer_type=SHARED)
    produce(client, "t", [b"x"])
    msg = consumer.receive(5000)
    for _ in range(100):
        svc.fail_next("ack", 503, "ServiceUnitNotReady", TOO_BUSY)
    with caplog.at_level(logging.WARNING, logger="magnetar"):
        consumer.acknowledge(msg)
        start = time.monotonic()
        consumer.close()
    assert time.monotonic() - start < 2.0
    lost = [r for r in caplog.records if r.levelno >= logging.ERROR and "lost" in r.getMessage()]
    assert len(lost) == 1 and str(msg.message_id()) in lost[0].getMessage()
    client.close()


# ------------------------------------------------------------------ defect 3: acked messages


def test_a_nack_of_one_batch_message_never_brings_back_its_neighbours_acked_later(svc, client):
    """The nack of a batch's 4th message waits until the consumer has settled the batch's
    other messages it holds: otherwise the entry goes back with them, another consumer gets
    them, and the first one acks them afterwards (acked messages delivered again)."""
    a = client.subscribe("t", "s", consumer_type=SHARED, negative_ack_redelivery_delay_ms=0,
                         receiver_queue_size=100)  # fmt: skip
    produce(client, "t", [b"%d" % i for i in range(10)], batching_enabled=True)
    held = [a.receive(5000) for _ in range(10)]
    b = client.subscribe("t", "s", consumer_type=SHARED, receiver_queue_size=100)
    for m in held[:3]:
        a.acknowledge(m)
    a.negative_acknowledge(held[3])
    assert svc.wait_for(lambda s: s.recorded("ack"))  # the acks of 0-2 went out meanwhile
    for m in held[4:]:
        a.acknowledge(m)
    assert svc.wait_for(lambda s: s.recorded("nack"))
    again = [first_of([a, b], timeout=10.0)]  # however long a loaded machine takes
    again += drain([a, b], quiet=0.5)  # what else came back with it: nothing
    assert [(m.data(), m.redelivery_count()) for m in again] == [(b"3", 1)]


def test_a_batch_nack_waits_at_most_the_hold_time_for_messages_the_application_keeps(
    svc, client, monkeypatch
):
    monkeypatch.setattr(_acks, "NACK_HOLD_MIN_SECONDS", 0.3)
    a = client.subscribe("t", "s", consumer_type=SHARED, negative_ack_redelivery_delay_ms=0)
    produce(client, "t", [b"0", b"1"], batching_enabled=True)
    first, _kept = a.receive(5000), a.receive(5000)
    nacked_at = time.monotonic()
    a.negative_acknowledge(first)  # the application keeps the other one for good
    assert svc.wait_for(lambda s: s.recorded("nack"))
    assert svc.recorded("nack")[0].at - nacked_at >= 0.3


def test_the_nacks_of_one_batch_go_in_one_request_with_the_whole_remaining_delay(svc, client):
    """Two requests would hurt: the first brings the entry back, the second sends the new
    copy away again (to another consumer, while this one acks it)."""
    a = client.subscribe("t", "s", consumer_type=SHARED, negative_ack_redelivery_delay_ms=0)
    produce(client, "t", [b"0", b"1", b"2"], batching_enabled=True)
    msgs = [a.receive(5000) for _ in range(3)]
    a.negative_acknowledge(msgs[0])
    a.negative_acknowledge(msgs[1])
    time.sleep(0.01)
    a.negative_acknowledge(msgs[2])
    assert svc.wait_for(lambda s: s.recorded("nack"))
    time.sleep(3 * _acks.ACK_GROUP_TIME)
    assert [r.body for r in svc.recorded("nack")] == [
        {
            "messageIds": [str(m.message_id()) for m in msgs],
            "delayMs": 0,
            "redeliveryCounts": {str(m.message_id()): 0 for m in msgs},
        }
    ]


def test_a_consumer_never_hands_out_a_batch_index_it_already_acked(svc, client, monkeypatch):
    monkeypatch.setattr(_acks, "NACK_HOLD_MIN_SECONDS", 0.0)  # the nack goes at once
    a = client.subscribe("t", "s", consumer_type=SHARED, negative_ack_redelivery_delay_ms=0)
    produce(client, "t", [b"0", b"1", b"2"], batching_enabled=True)
    msgs = [a.receive(5000) for _ in range(3)]
    a.negative_acknowledge(msgs[0])
    assert svc.wait_for(lambda s: s.recorded("nack"))  # the entry comes back with 0, 1 and 2
    assert svc.wait_for(lambda s: len(s.recorded("receive")) >= 3)
    time.sleep(0.2)
    a.acknowledge(msgs[1])
    a.acknowledge(msgs[2])
    again = a.receive(5000)
    assert (again.data(), again.redelivery_count()) == (b"0", 1)
    with pytest.raises(pulsar.Timeout):
        a.receive(300)


def first_of(consumers, timeout: float):
    """The first message any of the consumers receives within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        for c in consumers:
            try:
                return c.receive(20)
            except pulsar.Timeout:
                if time.monotonic() > deadline:
                    raise


def drain(consumers, quiet: float) -> list:
    """Every message the consumers receive until none comes for ``quiet`` seconds."""
    out: list = []
    last = time.monotonic()
    while time.monotonic() - last < quiet:
        for c in consumers:
            try:
                out.append(c.receive(20))
                last = time.monotonic()
            except pulsar.Timeout:
                pass
    return out


def test_under_stress_with_nacks_and_a_consumer_swap_no_acked_message_comes_back(svc, client):
    """4 batching producers, 4 Shared consumers (one swapped once a quarter is acked), 5 %
    nacks without delay, 4 partitions: the chaos harness's workload and model."""
    workload = Workload(messages=2000, partitions=4, producers=4, subscriptions=("Shared",),
                        consumers_per_subscription=4, nack_rate=0.05, nack_delay_ms=0,
                        seed=11)  # fmt: skip
    # fails on a hang (nothing sent, delivered, acked or nacked for stall_s), not on a slow
    # run: past deadline_s the drain takes what is left and the invariants check it all the
    # same (as tests/e2e/test_chaos_faults.py; a loaded machine only makes it slow)
    with observing(svc.gateway) as observer:
        report = chaos_run(client, workload, observer=observer, deadline_s=120, stall_s=75)
    broken = {k: v for k, v in report["invariants"].items() if not v["ok"]}
    assert broken == {} and not report["stalled"], report["invariants"]
    shared = report["counts"]["subscriptions"]["sub-shared"]
    assert (shared["distinct"], shared["after_ack_requested"]) == (2000, 0)
