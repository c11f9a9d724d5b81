"""Producer access modes on the emulator: exclusive leases and epochs fenced through the log."""

from __future__ import annotations

import threading
import uuid

import pytest

from magnetar_core.domain.errors import ProducerBusy, ProducerFenced
from magnetar_core.domain.runtime import Runtime
from magnetar_core.engine import Engine


def _ids(engine, topic) -> list[int]:
    return [
        e.entry_id
        for e in engine.producer._log.read_from(
            engine.topics.resolve(topic, create=False).key, 0, 100
        )
        if e.count > 0
    ]


def test_a_second_exclusive_producer_is_fenced(engine, topic):
    first = engine.access.register(topic, "p1", "Exclusive")
    with pytest.raises(ProducerFenced):
        engine.access.register(topic, "p2", "Exclusive")
    with pytest.raises(ProducerFenced):
        engine.access.register(topic, "p3", "Shared")
    assert first.epoch == 1


def test_exclusive_with_fencing_takes_over_and_the_old_producer_can_no_longer_commit(
    new_engine, topic, make_entry
):
    old_side, new_side = new_engine(), new_engine()
    old = old_side.access.register(topic, "old", "Exclusive")
    old_side.producer.publish(topic, make_entry(b"before", producer="old"), epoch=old.epoch)

    new = new_side.access.register(topic, "new", "ExclusiveWithFencing")
    with pytest.raises(ProducerFenced):
        old_side.producer.publish(topic, make_entry(b"late", producer="old"), epoch=old.epoch)
    new_side.producer.publish(topic, make_entry(b"after", producer="new"), epoch=new.epoch)

    assert new.epoch == old.epoch + 1
    assert _ids(new_side, topic) == [1, 3]  # entries 0 and 2 are the two epoch markers


def test_wait_for_exclusive_gets_the_topic_when_the_holder_leaves(new_engine, topic):
    holder_side, waiter_side = new_engine(), new_engine()
    holder = holder_side.access.register(topic, "holder", "Exclusive")
    with pytest.raises(ProducerBusy):
        waiter_side.access.register(topic, "waiter", "WaitForExclusive", wait_ms=300)
    got: list = []
    waiting = threading.Event()

    def wait() -> None:
        waiting.set()
        got.append(waiter_side.access.register(topic, "waiter", "WaitForExclusive", wait_ms=15_000))

    thread = threading.Thread(target=wait)
    thread.start()
    waiting.wait()
    assert holder_side.access.release(topic, "holder", holder.epoch) is True
    thread.join(timeout=20)

    assert not thread.is_alive()
    assert got[0].epoch > holder.epoch


def test_shared_producers_both_send_and_unregistered_sends_wait_for_no_exclusive(
    engine, topic, make_entry
):
    a = engine.access.register(topic, "a", "Shared")
    b = engine.access.register(topic, "b", "Shared")
    engine.producer.publish(topic, make_entry(b"a", producer="a"), epoch=a.epoch)
    engine.producer.publish(topic, make_entry(b"b", producer="b"), epoch=b.epoch)
    engine.producer.publish(topic, make_entry(b"rest"))  # unregistered, no exclusive holder

    holder = engine.access.register(topic, "x", "Exclusive")
    with pytest.raises(ProducerFenced):
        engine.producer.publish(topic, make_entry(b"rest-2"))
    with pytest.raises(ProducerFenced):
        engine.producer.publish(topic, make_entry(b"a2", producer="a"), epoch=a.epoch)
    engine.access.release(topic, "x", holder.epoch)
    engine.producer.publish(topic, make_entry(b"rest-3"))

    assert len(_ids(engine, topic)) == 4


def test_a_lapsed_exclusive_lease_lets_another_producer_in_and_fences_the_dead_holder(
    settings, topic, make_entry, engine_clients
):
    clock = {"now": 1_800_000_000_000}
    runtime = Runtime(now_ms=lambda: clock["now"])
    dead_side = Engine.build(settings, runtime=runtime, clients=engine_clients)
    live_side = Engine.build(settings, runtime=runtime, clients=engine_clients)
    dead = dead_side.access.register(topic, "dead", "Exclusive")
    with pytest.raises(ProducerFenced):
        live_side.access.register(topic, "live", "Exclusive")

    clock["now"] += settings.producer_lease_ms + 1
    live = live_side.access.register(topic, "live", "Exclusive")

    with pytest.raises(ProducerFenced):
        dead_side.producer.publish(topic, make_entry(b"zombie", producer="dead"), epoch=dead.epoch)
    with pytest.raises(ProducerFenced):
        dead_side.access.heartbeat(topic, "dead", dead.epoch)
    assert live_side.access.heartbeat(topic, "live", live.epoch) == live.epoch


def test_registration_reports_the_namespace_max_message_size(engine):
    from magnetar_local.tenancy import ensure_namespaces
    from magnetar_wire.names import TopicName

    topic = TopicName.parse(f"persistent://public/size-{uuid.uuid4().hex[:8]}/t")
    ensure_namespaces(engine, f"{topic.tenant}/{topic.namespace}")
    engine.namespaces.set_max_message_size(topic.tenant, topic.namespace, 2048)
    assert engine.access.register(topic, None, "Shared").max_message_size_bytes == 2048
