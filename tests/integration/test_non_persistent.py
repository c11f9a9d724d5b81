"""Non-persistent topics on the emulator: live subscriptions only, never in S3, lost by design."""

from __future__ import annotations

import uuid

import pytest
from delivered import payloads

from magnetar_core.domain.errors import MessageTooBig
from magnetar_core.domain.runtime import Runtime
from magnetar_core.engine import Engine
from magnetar_wire.names import TopicName


@pytest.fixture
def np_topic() -> TopicName:
    return TopicName.parse(f"non-persistent://public/default/np-{uuid.uuid4().hex[:8]}")


def test_a_message_nobody_listens_to_is_lost_by_design(engine, np_topic, make_entry):
    engine.producer.publish(np_topic, make_entry(b"into the void"))
    late = engine.subscriptions.subscribe(np_topic, "late", None, "Exclusive", earliest=True)
    engine.producer.publish(np_topic, make_entry(b"heard"))

    assert payloads(engine.subscriptions.receive(np_topic, "late", late.consumer_id, 10, 0)) == [
        b"heard"
    ]


def test_every_subscription_with_a_live_consumer_gets_each_message(engine, np_topic, make_entry):
    subs = engine.subscriptions
    a = subs.subscribe(np_topic, "a", None, "Exclusive", earliest=True)
    b = subs.subscribe(np_topic, "b", None, "Exclusive", earliest=True)
    engine.producer.publish(np_topic, make_entry(b"m0", b"m1"))

    assert payloads(subs.receive(np_topic, "a", a.consumer_id, 10, 0)) == [b"m0", b"m1"]
    assert payloads(subs.receive(np_topic, "b", b.consumer_id, 10, 0)) == [b"m0", b"m1"]
    assert subs.receive(np_topic, "a", a.consumer_id, 10, 0) == []  # taken: no redelivery


def test_shared_consumers_of_a_non_persistent_subscription_split_the_messages(
    engine, np_topic, make_entry
):
    subs = engine.subscriptions
    one = subs.subscribe(np_topic, "sh", None, "Shared", earliest=True)
    two = subs.subscribe(np_topic, "sh", None, "Shared", earliest=True)
    for i in range(6):
        engine.producer.publish(np_topic, make_entry(f"m{i}".encode()))

    first = payloads(subs.receive(np_topic, "sh", one.consumer_id, 4, 0))
    second = payloads(subs.receive(np_topic, "sh", two.consumer_id, 10, 0))

    assert sorted(first + second) == [f"m{i}".encode() for i in range(6)]
    assert len(first) == 4


def test_a_subscription_whose_consumer_lapsed_gets_nothing(
    settings, np_topic, make_entry, engine_clients
):
    clock = {"now": 1_800_000_000_000}
    engine = Engine.build(
        settings, runtime=Runtime(now_ms=lambda: clock["now"]), clients=engine_clients
    )
    dead = engine.subscriptions.subscribe(np_topic, "dead", None, "Exclusive", earliest=True)
    clock["now"] += settings.consumer_lease_ms + 1
    engine.producer.publish(np_topic, make_entry(b"x"))
    alive = engine.subscriptions.subscribe(np_topic, "dead", None, "Exclusive", earliest=True)

    assert engine.subscriptions.receive(np_topic, "dead", alive.consumer_id, 10, 0) == []
    assert alive.consumer_id != dead.consumer_id


def test_non_persistent_entries_never_reach_s3_and_big_ones_are_refused(
    engine, np_topic, make_entry, aws_clients, local_stack
):
    engine.subscriptions.subscribe(np_topic, "s", None, "Exclusive", earliest=True)
    engine.producer.publish(np_topic, make_entry(b"small"))
    with pytest.raises(MessageTooBig):
        engine.producer.publish(np_topic, make_entry(b"x" * 400_000))

    listed = aws_clients.s3.list_objects_v2(
        Bucket=local_stack.name("EntriesBucket"), Prefix="entries/non-persistent/"
    )
    assert listed.get("KeyCount", 0) == 0
