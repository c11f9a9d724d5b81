"""A receive the service served but whose answer never arrived (the Lambda leased entries to
the consumer, then timed out or crashed: API Gateway answers 504) must not leave those
entries stuck with a consumer that never got them (found by ``magnetar chaos``)."""

from __future__ import annotations

import json

import magnetar as pulsar
from magnetar_local.events import json_response


def lose_answers(svc, kind: str, count: int) -> list[int]:
    """The next ``count`` requests of ``kind`` that return messages are served, and then
    answered 504 as API Gateway does for a timed-out Lambda; returns the lost count so far."""
    lost: list[int] = []
    handle = svc.handle

    def losing(request, invoke):
        response = handle(request, invoke)
        served = response.status == 200 and json.loads(response.body or b"{}").get("entries")
        if len(lost) < count and request.raw_path.endswith("/" + kind) and served:
            lost.append(response.status)
            return json_response(504, {"message": "Endpoint request timed out"})
        return response

    svc.handle = losing
    return lost


def test_messages_leased_by_a_receive_whose_answer_was_lost_are_delivered_to_the_consumer(
    svc, client
):
    lost = lose_answers(svc, "receive", 1)
    consumer = client.subscribe("t", "s", consumer_type=pulsar.ConsumerType.Shared)
    producer = client.create_producer("t")
    producer.send(b"x")
    msg = consumer.receive(10_000)
    assert (msg.data(), lost) == (b"x", [200])
    assert [r.kind for r in svc.requests if r.kind in ("receive", "redeliver")].count(
        "redeliver"
    ) == 1


def test_a_nack_waiting_for_its_batch_is_dropped_with_the_queue_after_a_lost_receive(svc, client):
    """After a lost receive the service sends back everything in flight and the SDK drops its
    queue: the nack that waited for its batch's queued neighbour is dropped with it, not sent
    later to the copy leased again since (reliability finding 7). The messages come back."""
    lost: list[int] = []
    handle = svc.handle

    def losing(request, invoke):  # the answer of the receive that serves entry 1 ("c")
        response = handle(request, invoke)
        served = json.loads(response.body or b"{}").get("entries") or []
        if response.status == 200 and any(e["entryId"] == 1 for e in served) and not lost:
            lost.append(response.status)
            return json_response(504, {"message": "Endpoint request timed out"})
        return response

    svc.handle = losing
    consumer = client.subscribe("t", "s", consumer_type=pulsar.ConsumerType.Shared,
                                negative_ack_redelivery_delay_ms=60_000)  # fmt: skip
    producer = client.create_producer("t", batching_enabled=True, batching_max_messages=2)
    for payload in (b"a", b"b"):
        producer.send_async(payload, lambda result, msg_id: None)
    producer.flush()
    first = consumer.receive(10_000)
    consumer.negative_acknowledge(first)  # held: "b" of its batch is still queued
    producer.send(b"c")  # the receive that serves it loses its answer
    # the SDK receives again only once it sent everything back and dropped its queue
    assert svc.wait_for(lambda s: "redeliver" in (kinds := [r.kind for r in s.requests])
                        and "receive" in kinds[kinds.index("redeliver"):])  # fmt: skip

    again = sorted((consumer.receive(10_000) for _ in range(3)), key=lambda m: m.data())

    consumer.close()  # sends whatever acks and nacks are still pending

    assert lost == [200]
    assert [(m.data(), m.redelivery_count()) for m in again] == [(b"a", 1), (b"b", 1), (b"c", 1)]
    assert svc.recorded("nack") == []  # within the 60 s delay: "a" came back with the redelivery
