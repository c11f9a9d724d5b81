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
