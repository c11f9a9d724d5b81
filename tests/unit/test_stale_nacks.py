"""Stale nacks (reliability issue 11): a nack carries the redelivery count of the delivery
it saw; the cursor ignores one whose count is not the entry's current one (a retried nack
whose first request went through, or a second nack of one message), so the entry is not
redelivered an extra time. Pure cursor tests, then the HTTP route on the memory service."""

from __future__ import annotations

import json

from edge_http import TOPIC, assert_error, call

from magnetar_core.domain.cursor.state import (
    KEY_SHARED,
    SHARED,
    ConsumerInfo,
    CursorState,
    Delivery,
)

LOW, HIGH = 100, 40_000  # with two AUTO_SPLIT Key_Shared consumers: c2 owns LOW, c1 HIGH
BASE = f"/v1{TOPIC}"


def cursor(sub_type: str, *consumers: str) -> CursorState:
    state = CursorState.new("s", sub_type, last_entry_id=-1, earliest=True)
    for cid in consumers:
        state.add_consumer(ConsumerInfo(cid, cid, 0, 0), sub_type)
    return state


# -- the cursor ---------------------------------------------------------------------------


def test_a_repeated_nack_with_the_count_it_saw_does_not_send_the_redelivered_copy_back():
    state = cursor(SHARED, "c")
    assert state.dispatch("c", [(0, 1)], 10, 100) == [Delivery(0, 0, None)]
    assert state.negative_acknowledge("c", [0], seen={0: 0}) == 1
    assert state.dispatch("c", [(0, 1)], 10, 100) == [Delivery(0, 1, None)]

    assert state.negative_acknowledge("c", [0], seen={0: 0}) == 0  # the stale retry

    assert (state.redelivery_counts, state.leases["c"].to_list()) == ({0: 1}, [[0, 0]])
    assert state.negative_acknowledge("c", [0], seen={0: 1}) == 1  # the current delivery's
    assert state.redelivery_counts == {0: 2}


def test_a_nack_without_counts_or_with_a_count_for_another_entry_behaves_as_before():
    state = cursor(SHARED, "c")
    state.dispatch("c", [(0, 1), (1, 1)], 10, 100)
    state.negative_acknowledge("c", [0, 1])
    state.dispatch("c", [(0, 1), (1, 1)], 10, 100)

    assert state.negative_acknowledge("c", [0, 1], seen={7: 0}) == 2
    assert state.redelivery_counts == {0: 2, 1: 2}


def test_a_nack_carrying_a_count_higher_than_the_entrys_is_of_a_delivery_before_a_seek():
    state = cursor(SHARED, "c")
    state.dispatch("c", [(0, 1)], 10, 100)
    state.negative_acknowledge("c", [0])
    state.dispatch("c", [(0, 1)], 10, 100)
    state.seek(0)
    assert state.dispatch("c", [(0, 1)], 10, 100) == [Delivery(0, 0, None)]

    assert state.negative_acknowledge("c", [0], seen={0: 1}) == 0
    assert state.unacked_entries("c") == 1


def test_a_key_shared_consumers_part_of_a_split_entry_is_checked_against_its_own_count():
    hashes = {0: (LOW, HIGH, HIGH, LOW)}
    state = CursorState.new("s", KEY_SHARED, last_entry_id=-1, earliest=True)
    for cid in ("c1", "c2"):
        state.add_consumer(ConsumerInfo(cid, cid, 0, 0), KEY_SHARED, None, hashes.get)
    candidates = list(hashes.items())
    assert state.dispatch_key_shared("c1", candidates, 100, 100) == [Delivery(0, 0, (1, 2))]
    assert state.dispatch_key_shared("c2", candidates, 100, 100) == [Delivery(0, 0, (0, 3))]
    assert state.negative_acknowledge("c1", [0], hashes.get, seen={0: 0}) == 1

    # c2's part came with count 0 and still has it (c1's nack counted c1's part only)
    assert state.negative_acknowledge("c2", [0], hashes.get, seen={0: 1}) == 0  # stale
    assert state.negative_acknowledge("c2", [0], hashes.get, seen={0: 0}) == 1
    assert (state.redelivery_counts, state.reads.messages.counts) == ({0: 1}, {})


# -- the HTTP route on the memory service --------------------------------------------------


def post(svc, path: str, body: dict):
    return call(f"{svc.url}{BASE}{path}", body=json.dumps(body).encode())


def subscribe_and_receive(svc) -> tuple[str, str]:
    """A Shared consumer of subscription ``s`` holding one message; (consumer, message id)."""
    status, answer, _ = post(svc, "/messages", {"messages": [{"payload": "YWJj"}]})
    assert status == 200, answer
    body = {"subscriptionType": "Shared", "initialPosition": "Earliest", "consumerName": "c"}
    consumer = post(svc, "/subscriptions/s/consumers", body)[1]["consumerId"]
    assert receive(svc, consumer) == [(answer["messageIds"][0], 0)]
    return consumer, answer["messageIds"][0]


def receive(svc, consumer: str) -> list[tuple[str, int]]:
    status, answer, _ = post(svc, f"/subscriptions/s/consumers/{consumer}/receive",
                             {"maxMessages": 10, "waitMs": 0})  # fmt: skip
    assert status == 200, answer
    return [(m["messageId"], m["redeliveryCount"]) for m in answer["messages"]]


def nack(svc, consumer: str, body: dict):
    return post(svc, f"/subscriptions/s/consumers/{consumer}/nack", body)


def test_a_duplicate_nack_with_the_old_count_redelivers_the_message_only_once(svc):
    consumer, mid = subscribe_and_receive(svc)
    first = {"messageIds": [mid], "redeliveryCounts": {mid: 0}}
    assert nack(svc, consumer, first)[1] == {"redelivered": 1}
    assert receive(svc, consumer) == [(mid, 1)]

    assert nack(svc, consumer, first)[1] == {"redelivered": 0}  # the retried request

    assert receive(svc, consumer) == []  # the copy it holds stays with it
    assert nack(svc, consumer, {"messageIds": [mid], "redeliveryCounts": {mid: 1}})[1] == {
        "redelivered": 1
    }
    assert receive(svc, consumer) == [(mid, 2)]


def test_a_nack_without_redelivery_counts_sends_back_whatever_copy_the_consumer_holds(svc):
    consumer, mid = subscribe_and_receive(svc)
    assert nack(svc, consumer, {"messageIds": [mid]})[1] == {"redelivered": 1}
    assert receive(svc, consumer) == [(mid, 1)]

    assert nack(svc, consumer, {"messageIds": [mid]})[1] == {"redelivered": 1}
    assert receive(svc, consumer) == [(mid, 2)]


def test_malformed_redelivery_counts_are_invalid_message_and_change_nothing(svc):
    consumer, mid = subscribe_and_receive(svc)
    for counts, words in (
        ([0], ("redeliveryCounts", "dict")),
        ({mid: -1}, ("redeliveryCounts", "0 to")),
        ({mid: True}, ("redeliveryCounts",)),
        ({"1:99:-1:-1": 0}, ("1:99:-1:-1", "not in messageIds")),
    ):
        answer = nack(svc, consumer, {"messageIds": [mid], "redeliveryCounts": counts})
        assert_error(answer, 400, "InvalidMessage", *words)
    assert nack(svc, consumer, {"messageIds": [mid], "redeliveryCounts": {mid: 0}})[1] == {
        "redelivered": 1
    }


def test_the_sdks_nack_sent_again_after_the_message_came_back_leaves_the_copy_alone(svc, client):
    consumer = client.subscribe("t", "s", negative_ack_redelivery_delay_ms=0)
    producer = client.create_producer("t")
    producer.send(b"x")
    consumer.negative_acknowledge(consumer.receive(5000))
    again = consumer.receive(5000)
    (first,) = svc.recorded("nack")

    # what the ack outbox sends when it retries a request whose answer was lost
    status, answer, _ = call(f"{svc.url}{first.path}", body=json.dumps(first.body).encode())

    assert (status, answer, again.redelivery_count()) == (200, {"redelivered": 0}, 1)
    assert first.body["redeliveryCounts"] == {str(again.message_id()): 0}
    stats = call(f"{svc.url}/admin/v2/persistent/public/default/t/stats", method="GET")[1]
    assert stats["subscriptions"]["s"]["unackedMessages"] == 1  # still held by the consumer
