"""SDK: is_read_compacted on subscribe and create_reader becomes the subscribe body's
readCompacted (the fake service records the bodies)."""

from __future__ import annotations

import magnetar as pulsar


def test_a_read_compacted_consumer_asks_for_read_compacted(svc, client):
    client.subscribe("t", "s", is_read_compacted=True)
    client.subscribe("u", "s")
    bodies = [r.body for r in svc.recorded("subscribe")]
    assert [b.get("readCompacted") for b in bodies] == [True, None]


def test_a_read_compacted_reader_asks_for_read_compacted_on_its_non_durable_cursor(svc, client):
    client.create_reader("t", pulsar.MessageId.earliest, is_read_compacted=True)
    [body] = [r.body for r in svc.recorded("subscribe")]
    assert (body["readCompacted"], body["durable"], body["subscriptionType"]) == (
        True,
        False,
        "Exclusive",
    )
