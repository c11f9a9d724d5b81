"""``schema=`` on producers, consumers and readers through the real engine in memory:
records sent with JSON and Avro come back as records from ``Message.value()``."""

from __future__ import annotations

import base64

import pytest

import magnetar as pulsar
from magnetar.schema import (
    AUTO_CONSUME,
    AvroSchema,
    Integer,
    JsonSchema,
    KeyValueEncodingType,
    KeyValueSchema,
    Record,
    String,
    StringSchema,
)


class Reading(Record):
    sensor = String(required=True)
    value = Integer()


def test_a_json_record_sent_is_received_as_a_record_with_its_json_bytes(client):
    consumer = client.subscribe("t", "s", schema=JsonSchema(Reading))
    client.create_producer("t", schema=JsonSchema(Reading)).send(Reading(sensor="a", value=1))

    msg = consumer.receive(5000)

    assert msg.value() == Reading(sensor="a", value=1)
    assert msg.data() == b'{\n "sensor": "a",\n "value": 1\n}'


def test_an_avro_record_is_read_back_by_a_reader_and_as_a_dict_by_auto_consume(client):
    schema = AvroSchema(Reading)
    producer = client.create_producer("t", schema=schema)
    producer.send_async(Reading(sensor="b", value=2), None)
    producer.flush()

    reader = client.create_reader("t", pulsar.MessageId.earliest, schema=schema)
    auto = client.create_reader("t", pulsar.MessageId.earliest, schema=AUTO_CONSUME)

    assert reader.read_next(5000).value() == Reading(sensor="b", value=2)
    # decoded with the writer's registered version (issue 15's registry)
    assert auto.read_next(5000).value() == {"sensor": "b", "value": 2}


def test_a_value_the_schema_refuses_raises_and_sends_nothing(client):
    consumer = client.subscribe("t", "s", schema=JsonSchema(Reading))
    producer = client.create_producer("t", schema=JsonSchema(Reading))

    with pytest.raises(TypeError, match="Invalid record obj"):
        producer.send({"sensor": "a"})
    producer.send(Reading(sensor="ok"))

    assert consumer.receive(5000).value().sensor == "ok"


def test_a_separated_key_value_sends_its_key_as_the_message_key(client):
    schema = KeyValueSchema(StringSchema(), JsonSchema(Reading), KeyValueEncodingType.SEPARATED)
    consumer = client.subscribe("t", "s", schema=schema)
    client.create_producer("t", schema=schema).send(("dev-1", Reading(sensor="c")))

    msg = consumer.receive(5000)

    assert msg.partition_key() == base64.b64encode(b"dev-1").decode()
    assert msg.value() == ("dev-1", Reading(sensor="c"))


def test_the_default_schema_still_gives_bytes_and_a_null_value_gives_none(client):
    consumer = client.subscribe("t", "s")
    producer = client.create_producer("t")
    producer.send(b"raw")
    producer.send(None, partition_key="k")

    assert consumer.receive(5000).value() == b"raw"
    assert consumer.receive(5000).value() is None
