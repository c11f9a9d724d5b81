"""A far-future delay never breaks dispatch (issue 11, defect 1), on the memory service.

A message due in the year 10000, a nack delayed by 10^15 ms or a Java long, a backoff whose
product overflows a float: each is accepted, held (stored, delivered when due, as Pulsar
does), starts no timer beyond the horizon, and the messages around it keep flowing.
"""

from __future__ import annotations

import json

import pytest
from edge_http import TOPIC, assert_error, call

import magnetar as pulsar
from magnetar_core.api.http import ENTRY_CONTENT_TYPE
from magnetar_core.domain.errors import StorageFault
from magnetar_core.domain.timers import TIMER_HORIZON_MS
from magnetar_wire import EntryMessage, encode_entry

YEAR_10000 = 253_402_300_800_000
INT64_MAX = 2**63 - 1
BASE = f"/v1{TOPIC}"


def subscribe(svc, sub: str, kind: str) -> str:
    body = {"subscriptionType": kind, "initialPosition": "Earliest", "consumerName": "c"}
    status, answer, _ = call(f"{svc.url}{BASE}/subscriptions/{sub}/consumers",
                             body=json.dumps(body).encode())  # fmt: skip
    assert status == 200, answer
    return answer["consumerId"]


def produce(svc, **message) -> str:
    body = json.dumps({"messages": [{"payload": "YWJj", **message}]}).encode()
    status, answer, _ = call(f"{svc.url}{BASE}/messages", body=body)
    assert status == 200, answer
    return answer["messageIds"][0]


def receive(svc, sub: str, consumer: str, wait_ms: int = 0):
    body = json.dumps({"maxMessages": 100, "waitMs": wait_ms}).encode()
    return call(f"{svc.url}{BASE}/subscriptions/{sub}/consumers/{consumer}/receive", body=body)


def received_ids(svc, sub: str, consumer: str, wait_ms: int = 0) -> list[str]:
    status, answer, _ = receive(svc, sub, consumer, wait_ms)
    assert status == 200, answer
    return [m["messageId"] for m in answer["messages"]]


def action(svc, sub: str, consumer: str, verb: str, body: dict):
    url = f"{svc.url}{BASE}/subscriptions/{sub}/consumers/{consumer}/{verb}"
    return call(url, body=json.dumps(body).encode())


def far_timers(svc) -> list[int]:
    now = svc.runtime.now_ms()
    return [b for _, _, b in svc.timers.pending() if b - now > TIMER_HORIZON_MS]


@pytest.mark.parametrize("kind", ["Shared", "Key_Shared"])
def test_a_message_due_in_the_year_10000_is_held_and_the_messages_after_it_flow(svc, kind):
    consumer = subscribe(svc, "s", kind)
    produce(svc, deliverAt=YEAR_10000, key="k")
    later = [produce(svc, key="k"), produce(svc, key="other")]

    assert received_ids(svc, "s", consumer, wait_ms=200) == later
    assert received_ids(svc, "s", consumer) == []  # the year-10000 message stays held
    later.append(produce(svc, key="k"))
    assert received_ids(svc, "s", consumer, wait_ms=200) == later[2:]
    stats = call(f"{svc.url}/admin/v2{TOPIC}/stats", method="GET")[1]
    assert stats["subscriptions"]["s"]["msgDelayed"] == 1
    assert far_timers(svc) == []  # Step Functions could not wait that long


def test_the_sdk_sends_a_message_due_in_the_year_10000_and_the_next_ones_arrive(svc, client):
    topic = "persistent://public/default/sdk-far"
    consumer = client.subscribe(topic, "s", consumer_type=pulsar.ConsumerType.Shared)
    producer = client.create_producer(topic, batching_enabled=False)
    producer.send(b"far", deliver_at=YEAR_10000)
    producer.send(b"near")

    msg = consumer.receive(timeout_millis=5000)
    assert msg.data() == b"near"
    consumer.acknowledge(msg)
    with pytest.raises(pulsar.Timeout):
        consumer.receive(timeout_millis=300)


@pytest.mark.parametrize("deliver_at", [2**63, -(2**63) - 1, 2**70])
def test_the_sdk_refuses_a_deliver_at_outside_a_java_long(client, deliver_at):
    producer = client.create_producer("persistent://public/default/sdk-bounds")
    with pytest.raises(ValueError, match="deliver_at"):
        producer.send(b"x", deliver_at=deliver_at)


@pytest.mark.parametrize("delay_ms", [10**15, INT64_MAX])
def test_a_nack_delayed_beyond_any_timer_is_held_and_others_flow(svc, delay_ms):
    consumer = subscribe(svc, "s", "Shared")
    first = produce(svc)
    assert received_ids(svc, "s", consumer) == [first]

    status, answer, _ = action(svc, "s", consumer, "nack",
                               {"messageIds": [first], "delayMs": delay_ms})  # fmt: skip
    assert (status, answer) == (200, {"redelivered": 1})
    second = produce(svc)
    assert received_ids(svc, "s", consumer, wait_ms=200) == [second]
    assert received_ids(svc, "s", consumer) == []
    assert far_timers(svc) == []


def test_a_nack_delay_beyond_a_java_long_is_a_400(svc):
    consumer = subscribe(svc, "s", "Shared")
    first = produce(svc)
    received_ids(svc, "s", consumer)
    answer = action(svc, "s", consumer, "nack", {"messageIds": [first], "delayMs": 2**63})
    assert_error(answer, 400, "InvalidMessage", "delayMs")


def test_a_backoff_whose_product_overflows_waits_its_maximum(svc):
    consumer = subscribe(svc, "s", "Shared")
    first = produce(svc)
    received_ids(svc, "s", consumer)
    backoff = {"minDelayMs": 1000, "maxDelayMs": INT64_MAX, "multiplier": 1e300}
    for _ in range(2):  # redelivery count 0 then 1: 1 s, then 1e300 s -> the maximum
        status, answer, _ = action(svc, "s", consumer, "nack",
                                   {"messageIds": [first], "backoff": backoff})  # fmt: skip
        assert (status, answer) == (200, {"redelivered": 1}), answer
        assert received_ids(svc, "s", consumer, wait_ms=3000) in ([first], [])
    assert received_ids(svc, "s", consumer) == []


@pytest.mark.parametrize(
    "backoff",
    [{"minDelayMs": 2**63}, {"maxDelayMs": 2**63}, {"multiplier": 2**1030}],
)
def test_a_backoff_outside_a_java_long_or_a_float_is_a_400(svc, backoff):
    consumer = subscribe(svc, "s", "Shared")
    first = produce(svc)
    received_ids(svc, "s", consumer)
    answer = action(svc, "s", consumer, "nack", {"messageIds": [first], "backoff": backoff})
    assert_error(answer, 400, "InvalidMessage", "backoff")


def test_a_timer_that_cannot_be_started_fails_no_receive(svc, monkeypatch):
    consumer = subscribe(svc, "s", "Shared")

    def broken(pk: str, subscription: str, timer_id: str, bucket_ms: int) -> bool:
        raise StorageFault("starting timer failed: ExecutionLimitExceeded")

    monkeypatch.setattr(svc.timers, "start", broken)
    produce(svc, deliverAt=svc.runtime.now_ms() + 60_000)
    near = produce(svc)

    assert received_ids(svc, "s", consumer, wait_ms=200) == [near]


@pytest.mark.parametrize("field", ["deliver_at_ms", "event_time_ms", "sequence_id"])
@pytest.mark.parametrize("value", [2**63, 2**70, -(2**63) - 1])
def test_a_binary_entry_with_a_time_or_id_outside_a_java_long_is_a_400(svc, field, value):
    fields = {"sequence_id": 0, "publish_time_ms": 1, field: value}
    message = EntryMessage(payload=b"x", **fields)
    answer = call(f"{svc.url}{BASE}/messages", body=encode_entry([message], producer_name="p"),
                  headers={"Content-Type": ENTRY_CONTENT_TYPE})  # fmt: skip
    assert_error(answer, 400, "InvalidMessage", "Java long")
