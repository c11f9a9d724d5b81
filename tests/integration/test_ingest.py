"""The ingest function on the emulator: every sample of events/inbound/ through the real
handler, twice; the topic holds each event once, with its key and properties mapped."""

from __future__ import annotations

import importlib.util
import json
import time
import uuid
from dataclasses import replace
from pathlib import Path

import pytest

from magnetar_core.adapters.aws.clients import REQUESTS
from magnetar_core.api.http import injected_engine
from magnetar_core.domain.errors import InvalidMessage, TopicNotFound
from magnetar_core.domain.inbound.events import read_events
from magnetar_core.domain.inbound.routes import once_key
from magnetar_core.domain.log import ONCE_SORT_KEY, once_marker_pk
from magnetar_core.engine import Engine
from magnetar_core.services.entries import entry_bytes
from magnetar_local.events import LambdaContext
from magnetar_wire import decode_entry
from magnetar_wire.names import TopicName

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "events" / "inbound"


def sample(name: str) -> dict:
    return json.loads((SAMPLES / f"{name}.json").read_text())


@pytest.fixture
def topics() -> dict[str, TopicName]:
    run = uuid.uuid4().hex[:8]
    kinds = ("s3", "sns", "eventbridge", "schedule")
    return {k: TopicName.parse(f"inbound-{k}-{run}") for k in kinds}


@pytest.fixture
def ingest(settings, engine_clients, topics):
    """``(handler, engine)``: the ingest function loaded as one Lambda container on an engine
    whose INGEST_ROUTES send each kind of source to its own fresh topic."""
    routes = [
        {"source": "s3", "topic": str(topics["s3"]), "key": "key", "properties": ["bucket"]},
        {"source": "sns", "topic": str(topics["sns"]), "key": "attributes.orderId"},
        {"source": "eventbridge", "topic": str(topics["eventbridge"]), "key": "detail.orderId"},
        {"source": "schedule", "topic": str(topics["schedule"])},
    ]
    engine = Engine.build(
        replace(settings, ingest_routes=json.dumps(routes)), clients=engine_clients
    )
    spec = importlib.util.spec_from_file_location(
        f"ingest_app_{uuid.uuid4().hex[:6]}", ROOT / "functions/ingest/app.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    with injected_engine(engine):
        spec.loader.exec_module(module)

    def invoke(event: dict) -> dict:
        return module.lambda_handler(event, LambdaContext("magnetar-ingest", 256, 30))

    return invoke, engine


def stored(engine: Engine, topic: TopicName) -> list:
    """The messages committed to ``topic`` in log order ([] when it was never created)."""
    try:
        ref = engine.topics.resolve(topic, create=False)
    except TopicNotFound:
        return []
    entries = [e for e in engine.producer._log.read_from(ref.key, 0, 100) if e.count]
    return [m for e in entries for m in decode_entry(entry_bytes(engine.entries, e)).messages]


def test_each_inbound_sample_invoked_twice_is_stored_once_with_its_key_and_properties(
    ingest, topics
):
    invoke, engine = ingest
    names = ("s3_object_created", "sns_notification", "eventbridge_rule", "schedule_tick")
    answers = [invoke(sample(n)) for n in names + names]

    assert [a["ingested"][0]["duplicate"] for a in answers] == [False] * 4 + [True] * 4
    (upload,) = stored(engine, topics["s3"])
    assert upload.key == "uploads/report 2026-11-24.csv"
    assert set(upload.properties) == {"bucket", "ingest.source", "ingest.eventId"}
    (order,) = stored(engine, topics["sns"])
    assert (order.key, order.payload) == ("o-1001", b'{"orderId": "o-1001", "amount": 42}')
    (shipped,) = stored(engine, topics["eventbridge"])
    assert shipped.properties["detail.carrier.name"] == "ups"
    (tick,) = stored(engine, topics["schedule"])
    assert tick.payload == b'{"tick":true}'


def test_the_same_upload_through_eventbridge_after_the_direct_notification_is_not_stored_again(
    ingest, topics
):
    invoke, engine = ingest
    invoke(sample("s3_object_created"))

    answer = invoke(sample("s3_object_created_eventbridge"))

    assert answer["ingested"][0]["duplicate"] is True
    assert len(stored(engine, topics["s3"])) == 1


def test_a_bad_event_is_logged_and_raised_for_the_platform_to_retry_and_nothing_is_stored(
    ingest, topics, caplog
):
    invoke, engine = ingest

    with pytest.raises(InvalidMessage, match="only ObjectCreated events"):
        invoke(sample("bad_s3_object_removed"))

    assert "inbound event refused, nothing of it stored" in caplog.text
    assert stored(engine, topics["s3"]) == []


def sns_message(message_id: str) -> dict:
    """The SNS sample as another notification of the same topic (its own MessageId)."""
    event = sample("sns_notification")
    event["Records"][0]["Sns"]["MessageId"] = message_id
    return event


def test_a_new_event_costs_an_id_and_one_transaction_and_no_object_and_its_marker_expires_after_48_hours(
    ingest, topics, settings, aws_clients
):
    invoke, engine = ingest
    invoke(sns_message("warm-up"))  # the container's first event reads topic and policies
    event = sns_message(f"m-{uuid.uuid4().hex}")

    with REQUESTS.on_this_thread() as new:
        invoke(event)
    answer = invoke(event)

    # the entry id from the sequencer, then the entry with its marker; inline: no PUT
    assert new == {"dynamodb.UpdateItem": 1, "dynamodb.TransactWriteItems": 1}
    assert answer["ingested"][0]["duplicate"] is True
    assert len(stored(engine, topics["sns"])) == 2
    ledger = engine.topics.resolve(topics["sns"], create=False).key
    marker = aws_clients.dynamodb.get_item(
        TableName=settings.cursors_table,
        Key={
            "pk": {"S": once_marker_pk(ledger, once_key(read_events(event)[0]))},
            "sub": {"S": ONCE_SORT_KEY},
        },
    )["Item"]
    expires_in_s = int(marker["ttl"]["N"]) - time.time()
    assert 48 * 3600 - 60 < expires_in_s <= 48 * 3600
