"""Dead letter policy in the subscribe body, and the client-side retry letter topic
(``enable_retry`` / ``reconsume_later``) against the engine on in-memory adapters."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest

import magnetar as pulsar

T = "persistent://public/default/t"
RETRY = "persistent/public/default/t-s-RETRY"
DLQ = "persistent/public/default/t-s-DLQ"


def subscribe_bodies(svc):
    return {r.path.split("/subscriptions/")[0][4:]: r.body for r in svc.recorded("subscribe")}


def produced(svc, topic_path):
    return [r.body.messages[0] for r in svc.recorded("produce") if f"/{topic_path}/" in r.path]


def test_a_dead_letter_policy_is_sent_in_the_subscribe_body(svc, client):
    client.subscribe("t", "s", consumer_type=pulsar.ConsumerType.Shared,
                     dead_letter_policy=pulsar.ConsumerDeadLetterPolicy(3, "dead", "audit"))  # fmt: skip
    client.subscribe("u", "s", dead_letter_policy=pulsar.ConsumerDeadLetterPolicy(1))
    assert [r.body["deadLetterPolicy"] for r in svc.recorded("subscribe")] == [
        {"maxRedeliverCount": 3, "deadLetterTopic": "persistent://public/default/dead",
         "initialSubscriptionName": "audit"},
        {"maxRedeliverCount": 1, "deadLetterTopic": None, "initialSubscriptionName": None},
    ]  # fmt: skip


def test_a_bad_dead_letter_policy_is_refused():
    with pytest.raises(ValueError, match="max_redeliver_count"):
        pulsar.ConsumerDeadLetterPolicy(0)
    with pytest.raises(ValueError, match="retry_letter_topic"):
        pulsar.ConsumerDeadLetterPolicy(1, retry_letter_topic=5)


def test_enable_retry_subscribes_to_the_retry_topic_with_an_explicit_dead_letter_topic(svc, client):
    consumer = client.subscribe("t", "s", consumer_type=pulsar.ConsumerType.Shared,
                                enable_retry=True)  # fmt: skip
    bodies = subscribe_bodies(svc)
    assert sorted(bodies) == ["persistent/public/default/t", RETRY]
    assert {b["deadLetterPolicy"]["deadLetterTopic"] for b in bodies.values()} == {
        "persistent://public/default/t-s-DLQ"
    }
    assert {b["deadLetterPolicy"]["maxRedeliverCount"] for b in bodies.values()} == {16}
    assert consumer.topic() == T


def test_reconsume_later_publishes_a_copy_with_the_retry_properties_then_acks(svc, client):
    consumer = client.subscribe("t", "s", consumer_type=pulsar.ConsumerType.Shared,
                                enable_retry=True)  # fmt: skip
    client.create_producer("t").send(b"x", properties={"a": "1"}, partition_key="k",
                                     event_timestamp=1234)  # fmt: skip
    original = consumer.receive(5000)
    before = int(time.time() * 1000)
    consumer.reconsume_later(original, timedelta(seconds=2), {"why": "busy"})

    copy = produced(svc, RETRY)
    assert len(copy) == 1 and copy[0].payload == b"x" and copy[0].key == "k"
    assert copy[0].properties == {"a": "1", "why": "busy", "REAL_TOPIC": T,
                                  "ORIGIN_MESSAGE_ID": "1:0:-1:-1", "RECONSUMETIMES": "1",
                                  "DELAY_TIME": "2000"}  # fmt: skip
    assert copy[0].event_time_ms == 1234
    assert before + 2000 <= copy[0].deliver_at_ms <= int(time.time() * 1000) + 2000
    assert svc.wait_for(lambda s: s.recorded("ack"))
    assert [r.body["messageIds"] for r in svc.recorded("ack")] == [["1:0:-1:-1"]]
    assert f"/{'persistent/public/default/t'}/subscriptions" in svc.recorded("ack")[0].path

    again = consumer.receive(5000)
    # held by the service's delay timer until its tick (default mode: up to a tick early)
    assert int(time.time() * 1000) >= copy[0].deliver_at_ms - 1000
    assert (again.topic_name(), again.data()) == (f"persistent://{RETRY[11:]}", b"x")
    consumer.reconsume_later(again, 500)
    second = produced(svc, RETRY)[1]
    assert second.properties["RECONSUMETIMES"] == "2"
    assert second.properties["DELAY_TIME"] == "500"
    assert (second.properties["REAL_TOPIC"], second.properties["ORIGIN_MESSAGE_ID"]) == (
        T, "1:0:-1:-1",
    )  # fmt: skip
    consumer.close()


def test_past_the_maximum_the_copy_goes_to_the_dead_letter_topic_and_its_initial_subscription(
    svc, client
):
    policy = pulsar.ConsumerDeadLetterPolicy(2, initial_subscription_name="audit")
    consumer = client.subscribe("t", "s", consumer_type=pulsar.ConsumerType.Shared,
                                enable_retry=True, dead_letter_policy=policy)  # fmt: skip
    client.create_producer("t").send(b"x")
    msg = consumer.receive(5000)
    for _ in range(3):
        consumer.reconsume_later(msg, 0)
        if not produced(svc, DLQ):
            msg = consumer.receive(5000)

    assert [m.properties["RECONSUMETIMES"] for m in produced(svc, RETRY)] == ["1", "2"]
    assert [m.deliver_at_ms for m in produced(svc, RETRY)] == [0, 0]  # no delay: at once
    dead = produced(svc, DLQ)
    assert len(dead) == 1 and dead[0].payload == b"x" and dead[0].deliver_at_ms == 0
    assert dead[0].properties["RECONSUMETIMES"] == "3"
    assert dead[0].properties["ORIGIN_MESSAGE_ID"] == "1:0:-1:-1"
    audit = [r for r in svc.recorded("subscribe") if f"/{DLQ}/subscriptions/audit/" in r.path]
    assert [r.body["initialPosition"] for r in audit] == ["Earliest"]
    kinds = [r.kind for r in svc.requests if r.kind in ("produce", "close") and DLQ in r.path]
    assert kinds == ["close", "produce"]  # the subscription exists before the first publish
    consumer.close()


def test_a_timed_out_publish_is_sent_again_with_the_same_producer_and_sequence_id(svc, client):
    consumer = client.subscribe("t", "s", consumer_name="worker", enable_retry=True,
                                consumer_type=pulsar.ConsumerType.Shared)  # fmt: skip
    client.create_producer("t").send(b"x")
    msg = consumer.receive(5000)
    svc.fail_next("produce", 504, "Timeout")
    consumer.reconsume_later(msg, 0)
    consumer.reconsume_later(consumer.receive(5000), 0)

    attempts = [r.body for r in svc.recorded("produce") if RETRY in r.path]
    assert [(b.producer_name, b.messages[0].sequence_id) for b in attempts] == [
        (attempts[0].producer_name, 1)
    ] * 2 + [(attempts[0].producer_name, 2)]
    assert attempts[0].producer_name.startswith("s-worker-")
    assert attempts[0].producer_name.endswith("-RETRY")
    consumer.close()
    released = [r.path for r in svc.recorded("release") if RETRY in r.path]
    assert released == [f"/v1/{RETRY}/producers/{attempts[0].producer_name}"]


def test_reconsume_later_needs_enable_retry_and_checks_its_arguments(svc, client):
    plain = client.subscribe("t", "plain")
    retry = client.subscribe("t", "s", enable_retry=True, consumer_type=pulsar.ConsumerType.Shared)
    client.create_producer("t").send(b"x")
    msg = retry.receive(5000)
    with pytest.raises(pulsar.InvalidConfiguration, match="enable_retry"):
        plain.reconsume_later(msg, 0)
    with pytest.raises(ValueError, match="delay"):
        retry.reconsume_later(msg, "soon")
    with pytest.raises(ValueError, match="negative"):
        retry.reconsume_later(msg, timedelta(seconds=-1))
    with pytest.raises(ValueError, match="Message"):
        retry.reconsume_later(msg.message_id(), 0)
    with pytest.raises(ValueError, match="properties"):
        retry.reconsume_later(msg, 0, properties=["a"])
    assert produced(svc, RETRY) == []
    with pytest.raises(pulsar.OperationNotSupported, match="regex"):
        import re

        client.subscribe(re.compile("persistent://public/default/t.*"), "r", enable_retry=True)


def test_an_initial_subscription_that_exists_with_another_type_is_left_alone(svc, client):
    audit = client.subscribe(f"persistent://{DLQ[11:]}", "audit")  # Exclusive, connected
    policy = pulsar.ConsumerDeadLetterPolicy(1, initial_subscription_name="audit")
    consumer = client.subscribe("t", "s", consumer_type=pulsar.ConsumerType.Shared,
                                enable_retry=True, dead_letter_policy=policy)  # fmt: skip
    client.create_producer("t").send(b"x")
    consumer.reconsume_later(consumer.receive(5000), 0)
    consumer.reconsume_later(consumer.receive(5000), 0)
    assert [m.payload for m in produced(svc, DLQ)] == [b"x"]
    assert audit.receive(5000).data() == b"x"
    consumer.close()
