"""Subscriptions on the emulator: exclusive/shared consumers, receive, acks, nacks, close."""

from __future__ import annotations

import threading

import pytest
from delivered import entry_ids, payloads

from magnetar_core.domain.errors import (
    ConsumerBusy,
    ConsumerNotFound,
    CumulativeAcknowledgementNotAllowedError,
    InvalidMessage,
)


def test_a_second_exclusive_consumer_is_refused_with_consumer_busy(engine, topic):
    subs = engine.subscriptions
    subs.subscribe(topic, "ex", "c1", "Exclusive", earliest=True)
    with pytest.raises(ConsumerBusy):
        subs.subscribe(topic, "ex", "c2", "Exclusive", earliest=True)
    with pytest.raises(ConsumerBusy):
        subs.subscribe(topic, "ex", "c3", "Shared", earliest=True)


def test_latest_starts_after_the_last_entry_and_earliest_at_the_first(engine, topic, make_entry):
    engine.producer.publish(topic, make_entry(b"before"))
    subs = engine.subscriptions
    late = subs.subscribe(topic, "late", None, "Exclusive", earliest=False)
    early = subs.subscribe(topic, "early", None, "Exclusive", earliest=True)
    engine.producer.publish(topic, make_entry(b"after"))

    assert payloads(subs.receive(topic, "late", late.consumer_id, 10, 0)) == [b"after"]
    assert payloads(subs.receive(topic, "early", early.consumer_id, 10, 0)) == [
        b"before",
        b"after",
    ]


def test_shared_consumers_never_get_the_same_entry_while_it_is_in_flight(engine, topic, make_entry):
    subs = engine.subscriptions
    a = subs.subscribe(topic, "sh", "a", "Shared", earliest=True)
    b = subs.subscribe(topic, "sh", "b", "Shared", earliest=True)
    for i in range(6):
        engine.producer.publish(topic, make_entry(f"m{i}".encode()))

    got_a = subs.receive(topic, "sh", a.consumer_id, 4, 0)
    got_b = subs.receive(topic, "sh", b.consumer_id, 4, 0)

    assert payloads(got_a) == [b"m0", b"m1", b"m2", b"m3"]
    assert payloads(got_b) == [b"m4", b"m5"]


def test_nack_redelivers_with_redelivery_count_plus_one(engine, topic, make_entry):
    subs = engine.subscriptions
    c = subs.subscribe(topic, "n", "c", "Shared", earliest=True)
    engine.producer.publish(topic, make_entry(b"retry-me"))
    first = subs.receive(topic, "n", c.consumer_id, 10, 0)

    assert subs.negative_acknowledge(topic, "n", c.consumer_id, entry_ids(first)) == 1
    again = subs.receive(topic, "n", c.consumer_id, 10, 0)

    assert [d.redelivery_count for d in first] == [0]
    assert [d.redelivery_count for d in again] == [1]
    assert payloads(again) == [b"retry-me"]


def test_a_stale_nack_with_the_old_redelivery_count_does_not_redeliver_again(
    engine, topic, make_entry
):
    subs = engine.subscriptions
    c = subs.subscribe(topic, "stale", "c", "Shared", earliest=True)
    engine.producer.publish(topic, make_entry(b"once"))
    ids = entry_ids(subs.receive(topic, "stale", c.consumer_id, 10, 0))
    seen = {ids[0]: 0}
    assert (
        subs.negative_acknowledge(topic, "stale", c.consumer_id, ids, redelivery_counts=seen) == 1
    )
    again = subs.receive(topic, "stale", c.consumer_id, 10, 0)

    stale = subs.negative_acknowledge(topic, "stale", c.consumer_id, ids, redelivery_counts=seen)

    assert ([d.redelivery_count for d in again], stale) == ([1], 0)
    assert subs.receive(topic, "stale", c.consumer_id, 10, 0) == []
    current = {ids[0]: 1}
    assert (
        subs.negative_acknowledge(topic, "stale", c.consumer_id, ids, redelivery_counts=current)
        == 1
    )


def test_a_closed_consumers_unacked_messages_go_to_the_others(engine, topic, make_entry):
    subs = engine.subscriptions
    a = subs.subscribe(topic, "cl", "a", "Shared", earliest=True)
    b = subs.subscribe(topic, "cl", "b", "Shared", earliest=True)
    engine.producer.publish(topic, make_entry(b"x"))
    engine.producer.publish(topic, make_entry(b"y"))
    held = subs.receive(topic, "cl", a.consumer_id, 10, 0)
    assert payloads(held) == [b"x"]  # its fair share of two entries among two consumers

    assert subs.close(topic, "cl", a.consumer_id) == 1
    moved = subs.receive(topic, "cl", b.consumer_id, 10, 0)

    assert payloads(moved) == [b"x", b"y"]  # the closed one's first, then the rest
    assert [d.redelivery_count for d in moved] == [1, 0]
    with pytest.raises(ConsumerNotFound):
        subs.receive(topic, "cl", a.consumer_id, 10, 0)


def test_batch_index_acks_leave_only_unacked_messages_for_redelivery(engine, topic, make_entry):
    subs = engine.subscriptions
    c = subs.subscribe(topic, "bi", "c", "Exclusive", earliest=True)
    result = engine.producer.publish(topic, make_entry(b"a", b"b", b"c"))
    subs.receive(topic, "bi", c.consumer_id, 10, 0)

    subs.acknowledge(
        topic, "bi", c.consumer_id, [result.message_ids[0], result.message_ids[2]], cumulative=False
    )
    subs.close(topic, "bi", c.consumer_id)
    c2 = subs.subscribe(topic, "bi", "c2", "Exclusive", earliest=True)
    again = subs.receive(topic, "bi", c2.consumer_id, 10, 0)

    assert [d.batch_indexes for d in again] == [(1,)]
    assert payloads(again) == [b"b"]


def test_cumulative_ack_acks_everything_up_to_the_id_on_exclusive_only(engine, topic, make_entry):
    subs = engine.subscriptions
    ex = subs.subscribe(topic, "cum", "c", "Exclusive", earliest=True)
    sh = subs.subscribe(topic, "cum-shared", "s", "Shared", earliest=True)
    ids = [
        engine.producer.publish(topic, make_entry(f"{i}".encode())).message_ids[0] for i in range(4)
    ]
    subs.receive(topic, "cum", ex.consumer_id, 10, 0)
    subs.receive(topic, "cum-shared", sh.consumer_id, 10, 0)

    subs.acknowledge(topic, "cum", ex.consumer_id, [ids[2]], cumulative=True)
    with pytest.raises(CumulativeAcknowledgementNotAllowedError):
        subs.acknowledge(topic, "cum-shared", sh.consumer_id, [ids[2]], cumulative=True)

    stats = engine.admin.stats(topic, partitioned=False)["subscriptions"]
    assert stats["cum"]["msgBacklog"] == 1
    assert stats["cum"]["markDeletePosition"] == ids[2].rsplit(":", 2)[0]  # ledger:entry
    assert stats["cum-shared"]["msgBacklog"] == 4


def test_a_waiting_receive_returns_the_message_produced_meanwhile(
    engine, new_engine, topic, make_entry
):
    subs = engine.subscriptions
    c = subs.subscribe(topic, "lp", "c", "Exclusive", earliest=True)
    got: list = []
    started = threading.Event()

    def wait_for_message() -> None:
        started.set()
        got.extend(subs.receive(topic, "lp", c.consumer_id, 10, 10_000))

    waiter = threading.Thread(target=wait_for_message)
    waiter.start()
    started.wait()
    new_engine().producer.publish(topic, make_entry(b"late-arrival"))
    waiter.join(timeout=15)

    assert not waiter.is_alive()
    assert payloads(got) == [b"late-arrival"]


def test_bad_receive_and_ack_arguments_are_refused(engine, topic):
    subs = engine.subscriptions
    c = subs.subscribe(topic, "bad", "c", "Exclusive", earliest=True)
    with pytest.raises(InvalidMessage):
        subs.receive(topic, "bad", c.consumer_id, 0, 0)
    with pytest.raises(InvalidMessage):
        subs.acknowledge(topic, "bad", c.consumer_id, ["not-an-id"], cumulative=False)
    with pytest.raises(InvalidMessage):
        subs.subscribe(topic, "bad name!", None, "Shared", earliest=True)
