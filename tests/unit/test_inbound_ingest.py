"""The Ingest service on the in-memory stores: each source event stored once, bad ones never."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from magnetar_core.adapters.memory import memory_stores
from magnetar_core.domain.errors import InvalidMessage
from magnetar_core.engine import Engine
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
    return [m for e in entries for m in decode_entry(engine.entries.get(e.object_key)).messages]


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
