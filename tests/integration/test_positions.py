"""Positions on the emulator: start ids, non-durable (reader) cursors, seek, last message id."""

from __future__ import annotations

import pytest
from delivered import payloads

from magnetar_core.domain.errors import InvalidMessage
from magnetar_wire import EntryMessage, encode_entry


def _timed(payload: bytes, publish_ms: int) -> bytes:
    return encode_entry(
        [EntryMessage(payload=payload, publish_time_ms=publish_ms)], producer_name="t"
    )


@pytest.fixture
def filled(engine, topic, make_entry):
    """Entries: 0 'a', 1 batch 'b0','b1','b2', 2 'c'."""
    engine.producer.publish(topic, make_entry(b"a"))
    engine.producer.publish(topic, make_entry(b"b0", b"b1", b"b2"))
    engine.producer.publish(topic, make_entry(b"c"))
    return topic


@pytest.mark.parametrize(
    ("start", "inclusive", "expected"),
    [
        ("L:0:-1:-1", False, [b"b0", b"b1", b"b2", b"c"]),
        ("L:0:-1:-1", True, [b"a", b"b0", b"b1", b"b2", b"c"]),
        ("L:1:-1:0", False, [b"b1", b"b2", b"c"]),
        ("L:1:-1:1", True, [b"b1", b"b2", b"c"]),
        ("L:1:-1:2", False, [b"c"]),
        ("earliest", False, [b"a", b"b0", b"b1", b"b2", b"c"]),
        ("latest", False, []),
    ],
)
def test_a_subscription_starts_after_its_start_id_or_at_it_when_inclusive(
    engine, filled, start, inclusive, expected
):
    subs = engine.subscriptions
    start = start.replace("L", str(engine.topics.get(filled).ledger_id))  # the topic's ledger
    c = subs.subscribe(
        filled,
        f"r-{abs(hash((start, inclusive)))}",
        None,
        "Exclusive",
        earliest=False,
        start_message_id=start,
        inclusive=inclusive,
        durable=False,
    )
    assert payloads(subs.receive(filled, c.subscription, c.consumer_id, 100, 0)) == expected


def test_a_reader_cursor_holds_nothing_back_and_vanishes_when_it_closes(engine, filled):
    subs = engine.subscriptions
    reader = subs.subscribe(filled, "reader-1", None, "Exclusive", earliest=True, durable=False)
    subs.receive(filled, "reader-1", reader.consumer_id, 100, 0)
    stats = engine.admin.stats(filled, partitioned=False)["subscriptions"]["reader-1"]
    assert (stats["msgBacklog"], stats["unackedMessages"]) == (0, 0)

    subs.close(filled, "reader-1", reader.consumer_id)
    assert "reader-1" not in engine.admin.stats(filled, partitioned=False)["subscriptions"]


def test_seek_by_message_id_redelivers_from_there_even_inside_a_batch(engine, filled):
    subs = engine.subscriptions
    c = subs.subscribe(filled, "sk", None, "Exclusive", earliest=True)
    first = subs.receive(filled, "sk", c.consumer_id, 100, 0)
    ledger = engine.topics.get(filled).ledger_id
    acked = [f"{ledger}:0:-1:-1", f"{ledger}:2:-1:-1"]
    subs.acknowledge(filled, "sk", c.consumer_id, acked, cumulative=False)

    subs.seek(filled, "sk", c.consumer_id, message_id=f"{ledger}:1:-1:0")
    again = subs.receive(filled, "sk", c.consumer_id, 100, 0)

    assert payloads(first) == [b"a", b"b0", b"b1", b"b2", b"c"]
    assert payloads(again) == [b"b1", b"b2", b"c"]


def test_seek_by_publish_time_lands_on_the_first_message_at_or_after_it(engine, topic):
    for i, t in enumerate((1_000, 2_000, 3_000, 4_000)):
        engine.producer.publish(topic, _timed(f"m{i}".encode(), t))
    subs = engine.subscriptions
    c = subs.subscribe(topic, "time", None, "Exclusive", earliest=True)

    subs.seek(topic, "time", c.consumer_id, timestamp_ms=2_500)
    after = payloads(subs.receive(topic, "time", c.consumer_id, 100, 0))
    subs.seek(topic, "time", c.consumer_id, timestamp_ms=2_000)
    exact = payloads(subs.receive(topic, "time", c.consumer_id, 100, 0))
    with pytest.raises(InvalidMessage):
        subs.seek(topic, "time", c.consumer_id)

    assert after == [b"m2", b"m3"]
    assert exact == [b"m1", b"m2", b"m3"]


def test_the_last_message_id_names_the_last_batch_index(engine, topic, make_entry):
    ledger = engine.topics.create(topic, 0).ledger_id
    assert engine.subscriptions.last_message_id(topic) is None
    engine.producer.publish(topic, make_entry(b"x"))
    assert engine.subscriptions.last_message_id(topic) == f"{ledger}:0:-1:-1"
    engine.producer.publish(topic, make_entry(b"y0", b"y1"))
    assert engine.subscriptions.last_message_id(topic) == f"{ledger}:1:-1:1"


def test_the_last_message_id_passes_over_markers_and_expired_ids_in_one_backward_query(
    engine, new_engine, topic, make_entry, aws_clients, settings
):
    from magnetar_core.domain.log import IndexEntry

    ledger = engine.topics.create(topic, 0).ledger_id
    for payload in (b"a", b"b", b"c"):
        engine.producer.publish(topic, make_entry(payload))
    key = engine.topics.resolve(topic, create=False).key
    log = engine.subscriptions.context.log
    for entry_id in range(3, 250):  # a long run of epoch markers at the head
        log.append(key, IndexEntry.epoch_marker(entry_id, 1, False, "p"))
    assert engine.subscriptions.last_message_id(topic) == f"{ledger}:2:-1:-1"

    for entry_id in (1, 2):  # the expiry job deleted them
        aws_clients.dynamodb.delete_item(
            TableName=settings.log_table, Key={"pk": {"S": key}, "eid": {"N": str(entry_id)}}
        )
    assert new_engine().subscriptions.last_message_id(topic) == f"{ledger}:0:-1:-1"
