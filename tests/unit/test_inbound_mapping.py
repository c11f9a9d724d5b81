"""Inbound sources, pure: the sample events of events/inbound/ read and routed to messages."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from magnetar_core.domain.errors import InvalidMessage
from magnetar_core.domain.inbound.events import read_events
from magnetar_core.domain.inbound.routes import (
    InvalidRoutes,
    once_key,
    producer_name,
    route_for,
    routes_from_json,
)
from magnetar_local.template import LocalTemplate

SAMPLES = Path(__file__).resolve().parents[2] / "events" / "inbound"
ROUTES = routes_from_json(
    json.dumps(
        [
            {
                "source": "s3",
                "name": "magnetar-inbound-demo",
                "topic": "inbound-uploads",
                "key": "key",
                "properties": ["bucket", "key", "size", "nope"],
            },
            {"source": "sns", "topic": "inbound-orders", "key": "attributes.orderId"},
            {"source": "eventbridge", "topic": "inbound-events", "key": "detail.orderId"},
            {"source": "schedule", "topic": "inbound-ticks"},
        ]
    )
)


def sample(name: str) -> dict:
    return json.loads((SAMPLES / f"{name}.json").read_text())


def only_message(name: str):
    (event,) = read_events(sample(name))
    return event, route_for(ROUTES, event).message(event)


def test_a_direct_s3_notification_becomes_a_message_keyed_by_the_decoded_object_key():
    event, message = only_message("s3_object_created")

    assert (event.kind, event.name) == ("s3", "magnetar-inbound-demo")
    assert (
        event.event_id == "magnetar-inbound-demo/uploads/report 2026-11-24.csv@0055AED6DCD90281E5"
    )
    assert str(message.topic) == "persistent://public/default/inbound-uploads"
    assert message.key == "uploads/report 2026-11-24.csv"
    assert message.properties == {
        "bucket": "magnetar-inbound-demo",
        "key": "uploads/report 2026-11-24.csv",
        "size": "1024",
        "ingest.source": "s3",
        "ingest.eventId": event.event_id,
    }
    assert json.loads(message.payload)["etag"] == "d41d8cd98f00b204e9800998ecf8427e"
    assert message.event_time_ms == 1_795_550_400_123


def test_the_same_upload_through_eventbridge_has_the_same_id_producer_and_key():
    direct, via_direct = only_message("s3_object_created")
    bridged, via_bridge = only_message("s3_object_created_eventbridge")

    assert bridged.kind == "s3" and bridged.event_id == direct.event_id
    assert via_bridge.producer_name == via_direct.producer_name
    assert via_bridge.once_key == via_direct.once_key
    assert via_bridge.key == via_direct.key
    assert bridged.fields["eventName"] == "ObjectCreated:Put"
    assert bridged.fields["versionId"] == direct.fields["versionId"]


def test_an_sns_notification_carries_its_message_and_its_attributes_as_properties():
    event, message = only_message("sns_notification")

    assert event.event_id == "95df01b4-ee98-5cb9-9903-4c221d41eb5e"
    assert message.payload == b'{"orderId": "o-1001", "amount": 42}'
    assert message.key == "o-1001"
    assert message.properties["attributes.priority"] == "2"
    assert message.properties["subject"] == "order placed"


def test_an_eventbridge_event_flattens_its_detail_into_fields_and_keeps_the_whole_event():
    event, message = only_message("eventbridge_rule")

    assert (event.kind, event.name) == ("eventbridge", "com.example.orders")
    assert event.event_id == "6a7e8feb-b491-4cf7-a9f1-bf3703467718"
    assert message.key == "o-1001"
    assert message.properties["detailType"] == "Order Shipped"
    assert message.properties["detail.carrier.service.level"] == "ground"
    assert message.properties["detail.express"] == "true"
    assert json.loads(message.payload) == sample("eventbridge_rule")


def test_a_schedule_occurrence_is_identified_by_its_schedule_and_scheduled_time_keyless_routes_key_by_id():
    event, message = only_message("schedule_tick")
    retry = {**sample("schedule_tick"), "attemptNumber": "2", "executionId": "other"}

    assert event.event_id.endswith("magnetar-ingest-tick@2026-11-24T20:05:00Z")
    assert message.key == event.event_id
    assert message.payload == b'{"tick":true}'
    assert once_key(read_events(retry)[0]) == message.once_key


def test_producer_names_are_per_source_and_once_keys_per_event_of_bounded_length():
    sns, message = only_message("sns_notification")
    other = replace(sns, event_id="another-message-id")

    assert message.producer_name == f"ingest-sns-{sns.name}" == producer_name(other)
    assert once_key(sns) != once_key(other)
    assert once_key(sns).startswith("sns-") and len(once_key(sns)) == 36
    assert len(once_key(replace(sns, event_id="k" * 2000))) == 36


def test_an_s3_test_event_reads_as_no_events():
    test_event = {"Service": "Amazon S3", "Event": "s3:TestEvent", "Bucket": "b"}
    assert read_events(test_event) == []


@pytest.mark.parametrize(
    ("event", "complaint"),
    [
        (sample("bad_s3_object_removed"), "only ObjectCreated events"),
        ({"Records": []}, "non-empty list"),
        ({"Records": [{"eventSource": "aws:sqs"}]}, "neither aws:s3 nor aws:sns"),
        ({"Records": [{"EventSource": "aws:sns", "Sns": {"TopicArn": "t"}}]}, "MessageId"),
        ({**sample("eventbridge_rule"), "time": "yesterday"}, "not an ISO 8601 time"),
        ({"hello": "world"}, "Not an inbound event"),
        ([1, 2], "JSON object"),
    ],
    ids=["object-removed", "no-records", "sqs", "sns-no-id", "bad-time", "unknown", "list"],
)
def test_a_malformed_event_is_refused_naming_what_is_wrong(event, complaint):
    with pytest.raises(InvalidMessage, match=complaint):
        read_events(event)


def test_an_event_no_route_takes_is_refused_naming_its_source():
    (event,) = read_events(sample("s3_object_created"))
    others = routes_from_json('[{"source": "s3", "name": "another-bucket", "topic": "t"}]')

    with pytest.raises(InvalidMessage, match="'magnetar-inbound-demo'.*INGEST_ROUTES"):
        route_for(others, event)


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("{", "not JSON"),
        ('{"source": "s3"}', "JSON list"),
        ('[{"source": "sqs", "topic": "t"}]', r"INGEST_ROUTES\[0\].source"),
        ('[{"source": "s3", "topic": "bad!name"}]', r"INGEST_ROUTES\[0\].topic"),
        ('[{"source": "s3", "topic": "t", "keys": "k"}]', "unknown fields"),
        ('[{"source": "s3", "topic": "t", "key": 3}]', "key must be"),
        ('[{"source": "s3", "topic": "t", "properties": "size"}]', "properties must be"),
    ],
)
def test_bad_route_configuration_is_refused_naming_the_route_and_field(text, complaint):
    with pytest.raises(InvalidRoutes, match=complaint):
        routes_from_json(text)


def test_no_configuration_means_no_routes():
    assert routes_from_json("") == () and routes_from_json("[]") == ()


def test_the_templates_default_routes_parse_and_its_schedule_input_reads_as_a_schedule_event():
    template = LocalTemplate()
    routes = routes_from_json(template.functions["IngestFunction"].environment["INGEST_ROUTES"])
    events = template.document["Resources"]["IngestFunction"]["Properties"]["Events"]
    tick = events["Tick"]["Properties"]["Input"]
    for attribute, value in {
        "schedule-arn": "arn:aws:scheduler:us-east-1:123456789012:schedule/default/tick",
        "scheduled-time": "2026-11-24T20:05:00Z",
        "execution-id": "d32c5kddcf5bb8c3",
        "attempt-number": "1",
    }.items():
        tick = tick.replace(f"<aws.scheduler.{attribute}>", value)

    (event,) = read_events(json.loads(tick))
    assert [r.kind for r in routes] == ["s3", "sns", "eventbridge", "schedule"]
    assert route_for(routes, event).message(event).payload == b'{"tick":true}'
