"""Redelivery counts of single messages (pure): on Key_Shared a nack names messages, so a
message's count rises only when that message was delivered and went back; the cursor
keeps a message's count only while it differs from its entry's; an exhausted message of a
split entry goes to the dead letter outbox alone, exactly once; the cursor item keeps it."""

from __future__ import annotations

from magnetar_core.adapters.aws.cursors import cursor_from_item, cursor_to_item
from magnetar_core.domain.cursor.message_counts import MessageCounts
from magnetar_core.domain.cursor.state import KEY_SHARED, ConsumerInfo, CursorState, Delivery
from magnetar_core.domain.dead_letter import DeadLetterPolicy
from magnetar_wire.names import TopicName

HASHES = {0: (1, 2, 3, 4), 1: (1,)}  # one consumer: it owns every hash
TOPIC = TopicName.parse("persistent://a/b/t")


def held_entry() -> CursorState:
    """One Key_Shared consumer ``c`` holding entry 0 (4 messages) whole, and entry 1."""
    state = CursorState.new("s", KEY_SHARED, last_entry_id=-1, earliest=True)
    state.add_consumer(ConsumerInfo("c", "c", 0, 0), KEY_SHARED, None, HASHES.get)
    assert receive(state) == [Delivery(0, 0, None), Delivery(1, 0, None)]
    return state


def receive(state: CursorState, cid: str = "c") -> list[Delivery]:
    redeliveries, _ = state.key_shared_window(500)
    candidates = [(e, HASHES[e]) for e in redeliveries]
    candidates += [(e, h) for e, h in HASHES.items() if e >= state.read_position]
    return state.dispatch_key_shared(cid, candidates, 100, 1_000)


def nack(state: CursorState, entry_id: int, *indexes: int, counted: bool = True) -> int:
    return state.negative_acknowledge(
        "c", [entry_id], HASHES.get, counted=counted, indexes={entry_id: set(indexes)}
    )


def test_only_the_counts_that_differ_from_the_entrys_are_kept():
    counts = MessageCounts()
    assert counts.bump(7, [2], 0, unacked=[0, 1, 2, 3]) == 0
    assert (counts.counts, counts.count_of(7, 2, 0), counts.count_of(7, 1, 0)) == (
        {7: {2: 1}},
        1,
        0,
    )
    assert counts.bump(7, [0, 1, 3], 0, unacked=[0, 1, 2, 3]) == 1  # all agree: the entry's
    assert counts.counts == {}
    counts.bump(7, [1], 1, unacked=[0, 1, 2, 3])
    assert counts.settle(7, 1, unacked=[0, 2, 3]) == 1  # message 1 acknowledged: agreed
    assert counts.counts == {}


def test_a_nack_of_one_message_counts_it_alone_and_the_consumer_keeps_the_rest():
    state = held_entry()
    assert nack(state, 0, 2) == 1
    assert state.redelivery_counts == {} and state.reads.messages.counts == {0: {2: 1}}
    assert state.unacked_messages("c") == 4  # 3 of entry 0 still held, and entry 1
    assert receive(state) == [Delivery(0, 1, (2,))]


def test_a_redelivered_entry_comes_as_runs_of_equal_counts_in_batch_index_order():
    state = held_entry()
    nack(state, 0, 1)
    nack(state, 0, 0, 2, 3, counted=False)  # handed back unsent: counts unchanged
    assert state.redeliver_all("c", HASHES.get) == 1  # entry 1 went back (count 1)
    assert receive(state) == [
        Delivery(0, 0, (0,)),
        Delivery(0, 1, (1,)),
        Delivery(0, 0, (2, 3)),
        Delivery(1, 1, None),
    ]


def test_a_stale_nack_of_one_message_is_checked_against_that_messages_count():
    state = held_entry()
    nack(state, 0, 2)
    receive(state)  # message 2 again, count 1; the others still held with count 0
    seen_zero = {0: 0}
    assert state.negative_acknowledge("c", [0], HASHES.get, seen=seen_zero, indexes={0: {2}}) == 0
    assert state.negative_acknowledge("c", [0], HASHES.get, seen=seen_zero, indexes={0: {3}}) == 1
    assert state.reads.messages.counts == {0: {2: 1, 3: 1}}


def test_an_exhausted_message_of_a_split_entry_goes_to_the_dead_letter_topic_alone_once():
    state = held_entry()
    state.dead_letter_policy = DeadLetterPolicy(1, None, None)
    nack(state, 0, 2)  # count 1: one redelivery is allowed
    assert state.collect_dead_letters(TOPIC, "dlq-1") == 0
    assert receive(state) == [Delivery(0, 1, (2,))]
    nack(state, 0, 2)  # count 2: exhausted; the other messages of entry 0 are still held
    assert state.collect_dead_letters(TOPIC, "dlq-1") == 1
    assert [(d.entry_id, d.batch_indexes, d.count) for d in state.dead_letters] == [(0, (2,), 1)]
    assert receive(state) == [] and state.collect_dead_letters(TOPIC, "dlq-1") == 0
    assert state.settle_dead_letters(0, HASHES.get) == 1
    assert state.batch_acks == {0: {2}} and state.reads.messages.parked == {}
    state.acknowledge([(0, 0), (0, 1), (0, 3), (1, -1)], HASHES.get)
    assert (state.mark_delete, state.reads.messages.counts) == (1, {})


def test_the_cursor_item_keeps_message_counts_and_parked_messages():
    state = held_entry()
    nack(state, 0, 2)
    state.reads.messages.park(0, [3])
    body = cursor_to_item("pk", state)["st"]["S"]
    assert '"mc":[[0,1,"4"]]' in body and '"mp":{"0":"8"}' in body
    back = cursor_from_item(cursor_to_item("pk", state))
    assert back.reads.messages == state.reads.messages
    assert '"mc"' not in cursor_to_item("pk", held_entry())["st"]["S"]


def test_message_counts_travel_as_entry_deltas_and_bitmaps_by_count():
    counts = MessageCounts({10_000_000: {0: 2, 2: 1, 4: 1}, 10_000_003: {1: 1}}, {5: {0, 3}})
    assert counts.to_dict() == {
        "mc": [[10_000_000, 1, "14", 2, "1"], [3, 1, "2"]],
        "mp": {"5": "9"},
    }
    assert MessageCounts.from_dict(counts.to_dict()) == counts
    assert MessageCounts().to_dict() == {}
