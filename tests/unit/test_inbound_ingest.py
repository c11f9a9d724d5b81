"""The Ingest service on the in-memory stores: each source event stored once, bad ones never."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from magnetar_core.adapters.memory import MemoryTables, memory_stores
from magnetar_core.domain.errors import InvalidMessage
from magnetar_core.domain.inbound.events import read_events
from magnetar_core.domain.inbound.routes import once_key
from magnetar_core.domain.log import ONCE_SORT_KEY, once_marker_pk
from magnetar_core.domain.runtime import Runtime
from magnetar_core.engine import Engine
from magnetar_core.services.entries import entry_bytes
from magnetar_core.services.ingest import REDELIVERY_WINDOW_S
from magnetar_local.memory_service import memory_settings
from magnetar_wire import decode_entry
from magnetar_wire.names import TopicName

SAMPLES = Path(__file__).resolve().parents[2] / "events" / "inbound"
UPLOADS = TopicName.parse("inbound-uploads")
ORDERS = TopicName.parse("inbound-orders")
ROUTES = [
    {"source": "s3", "topic": str(UPLOADS), "key": "key"},
    {"source": "sns", "topic": str(ORDERS), "key": "attributes.orderId"},
    {"source": "eventbridge", "topic": str(ORDERS), "key": "detail.orderId"},
    {"source": "schedule", "topic": "inbound-ticks"},
]


def sample(name: str) -> dict:
    return json.loads((SAMPLES / f"{name}.json").read_text())


@pytest.fixture
def engine() -> Engine:
    engine = Engine.assemble(memory_settings(ingest_routes=json.dumps(ROUTES)), memory_stores())
    engine.tenants.initialize_cluster()
    return engine


def stored(engine: Engine, topic: TopicName) -> list:
    """The messages committed to ``topic`` (non-partitioned), in log order."""
    key = engine.topics.resolve(topic, create=False).key
    entries = [e for e in engine.producer._log.read_from(key, 0, 100) if e.count]
    return [m for e in entries for m in decode_entry(entry_bytes(engine.entries, e)).messages]


def test_every_source_event_twice_is_stored_once_and_the_second_time_is_a_duplicate(engine):
    names = ("s3_object_created", "sns_notification", "eventbridge_rule", "schedule_tick")
    first = [engine.ingest.handle(sample(n)) for n in names]
    again = [engine.ingest.handle(sample(n)) for n in names]

    assert [i.duplicate for batch in first for i in batch] == [False] * 4
    assert [i.duplicate for batch in again for i in batch] == [True] * 4
    assert [m.key for m in stored(engine, ORDERS)] == ["o-1001", "o-1001"]
    (tick,) = stored(engine, TopicName.parse("inbound-ticks"))
    assert tick.properties["ingest.source"] == "schedule" and tick.sequence_id == 0


def test_an_upload_delivered_directly_and_through_eventbridge_is_stored_once(engine):
    engine.ingest.handle(sample("s3_object_created"))
    (bridged,) = engine.ingest.handle(sample("s3_object_created_eventbridge"))

    (message,) = stored(engine, UPLOADS)
    assert bridged.duplicate is True
    assert message.key == "uploads/report 2026-11-24.csv"
    assert message.event_time_ms == 1_795_550_400_123


def test_an_invocation_with_one_bad_record_stores_none_of_its_records(engine):
    good = sample("s3_object_created")["Records"][0]
    bad = sample("bad_s3_object_removed")["Records"][0]

    with pytest.raises(InvalidMessage, match=r"Records\[1\]: only ObjectCreated"):
        engine.ingest.handle({"Records": [good, bad]})
    assert engine.topics.list("public/default") == []


def test_an_event_without_a_route_is_refused_and_nothing_is_stored():
    routes = json.dumps([{"source": "sns", "topic": "inbound-orders"}])
    engine = Engine.assemble(memory_settings(ingest_routes=routes), memory_stores())
    engine.tenants.initialize_cluster()

    with pytest.raises(InvalidMessage, match="No inbound route takes eventbridge events"):
        engine.ingest.handle(sample("eventbridge_rule"))
    assert engine.topics.list("public/default") == []


def test_redeliveries_are_deduplicated_on_a_namespace_with_deduplication_off(engine):
    engine.namespaces.set_deduplication("public", "default", False)

    engine.ingest.handle(sample("sns_notification"))
    engine.ingest.handle(sample("sns_notification"))

    assert len(stored(engine, ORDERS)) == 1


def test_an_s3_event_of_the_entries_bucket_itself_is_refused_as_a_loop(engine):
    event = sample("s3_object_created")
    event["Records"][0]["s3"]["bucket"]["name"] = "memory-entries"

    with pytest.raises(InvalidMessage, match="entries bucket itself"):
        engine.ingest.handle(event)
    assert engine.topics.list("public/default") == []


def sns_message(message_id: str) -> dict:
    """The SNS sample as another notification of the same topic (its own MessageId)."""
    event = sample("sns_notification")
    event["Records"][0]["Sns"]["MessageId"] = message_id
    return event


def test_distinct_events_of_one_source_are_all_stored_on_a_namespace_with_deduplication_on(
    engine,
):
    engine.namespaces.set_deduplication("public", "default", True)
    ids = [f"m-{i}" for i in range(3)]

    first = [engine.ingest.handle(sns_message(i))[0].duplicate for i in ids]
    again = [engine.ingest.handle(sns_message(i))[0].duplicate for i in ids]

    assert (first, again) == ([False] * 3, [True] * 3)
    messages = stored(engine, ORDERS)
    assert [m.properties["ingest.eventId"] for m in messages] == ids
    key = engine.topics.resolve(ORDERS, create=False).key
    producers = {e.producer for e in engine.producer._log.read_from(key, 0, 100) if e.count}
    assert producers == {"ingest-sns-arn:aws:sns:us-east-1:123456789012:magnetar-inbound-orders"}


def test_an_events_marker_is_kept_for_the_redelivery_window_beside_its_ledger():
    tables = MemoryTables()
    now_ms = 1_795_550_400_000
    engine = Engine.assemble(
        memory_settings(ingest_routes=json.dumps(ROUTES)),
        memory_stores(tables),
        runtime=Runtime(now_ms=lambda: now_ms),
    )
    engine.tenants.initialize_cluster()
    event = sample("sns_notification")

    engine.ingest.handle(event)

    ledger = engine.topics.resolve(ORDERS, create=False).key
    marker = once_marker_pk(ledger, once_key(read_events(event)[0]))
    with tables.lock:
        assert tables.cursors.get(marker, ONCE_SORT_KEY) == now_ms // 1000 + 48 * 3600
    assert REDELIVERY_WINDOW_S == 48 * 3600
