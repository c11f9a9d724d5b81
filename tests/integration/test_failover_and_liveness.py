"""Failover subscriptions and consumer liveness on the emulator."""

from __future__ import annotations

import uuid

import pytest
from delivered import entry_ids, payloads

from magnetar_core.domain.errors import ConsumerBusy, ConsumerNotFound
from magnetar_core.domain.runtime import Runtime
from magnetar_core.engine import Engine
from magnetar_wire.names import TopicName


def test_partitions_go_to_consumers_by_name_round_the_table(engine, make_entry):
    base = TopicName.parse(f"persistent://public/default/fo-{uuid.uuid4().hex[:8]}")
    engine.topics.create(base, 3)
    subs = engine.subscriptions
    handles = {}
    for i in range(3):
        part = base.partition(i)
        engine.producer.publish(part, make_entry(f"p{i}".encode()))
        for name in ("b", "a"):  # subscribe order must not matter: names decide
            handles[(i, name)] = subs.subscribe(part, "fo", name, "Failover", earliest=True)

    got = {
        (i, name): payloads(subs.receive(base.partition(i), "fo", h.consumer_id, 10, 0))
        for (i, name), h in handles.items()
    }

    assert got == {
        (0, "a"): [b"p0"],
        (0, "b"): [],
        (1, "a"): [],
        (1, "b"): [b"p1"],
        (2, "a"): [b"p2"],
        (2, "b"): [],
    }


def test_the_first_subscriber_is_active_until_a_higher_priority_consumer_joins(
    engine, topic, make_entry
):
    subs = engine.subscriptions
    first = subs.subscribe(topic, "fo", "z-first", "Failover", earliest=True, priority_level=1)
    second = subs.subscribe(topic, "fo", "a-second", "Failover", earliest=True, priority_level=1)
    engine.producer.publish(topic, make_entry(b"m0"))
    assert subs.receive(topic, "fo", second.consumer_id, 10, 0) == []
    assert payloads(subs.receive(topic, "fo", first.consumer_id, 10, 0)) == [b"m0"]

    boss = subs.subscribe(topic, "fo", "boss", "Failover", earliest=True, priority_level=0)
    subs.close(topic, "fo", first.consumer_id)
    engine.producer.publish(topic, make_entry(b"m1"))
    subs.subscribe(topic, "fo", "late", "Failover", earliest=True, priority_level=2)

    assert payloads(subs.receive(topic, "fo", boss.consumer_id, 10, 0)) == [b"m0", b"m1"]
    stats = engine.admin.stats(topic, partitioned=False)["subscriptions"]["fo"]
    assert stats["activeConsumerName"] == "boss"


def test_a_failover_switch_loses_nothing(engine, topic, make_entry):
    subs = engine.subscriptions
    active = subs.subscribe(topic, "sw", "a", "Failover", earliest=True)
    standby = subs.subscribe(topic, "sw", "b", "Failover", earliest=True)
    for i in range(6):
        engine.producer.publish(topic, make_entry(f"m{i}".encode()))
    held = subs.receive(topic, "sw", active.consumer_id, 3, 0)
    subs.acknowledge(topic, "sw", active.consumer_id, entry_ids(held)[:1], cumulative=False)

    subs.close(topic, "sw", active.consumer_id)
    taken = subs.receive(topic, "sw", standby.consumer_id, 10, 0)
    subs.acknowledge(topic, "sw", standby.consumer_id, entry_ids(taken), cumulative=False)

    assert payloads(taken) == [b"m1", b"m2", b"m3", b"m4", b"m5"]
    assert [d.redelivery_count for d in taken] == [1, 1, 0, 0, 0]
    assert engine.admin.stats(topic, partitioned=False)["subscriptions"]["sw"]["msgBacklog"] == 0


def test_a_consumer_that_becomes_active_gets_what_the_old_one_still_held_first_and_in_order(
    engine, topic, make_entry
):
    subs = engine.subscriptions
    old = subs.subscribe(topic, "to", "old", "Failover", earliest=True, priority_level=1)
    for i in range(5):
        engine.producer.publish(topic, make_entry(f"m{i}".encode()))
    held = subs.receive(topic, "to", old.consumer_id, 3, 0)  # its application never saw them

    boss = subs.subscribe(topic, "to", "boss", "Failover", earliest=True, priority_level=0)
    taken = subs.receive(topic, "to", boss.consumer_id, 10, 0)
    subs.acknowledge(topic, "to", old.consumer_id, entry_ids(held)[:1], cumulative=False)
    subs.acknowledge(topic, "to", boss.consumer_id, entry_ids(taken)[1:], cumulative=False)

    assert payloads(held) == [b"m0", b"m1", b"m2"]
    assert payloads(taken) == [b"m0", b"m1", b"m2", b"m3", b"m4"]
    assert [d.redelivery_count for d in taken] == [1, 1, 1, 0, 0]
    assert subs.receive(topic, "to", old.consumer_id, 10, 0) == []  # standing by now
    assert engine.admin.stats(topic, partitioned=False)["subscriptions"]["to"]["msgBacklog"] == 0


def test_multi_topic_consumers_spread_non_partitioned_topics_by_hash(engine, make_entry):
    # Fixed topic names: the hash ring makes the assignment deterministic (random names
    # would leave every topic on one consumer now and then).
    subs = engine.subscriptions
    owners: dict[str, list[int]] = {}
    for n in range(16):
        topic = TopicName.parse(f"persistent://public/default/spread-fixed-{n}")
        engine.producer.publish(topic, make_entry(b"x"))
        sub = f"s-{uuid.uuid4().hex[:6]}"
        handles = {
            name: subs.subscribe(topic, sub, name, "Failover", earliest=True, spread=True)
            for name in ("alpha", "beta")
        }
        for name, h in handles.items():
            if subs.receive(topic, sub, h.consumer_id, 10, 0):
                owners.setdefault(name, []).append(n)
    assert sorted(n for ns in owners.values() for n in ns) == list(range(16))  # one owner each
    assert set(owners) == {"alpha", "beta"}  # and the topics are spread


def test_a_consumer_whose_lease_lapses_is_disconnected_and_its_messages_go_to_the_next(
    settings, topic, make_entry, engine_clients
):
    clock = {"now": 1_800_000_000_000}
    engine = Engine.build(
        settings, runtime=Runtime(now_ms=lambda: clock["now"]), clients=engine_clients
    )
    subs = engine.subscriptions
    dead = subs.subscribe(topic, "live", "dead", "Exclusive", earliest=True)
    engine.producer.publish(topic, make_entry(b"held"))
    subs.receive(topic, "live", dead.consumer_id, 10, 0)
    with pytest.raises(ConsumerBusy):
        subs.subscribe(topic, "live", "next", "Exclusive", earliest=True)

    clock["now"] += settings.consumer_lease_ms + 1
    successor = subs.subscribe(topic, "live", "next", "Exclusive", earliest=True)
    got = subs.receive(topic, "live", successor.consumer_id, 10, 0)

    assert payloads(got) == [b"held"] and [d.redelivery_count for d in got] == [1]
    with pytest.raises(ConsumerNotFound):
        subs.receive(topic, "live", dead.consumer_id, 10, 0)


def test_heartbeats_and_receives_keep_a_consumer_alive(settings, topic, engine_clients):
    clock = {"now": 1_800_000_000_000}
    engine = Engine.build(
        settings, runtime=Runtime(now_ms=lambda: clock["now"]), clients=engine_clients
    )
    subs = engine.subscriptions
    c = subs.subscribe(topic, "hb", "c", "Exclusive", earliest=True)
    step = settings.consumer_lease_ms // 2
    for _ in range(3):
        clock["now"] += step
        subs.heartbeat(topic, "hb", c.consumer_id)
    clock["now"] += step
    subs.receive(topic, "hb", c.consumer_id, 10, 0)  # an empty receive renews the lease too
    clock["now"] += step
    with pytest.raises(ConsumerBusy):
        subs.subscribe(topic, "hb", "other", "Exclusive", earliest=True)


def test_a_shared_consumer_killed_without_closing_has_its_messages_redelivered_to_the_others(
    settings, topic, make_entry, engine_clients
):
    clock = {"now": 1_800_000_000_000}
    engine = Engine.build(
        settings, runtime=Runtime(now_ms=lambda: clock["now"]), clients=engine_clients
    )
    subs = engine.subscriptions
    killed = subs.subscribe(topic, "sh", "killed", "Shared", earliest=True)
    alive = subs.subscribe(topic, "sh", "alive", "Shared", earliest=True)
    engine.producer.publish(topic, make_entry(b"held"))
    assert payloads(subs.receive(topic, "sh", killed.consumer_id, 10, 0)) == [b"held"]
    clock["now"] += settings.consumer_lease_ms // 2
    assert subs.receive(topic, "sh", alive.consumer_id, 10, 0) == []  # renews its lease

    clock["now"] += settings.consumer_lease_ms // 2 + 1  # the killed one's lease lapsed
    got = subs.receive(topic, "sh", alive.consumer_id, 10, 0)

    assert payloads(got) == [b"held"] and [d.redelivery_count for d in got] == [1]
    with pytest.raises(ConsumerNotFound):
        subs.receive(topic, "sh", killed.consumer_id, 10, 0)
