"""Schemas through the embedded stack (issue 15, schemas client side): a JSON record and an
Avro record produced and consumed over the real HTTP API, S3 entries and DynamoDB index."""

from __future__ import annotations

import uuid

import pytest

import magnetar as pulsar
from magnetar.schema import AvroSchema, Integer, JsonSchema, Record, String

pytestmark = pytest.mark.emulator


class Reading(Record):
    sensor = String(required=True)
    value = Integer()


def test_a_json_and_an_avro_record_are_produced_and_consumed_through_the_stack(client):
    json_topic = f"persistent://public/default/schema-json-{uuid.uuid4().hex[:8]}"
    avro_topic = f"persistent://public/default/schema-avro-{uuid.uuid4().hex[:8]}"
    json_consumer = client.subscribe(json_topic, "s", schema=JsonSchema(Reading))
    avro_reader = client.create_reader(avro_topic, pulsar.MessageId.earliest,
                                       schema=AvroSchema(Reading))  # fmt: skip

    client.create_producer(json_topic, schema=JsonSchema(Reading)).send(
        Reading(sensor="j", value=1)
    )
    client.create_producer(avro_topic, schema=AvroSchema(Reading)).send(
        Reading(sensor="a", value=2)
    )

    assert json_consumer.receive(15000).value() == Reading(sensor="j", value=1)
    assert avro_reader.read_next(15000).value() == Reading(sensor="a", value=2)
