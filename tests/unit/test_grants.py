"""Grants (``domain.cursor.grants``): a Shared consumer's one-message receives served from
its own grant item, acks recorded there, folded into the cursor by its next grant or by
whoever takes its entries back. The pure rules, then the subscription service on memory
adapters (the cursor item is not written per message, and nothing acknowledged on a grant
item is ever dispatched again)."""

from __future__ import annotations

import pytest
from grant_support import (
    TOPIC,
    ack,
    cursor,
    ledger,
    memory_engine,
    produce,
    receive_one,
    subscribe,
)

from magnetar_core.domain.cursor.grants import (
    GRANT_FLOOR,
    Grant,
    GrantPolicy,
    carried_over,
    fold,
    fold_grants,
    grant_split,
    next_grant,
    reclaim,
)
from magnetar_core.domain.cursor.records import Delivery
from magnetar_core.domain.cursor.state import SHARED, ConsumerInfo, CursorState
from magnetar_core.domain.errors import ConsumerNotFound
from magnetar_core.domain.rangeset import RangeSet
from magnetar_core.engine import Engine
from magnetar_wire import format_message_id


def deliveries(*entry_ids: int) -> tuple[Delivery, ...]:
    return tuple(Delivery(e, 0, None) for e in entry_ids)


def cursor_leasing(consumer: str, *entry_ids: int) -> CursorState:
    state = CursorState.new("s", SHARED, last_entry_id=-1, earliest=True)
    state.add_consumer(ConsumerInfo(consumer, consumer, 0, 0), SHARED)
    state.read_position = max(entry_ids) + 1
    state.leases = {consumer: RangeSet.from_list([[e, e] for e in entry_ids])}
    return state


# -- the rules ----------------------------------------------------------------------------


def test_a_grant_serves_only_receives_asking_fewer_messages_than_it_holds():
    assert GrantPolicy(32).serves(1) and GrantPolicy(32).serves(31)
    assert not GrantPolicy(32).serves(32)
    assert not GrantPolicy(1).serves(1)  # grants off


def test_folding_acknowledges_only_entries_the_cursor_still_leases_to_the_consumer():
    state = cursor_leasing("a", 0, 1, 2)
    grant = Grant(deliveries(0, 1, 2), 3, frozenset({0, 1, 2}), frozenset({0, 2, 7}))

    assert fold(state, "a", grant) == 2
    assert (state.mark_delete, list(state.leases["a"])) == (0, [1])
    assert state.acked.to_list() == [[2, 2]]


def test_reclaiming_folds_the_acks_and_sends_unhanded_deliveries_back_uncounted():
    state = cursor_leasing("a", 0, 1, 2, 3)
    grant = Grant(deliveries(0, 1, 2, 3), 2, frozenset(), frozenset({0}))

    assert reclaim(state, "a", grant) == 2
    assert list(state.redeliver) == [2, 3]
    assert state.redelivery_counts == {}  # never delivered: not counted
    assert list(state.leases["a"]) == [1]  # handed out, not acked: its close counts it


def test_a_new_grant_keeps_the_leased_entries_and_drops_the_acks_it_folded():
    state = cursor_leasing("a", 1, 5, 6)
    before = Grant(deliveries(0, 1), 2, frozenset({0, 1}), frozenset({0}), rev=3)

    change = next_grant(state, "a", before, deliveries(5, 6), role="r", handed=1)

    assert (change.leased, change.folded, change.rev, change.fresh) == (
        frozenset({1, 5, 6}),
        frozenset({0}),
        3,
        False,
    )
    assert ([d.entry_id for d in change.queue], change.handed, change.role) == ([5, 6], 1, "r")


def test_deliveries_of_a_revoked_grant_still_leased_are_carried_into_the_next():
    state = cursor_leasing("a", 2, 3)
    before = Grant(deliveries(1, 2, 3), 1, frozenset(), revoked=True)
    assert [d.entry_id for d in carried_over(state, "a", before)] == [2, 3]
    assert carried_over(state, "b", before) == []


def test_a_grant_is_an_equal_split_of_what_is_left_within_the_floor_and_the_size():
    assert grant_split(3000, 32, 32) == 32
    assert grant_split(640, 32, 32) == 20
    assert grant_split(10, 32, 32) == GRANT_FLOOR
    assert grant_split(10, 32, 4) == 4


def test_a_readers_view_folds_every_consumers_recorded_acks():
    state = cursor_leasing("a", 0, 1)
    state.add_consumer(ConsumerInfo("b", "b", 0, 0), SHARED)
    state.leases["b"] = RangeSet.from_list([[2, 2]])
    items = {"a": Grant(acked=frozenset({0, 1})), "b": None}

    assert fold_grants(state, items.get) == 2
    assert (state.mark_delete, list(state.leases["b"])) == (1, [2])


# -- the subscription service -------------------------------------------------------------


@pytest.fixture
def engine() -> Engine:
    return memory_engine()


def test_one_message_receives_after_the_first_leave_the_cursor_item_alone(engine):
    consumer = subscribe(engine)
    produce(engine, 5)

    assert receive_one(engine, consumer) == [0]  # takes the grant: one cursor write
    version = cursor(engine).version
    assert [receive_one(engine, consumer) for _ in range(4)] == [[1], [2], [3], [4]]
    ack(engine, consumer, 0, 1, 2)

    assert cursor(engine).version == version  # served and acknowledged on the grant item
    assert engine.subscriptions.receive(TOPIC, "s", consumer, 1, 0) == []
    assert cursor(engine).mark_delete == 2  # the next dispatch folded the acks


def test_an_ack_on_the_grant_item_counts_in_the_backlog_at_once(engine):
    consumer = subscribe(engine)
    produce(engine, 3)
    for _ in range(3):
        receive_one(engine, consumer)
    ack(engine, consumer, 0, 1)

    stats = engine.stats.topic_stats(engine.topics.get(TOPIC))
    assert stats["subscriptions"]["s"]["msgBacklog"] == 1


def test_what_a_closed_consumer_acknowledged_on_its_grant_is_never_dispatched_again(engine):
    first = subscribe(engine, "first")
    produce(engine, 4)
    assert [receive_one(engine, first) for _ in range(3)] == [[0], [1], [2]]
    ack(engine, first, 0, 2)

    engine.subscriptions.close(TOPIC, "s", first)
    second = subscribe(engine, "second")
    got = engine.subscriptions.receive(TOPIC, "s", second, 100, 0)

    assert [(d.entry_id, d.redelivery_count) for d in got] == [(1, 1), (3, 0)]


def test_a_lapsed_consumers_grant_is_taken_back_with_its_acks_by_the_next_dispatch(engine):
    first = subscribe(engine, "first")
    produce(engine, 4)
    assert [receive_one(engine, first) for _ in range(2)] == [[0], [1]]
    ack(engine, first, 0)
    ref = engine.topics.resolve(TOPIC, create=False)
    state = cursor(engine)
    state.consumers[first] = ConsumerInfo(first, "first", 0, 0)  # last seen long ago
    engine.subscriptions.context.cursors.put(ref.key, state)

    second = subscribe(engine, "second")
    got = engine.subscriptions.receive(TOPIC, "s", second, 100, 0)

    assert first not in cursor(engine).consumers
    assert [(d.entry_id, d.redelivery_count) for d in got] == [(1, 1), (2, 0), (3, 0)]
    assert engine.subscriptions.context.cursors.grant(ref.key, "s", first).revoked


def test_an_ack_after_the_entry_was_nacked_goes_to_the_cursor_and_stops_its_redelivery(engine):
    consumer = subscribe(engine)
    produce(engine, 3)
    receive_one(engine, consumer)
    ids = [format_message_id(ledger(engine), 0, -1, -1)]
    assert engine.subscriptions.negative_acknowledge(TOPIC, "s", consumer, ids) == 1
    version = cursor(engine).version

    ack(engine, consumer, 0)  # not on the grant item any more: on the cursor

    assert cursor(engine).version == version + 1
    assert 0 not in cursor(engine).redeliver


def test_another_role_cannot_take_from_a_consumers_grant(engine):
    consumer = engine.subscriptions.subscribe(
        TOPIC, "s", "c", SHARED, earliest=True, role="billing"
    ).consumer_id
    produce(engine, 3)
    engine.subscriptions.receive(TOPIC, "s", consumer, 1, 0, role="billing")

    with pytest.raises(Exception, match="may not act on consumer"):
        engine.subscriptions.receive(TOPIC, "s", consumer, 1, 0, role="intruder")
    assert receive_one(engine, consumer) == [1]


def test_a_seek_takes_every_grant_back_so_nothing_granted_before_it_is_handed_out(engine):
    consumer = subscribe(engine)
    produce(engine, 3)
    assert receive_one(engine, consumer) == [0]  # 1 and 2 wait in its grant

    engine.subscriptions.seek(TOPIC, "s", consumer, message_id="earliest", inclusive=True)

    assert [receive_one(engine, consumer) for _ in range(3)] == [[0], [1], [2]]


def test_a_reset_by_an_operator_takes_every_grant_back_too(engine):
    consumer = subscribe(engine)
    produce(engine, 3)
    assert receive_one(engine, consumer) == [0]
    ref = engine.topics.resolve(TOPIC, create=False)

    engine.subscriptions.operations.reset_to_id(ref, "s", "earliest", True)

    assert receive_one(engine, consumer) == [0]


def test_a_closed_consumer_is_handed_nothing_left_in_its_grant(engine):
    consumer = subscribe(engine)
    produce(engine, 3)
    assert receive_one(engine, consumer) == [0]  # 1 and 2 wait in its grant
    ref = engine.topics.resolve(TOPIC, create=False)
    engine.subscriptions.operations.clear_backlog(ref, "s")  # acknowledges 1 and 2 too

    engine.subscriptions.close(TOPIC, "s", consumer)

    with pytest.raises(ConsumerNotFound):
        receive_one(engine, consumer)
