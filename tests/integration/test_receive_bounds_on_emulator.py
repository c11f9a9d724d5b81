"""On the emulator's DynamoDB and S3: a receive leases no more than one response holds
(Lambda answers at most 6 MB), for entries inline in their index items and entries in S3
objects alike, and the rest comes with the next receives, in order."""

from __future__ import annotations

import dataclasses
import json

import pytest

from magnetar_core.api import views
from magnetar_core.engine import Engine

pytestmark = pytest.mark.emulator

LIMIT = 24_000


def _drain(engine: Engine, topic, consumer: str, by_reference: bool) -> list[list[bytes]]:
    rounds: list[list[bytes]] = []
    while got := engine.subscriptions.receive(topic, "s", consumer, 1000, 0, by_reference):
        shape = views.entries(got) if by_reference else views.messages(got)
        assert len(json.dumps(shape)) <= LIMIT
        rounds.append([d.data or b"" for d in got])
    return rounds


@pytest.mark.parametrize("inline_max", [4096, 0], ids=["inline-entries", "s3-entries"])
def test_receives_stay_within_the_response_budget_and_deliver_every_entry_once(
    settings, engine_clients, topic, make_entry, inline_max
):
    bounded = dataclasses.replace(
        settings, receive_response_max_bytes=LIMIT, index_inline_max_bytes=inline_max
    )
    engine = Engine.build(bounded, clients=engine_clients)
    entries = [make_entry(bytes([97 + i]) * 3000) for i in range(10)]
    consumer = engine.subscriptions.subscribe(topic, "s", None, "Shared", earliest=True)
    for entry in entries:
        engine.producer.publish(topic, entry)
    rounds = _drain(engine, topic, consumer.consumer_id, by_reference=False)
    assert [len(r) for r in rounds] == [4, 4, 2]  # ~4.8 KB of JSON per 3 KB message
    assert [data for r in rounds for data in r] == entries
