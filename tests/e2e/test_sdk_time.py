"""SDK -> HTTP -> handlers -> emulator (with the real timer workflow): nack delays and backoff
held by the service, the ack timeout, the dead letter topic, the retry letter topic, and a
consumer killed without closing. Conditions are awaited with receive timeouts, never slept.
"""

from __future__ import annotations

import time
import uuid
from datetime import timedelta

import pytest
import requests

import magnetar as pulsar
from magnetar._consumer import polling
from magnetar_local.gateway import Gateway

pytestmark = pytest.mark.emulator

SHARED = pulsar.ConsumerType.Shared
TICK_S = 1.0  # the stack's timer tick (DELAYED_DELIVERY_TICK_MS): strict buckets round up
RECHECK_S = 1.0  # a long poll begun before the nack sees the released bucket within a second
SLACK_S = 1.5  # request latency on a shared, busy test machine
LATE_S = TICK_S + RECHECK_S + SLACK_S  # the most a held message may come back after its delay


def topic() -> str:
    return f"persistent://public/default/time-{uuid.uuid4().hex[:8]}"


def drain(consumer, timeout_millis: int = 3000) -> list:
    """Every message until none arrives within ``timeout_millis``."""
    out = []
    while True:
        try:
            out.append(consumer.receive(timeout_millis))
        except pulsar.Timeout:
            return out


@pytest.mark.slow
def test_nacks_with_a_backoff_come_back_after_the_delay_table(client):
    t = topic()
    backoff = pulsar.MultiplierRedeliveryBackoff(1000, 2000, 2)  # 1, 2, then 2 s: the cap (not 4)
    consumer = client.subscribe(t, "s", consumer_type=SHARED,
                                negative_ack_redelivery_backoff=backoff)  # fmt: skip
    producer = client.create_producer(t)
    producer.send(b"warm-up")  # the first nack also loads the nack handler and timer path
    warm = consumer.receive(10_000)
    consumer.negative_acknowledge(warm)
    consumer.acknowledge(consumer.receive(15_000))
    producer.send(b"x")
    msg = consumer.receive(10_000)
    gaps, counts = [], [msg.redelivery_count()]
    for _ in range(3):
        nacked = time.monotonic()
        consumer.negative_acknowledge(msg)
        msg = consumer.receive(15_000)
        gaps.append(time.monotonic() - nacked)
        counts.append(msg.redelivery_count())
    consumer.acknowledge(msg)

    assert counts == [0, 1, 2, 3]
    for gap, delay in zip(gaps, [1.0, 2.0, 2.0], strict=True):
        assert delay <= gap <= delay + LATE_S, gaps  # never early: strict buckets
    consumer.close()


def test_a_nack_delay_is_held_by_the_service_for_all_nacked_messages_in_order(client):
    t = topic()
    consumer = client.subscribe(t, "s", consumer_type=SHARED,
                                negative_ack_redelivery_delay_ms=2000)  # fmt: skip
    producer = client.create_producer(t)
    for i in range(3):
        producer.send(b"%d" % i)
    first = [consumer.receive(10_000) for _ in range(3)]
    nacked = time.monotonic()
    for msg in reversed(first):
        consumer.negative_acknowledge(msg)
    again = [consumer.receive(15_000) for _ in range(3)]
    came = time.monotonic() - nacked

    assert [(m.data(), m.redelivery_count()) for m in again] == [(b"0", 1), (b"1", 1), (b"2", 1)]
    assert 2.0 <= came <= 2.0 + LATE_S
    for msg in again:
        consumer.acknowledge(msg)
    consumer.close()


@pytest.mark.slow
def test_an_unacked_message_comes_back_after_the_ack_timeout(client):
    t = topic()
    consumer = client.subscribe(t, "s", consumer_type=SHARED, unacked_messages_timeout_ms=10_000,
                                tick_duration_ms=500)  # fmt: skip
    client.create_producer(t).send(b"x")
    first = consumer.receive(10_000)
    handed = time.monotonic()
    again = consumer.receive(20_000)
    came = time.monotonic() - handed

    assert (again.data(), again.message_id(), again.redelivery_count()) == (
        b"x", first.message_id(), 1,
    )  # fmt: skip
    assert 10.0 <= came <= 10.0 + 0.5 + SLACK_S
    consumer.acknowledge(again)
    consumer.close()


@pytest.mark.slow
def test_a_message_nacked_past_the_policy_lands_in_the_dead_letter_topic_once_in_order(
    client, local_stack
):
    t = topic()
    policy = pulsar.ConsumerDeadLetterPolicy(2, initial_subscription_name="audit")
    consumer = client.subscribe(t, "s", consumer_type=SHARED, dead_letter_policy=policy,
                                negative_ack_redelivery_delay_ms=0)  # fmt: skip
    producer = client.create_producer(t)
    sent = [producer.send(b"m%d" % i, properties={"i": str(i)}, partition_key=f"k{i}")
            for i in range(3)]  # fmt: skip
    deliveries = []
    for _ in range(3 * 3):  # nack each delivery: the first and two redeliveries of each
        msg = consumer.receive(10_000)
        deliveries.append((msg.data(), msg.redelivery_count()))
        consumer.negative_acknowledge(msg)

    assert sorted(deliveries) == [(b"m%d" % i, n) for i in range(3) for n in range(3)]
    dlq = f"{t}-s-DLQ"
    subs_url = f"{local_stack.url}/admin/v2/{dlq.replace('://', '/')}/subscriptions"
    deadline = time.monotonic() + 15
    while "audit" not in (subs := requests.get(subs_url, timeout=30).json()):
        assert time.monotonic() < deadline, subs  # the dead letter producer creates it
        time.sleep(0.1)  # the consumer's threads move them: nothing to wait on
    dead_consumer = client.subscribe(dlq, "audit", consumer_type=SHARED)
    dead = [dead_consumer.receive(10_000) for _ in range(3)]
    # once: no more on the dead letter topic, none delivered again (a nack redelivers at once)
    assert drain(dead_consumer, 1000) == [] and drain(consumer, 1000) == []
    assert [(m.data(), m.partition_key()) for m in dead] == [
        (b"m%d" % i, f"k{i}") for i in range(3)
    ]
    assert [m.properties() for m in dead] == [
        {"i": str(i), "REAL_TOPIC": t, "ORIGIN_MESSAGE_ID": str(sent[i])} for i in range(3)
    ]
    for m in dead:
        dead_consumer.acknowledge(m)
    consumer.close()
    dead_consumer.close()


def test_reconsume_later_round_trip_counts_up_then_goes_to_the_dead_letter_topic(client):
    t = topic()
    consumer = client.subscribe(t, "s", consumer_type=SHARED, enable_retry=True,
                                dead_letter_policy=pulsar.ConsumerDeadLetterPolicy(2))  # fmt: skip
    dead_consumer = client.subscribe(f"{t}-s-DLQ", "check", consumer_type=SHARED,
                                     initial_position=pulsar.InitialPosition.Earliest)  # fmt: skip
    original_id = client.create_producer(t).send(b"x", properties={"a": "1"}, partition_key="k")
    msg = consumer.receive(10_000)
    seen = [(msg.topic_name(), msg.properties().get("RECONSUMETIMES"))]
    gaps = []
    for delay in (timedelta(seconds=1), 1000):
        asked = time.monotonic()
        consumer.reconsume_later(msg, delay, {"try": str(len(seen))})
        msg = consumer.receive(15_000)
        gaps.append(time.monotonic() - asked)
        seen.append((msg.topic_name(), msg.properties().get("RECONSUMETIMES")))
    consumer.reconsume_later(msg, 1000)  # the third: past max_redeliver_count

    retry = f"{t}-s-RETRY"
    assert seen == [(t, None), (retry, "1"), (retry, "2")]
    assert msg.properties() == {"a": "1", "try": "2", "REAL_TOPIC": t,
                                "ORIGIN_MESSAGE_ID": str(original_id), "RECONSUMETIMES": "2",
                                "DELAY_TIME": "1000"}  # fmt: skip
    assert all(gap <= 1.0 + LATE_S for gap in gaps), gaps
    dead = dead_consumer.receive(10_000)
    assert (dead.data(), dead.partition_key()) == (b"x", "k")
    assert dead.properties()["RECONSUMETIMES"] == "3"
    assert dead.properties()["ORIGIN_MESSAGE_ID"] == str(original_id)
    assert drain(consumer, 2000) == [] and drain(dead_consumer, 1000) == []  # acked, once
    consumer.close()
    dead_consumer.close()


@pytest.fixture
def short_lease_url(local_stack, monkeypatch):
    """A second gateway on the same emulator whose handler containers (loaded lazily, with
    this test's environment) use a 3 s consumer lease instead of the template's 60 s."""
    monkeypatch.setenv("CONSUMER_LEASE_MS", "3000")
    gateway = Gateway(local_stack.template.routes, local_stack.template.functions,
                      region=local_stack.region,
                      account_id=local_stack.template.account_id).start()  # fmt: skip
    yield gateway.url
    gateway.stop()


def kill(consumer) -> None:
    """Stop a consumer's threads as a crash would: no close, no DELETE, pending acks lost."""
    consumer._finalizer.detach()
    consumer._core.close(flush_acks=False, delete=False)


@pytest.mark.slow
def test_a_consumer_killed_without_closing_has_its_messages_redelivered_to_another(
    short_lease_url, monkeypatch
):
    # long-polls of 1 s (the SDK's are 5 s): shorter than the 3 s lease, so the survivor's
    # own lease holds between its receives and the lapse is seen at the next one; and only
    # long-polls: the notification channel is the stack's, whose rechecks count its 60 s lease
    monkeypatch.setattr(polling, "RECEIVE_WAIT_MS", 1000)
    monkeypatch.setattr(polling, "IDLE_POLLS", 1_000_000)
    client = pulsar.Client(short_lease_url)
    t = topic()
    victim = client.subscribe(t, "s", consumer_type=SHARED)
    producer = client.create_producer(t)
    for i in range(3):
        producer.send(b"%d" % i)
    held = [victim.receive(10_000) for _ in range(3)]
    survivor = client.subscribe(t, "s", consumer_type=SHARED)
    kill(victim)
    killed = time.monotonic()
    back = [survivor.receive(20_000) for _ in range(3)]
    came = time.monotonic() - killed

    assert [m.data() for m in held] == [b"0", b"1", b"2"]
    assert sorted((m.data(), m.redelivery_count()) for m in back) == [
        (b"0", 1), (b"1", 1), (b"2", 1),
    ]  # fmt: skip
    # not before the victim's lease (3 s from its last renewal, at most 1 s before the kill)
    # lapsed; how soon after is bounded by the receives' 20 s only (a saturated 2-core
    # machine once took 9 s where a quiet one takes 3-4)
    assert came >= 2.0
    for m in back:
        survivor.acknowledge(m)
    client.close()
