"""Shared is shared: a receive leases no more than brings its consumer up to an equal share
of what is dispatchable, or one round-robin turn (Pulsar's ``dispatcherMaxRoundRobinBatchSize``,
20 messages) when that is more, so the first long-poll to find a backlog cannot take all of it
(Pulsar's Shared dispatcher deals entries round-robin to consumers with permits) and a
consumer holding unacknowledged entries still takes a turn of what is there. The pure rules,
then the subscription service on memory adapters with 8 and more consumers."""

from __future__ import annotations

import random

import pytest
from grant_support import memory_engine

from magnetar_core.domain.cursor.dispatching import fair_share
from magnetar_core.domain.cursor.round_robin import ROUND_ROBIN_MESSAGES, round_robin_turn
from magnetar_core.domain.cursor.state import SHARED, ConsumerInfo, CursorState
from magnetar_core.engine import Engine
from magnetar_wire import EntryMessage, encode_entry, format_message_id
from magnetar_wire.names import TopicName

TOPIC = TopicName.parse("persistent://public/default/fair")


# -- the rule -----------------------------------------------------------------------------


def test_a_lone_consumer_takes_everything_available():
    assert fair_share(50, {}, 1, "a") == 50


def test_the_first_of_eight_consumers_takes_an_eighth_of_the_backlog():
    assert fair_share(80, {}, 8, "a") == 10


def test_a_consumer_takes_no_more_than_an_equal_split_among_those_below_their_share():
    # 29 in all among 4: 8 each; b is past it, so the 9 available split among 3
    assert fair_share(9, {"b": 20}, 4, "a") == 3


def test_a_consumer_takes_no_more_than_brings_it_up_to_an_equal_share_of_everything():
    # 40 available, 20 held by a: 60 in all, 15 each; a is past it and takes none, the
    # three below it split the 40 (14 each, at most), b's 14 stay within its 15
    assert fair_share(40, {"a": 20}, 4, "a") == 0
    assert fair_share(40, {"a": 20}, 4, "b") == 14
    assert fair_share(26, {"a": 20, "b": 14}, 4, "c") == 9


def test_a_consumer_holding_its_share_gets_nothing_more_until_it_acknowledges():
    assert fair_share(70, {"a": 10}, 8, "a") == 0
    assert fair_share(70, {}, 8, "a") == 9


def test_a_consumer_holding_nothing_gets_an_entry_when_one_is_available():
    assert fair_share(1, {"b": 0, "c": 40}, 3, "a") == 1


def test_nothing_available_leases_nothing():
    assert fair_share(0, {"b": 3}, 4, "a") == 0


def test_a_turn_is_twenty_single_message_entries_at_most():
    assert round_robin_turn([(i, 1) for i in range(50)]) == 20
    assert round_robin_turn([(i, 1) for i in range(7)]) == 7


def test_a_turn_of_batches_is_twenty_messages_over_the_average_batch_size():
    assert round_robin_turn([(i, 5) for i in range(50)]) == 4
    assert round_robin_turn([]) == 0


def test_batches_larger_than_a_turn_are_left_to_the_fair_share():
    assert round_robin_turn([(0, 50), (1, 50)]) == 0


def test_the_cursor_bounds_only_a_durable_shared_subscription():
    state = CursorState.new("s", SHARED, last_entry_id=-1, earliest=True)
    for cid in ("a", "b"):
        state.add_consumer(ConsumerInfo(cid, cid, 0, 0), SHARED)
    assert state.share_of("a", 10) == 5
    state.durable = False
    assert state.share_of("a", 10) is None


# -- the subscription service -------------------------------------------------------------


@pytest.fixture
def engine() -> Engine:
    return memory_engine()


def produce(engine: Engine, entries: int) -> None:
    for i in range(entries):
        message = EntryMessage(payload=b"m", sequence_id=i, publish_time_ms=1)
        engine.producer.publish(TOPIC, encode_entry([message], producer_name="p"))


def subscribe(engine: Engine, consumers: int) -> list[str]:
    subs = engine.subscriptions
    return [subs.subscribe(TOPIC, "s", None, SHARED, earliest=True).consumer_id
            for _ in range(consumers)]  # fmt: skip


def receive(engine: Engine, consumer: str) -> list[str]:
    got = engine.subscriptions.receive(TOPIC, "s", consumer, 1000, 0)
    return [format_message_id(d.ledger_id, d.entry_id, d.partition, -1) for d in got]


def within_a_quarter_of_equal(totals: dict[str, int]) -> bool:
    fair = sum(totals.values()) / len(totals)
    return all(0.75 * fair <= n <= 1.25 * fair for n in totals.values())


def test_the_first_long_poll_to_find_a_backlog_leases_an_eighth_of_it(engine):
    first, *_ = subscribe(engine, 8)
    produce(engine, 400)

    assert len(receive(engine, first)) == 50


def test_a_long_poll_finding_less_than_a_turn_for_each_consumer_takes_a_turn(engine):
    first, *_ = subscribe(engine, 8)
    produce(engine, 80)

    assert len(receive(engine, first)) == 20


def test_a_consumer_holding_its_share_still_takes_a_turn_of_what_is_there(engine):
    """Its acknowledgements may be on their way (the SDK groups them for 100 ms): the
    entries are not left standing until a consumer below its share comes by."""
    first, second, *_ = subscribe(engine, 8)
    produce(engine, 16)
    assert len(receive(engine, first)) == 16
    produce(engine, 8)

    assert len(receive(engine, first)) == 8


def test_a_receive_that_reads_a_full_page_of_the_backlog_takes_what_it_asked_for(engine):
    """The index page (``maxMessages`` entries) was full: more waits beyond it, as far as
    this receive can tell a page for every consumer (a receiver queue's worth each)."""
    first, *_ = subscribe(engine, 8)
    produce(engine, 80)

    got = engine.subscriptions.receive(TOPIC, "s", first, 10, 0)

    assert len(got) == 10


def test_eight_consumers_polling_one_after_another_share_a_backlog_evenly(engine):
    """Nobody acknowledges: passes of receives in subscription order until a backlog of a
    turn and more for each is drained; each consumer holds within 25 % of an eighth."""
    consumers = subscribe(engine, 8)
    produce(engine, 400)
    totals = dict.fromkeys(consumers, 0)

    while sum(totals.values()) < 400:
        for consumer in consumers:
            totals[consumer] += len(receive(engine, consumer))

    assert sum(totals.values()) == 400
    assert within_a_quarter_of_equal(totals), sorted(totals.values())


@pytest.mark.parametrize("consumers", [8, 12])
def test_consumers_that_hold_what_they_got_for_a_while_each_get_a_fair_share(engine, consumers):
    """Entries come in bursts of a turn for each consumer; after each, every consumer's
    long-poll (in a random order: whichever wakes first) receives, and each acknowledges
    what it received one burst later (its receiver queue); at the end they receive until
    nothing is left. Each consumer's total is within 25 % of an equal share. (A burst
    smaller than that goes a turn at a time to whichever polls first, as Pulsar deals a
    small read to the next consumer of its rotation.)"""
    ids = subscribe(engine, consumers)
    rounds, per_round = 10, ROUND_ROBIN_MESSAGES * consumers
    order = random.Random(7)
    held: dict[str, list[str]] = {c: [] for c in ids}
    totals = dict.fromkeys(ids, 0)
    for _ in range(rounds):
        produce(engine, per_round)
        for consumer in order.sample(ids, len(ids)):
            if held[consumer]:
                engine.subscriptions.acknowledge(TOPIC, "s", consumer, held[consumer], False)
            held[consumer] = receive(engine, consumer)
            totals[consumer] += len(held[consumer])
    while sum(totals.values()) < rounds * per_round:
        for consumer in ids:
            totals[consumer] += len(receive(engine, consumer))

    assert sum(totals.values()) == rounds * per_round
    assert within_a_quarter_of_equal(totals), sorted(totals.values())
