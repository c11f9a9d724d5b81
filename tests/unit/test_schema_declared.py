"""Issue 15: producers and consumers declare their schema at creation, on the memory
service. A producer registers a new schema (auto update on) or is refused with
IncompatibleSchema having stored nothing (no version, no producer); BYTES/none producers are
refused under schemaValidationEnforced; consumers register only on a topic without a
schema, else are checked; the answers carry ``schemaVersion``; through the SDK the version
travels in each entry's metadata to ``Message.schema_version()``."""

from __future__ import annotations

import json
import logging

import pytest
from edge_http import assert_error, call
from schema_samples import V1, V2_DEFAULT, V2_REQUIRED, avro

import magnetar as pulsar
from magnetar._consumer.writer_schemas import WriterSchemas
from magnetar.schema import AUTO_CONSUME, Integer, JsonSchema, Record, String, StringSchema
from magnetar_local.memory_service import MemoryService


@pytest.fixture(scope="module")
def svc():
    with MemoryService() as service:
        yield service


@pytest.fixture
def topic(request) -> str:
    return request.node.name.removeprefix("test_")[:80]


def produce_as(svc, topic: str, schema: dict | None, ns: str = "public/default",
               mode: str = "Shared"):  # fmt: skip
    body = {"accessMode": mode} if schema is None else {"accessMode": mode, "schema": schema}
    return call(f"{svc.url}/v1/persistent/{ns}/{topic}/producers", body=json.dumps(body).encode())


def consume_as(svc, topic: str, schema: dict | None):
    body = {"subscriptionType": "Shared", **({"schema": schema} if schema else {})}
    url = f"{svc.url}/v1/persistent/public/default/{topic}/subscriptions/s/consumers"
    return call(url, body=json.dumps(body).encode())


def versions(svc, topic: str, ns: str = "public/default") -> list[int]:
    answer = call(f"{svc.url}/admin/v2/schemas/{ns}/{topic}/schemas", "GET")[1]
    return [v["version"] for v in answer["getSchemaResponses"]]


def test_producers_register_new_schemas_and_reuse_equal_ones(svc, topic):
    assert produce_as(svc, topic, V1)[1]["schemaVersion"] == 0
    assert produce_as(svc, topic, V2_DEFAULT)[1]["schemaVersion"] == 1
    assert produce_as(svc, topic, V1)[1]["schemaVersion"] == 0
    assert produce_as(svc, topic, None)[1]["schemaVersion"] is None
    assert versions(svc, topic) == [0, 1]


def test_an_incompatible_producer_is_refused_and_stores_nothing(svc, topic):
    produce_as(svc, topic, V1)
    refused = produce_as(svc, topic, V2_REQUIRED, mode="Exclusive")
    assert_error(refused, 409, "IncompatibleSchema", "age")
    assert versions(svc, topic) == [0]
    assert produce_as(svc, topic, V1, mode="Exclusive")[0] == 200  # the refused took no lease


def test_a_creation_refused_for_another_reason_stores_no_schema(svc, topic):
    assert_error(produce_as(svc, topic, V1, mode="Solo"), 400, "InvalidMessage", "accessMode")
    body = {"subscriptionType": "Sometimes", "schema": V1}
    url = f"{svc.url}/v1/persistent/public/default/{topic}/subscriptions/s/consumers"
    assert call(url, body=json.dumps(body).encode())[0] == 400
    assert_error(produce_as(svc, topic, {"type": "AVRO", "schema": '{"type": "record"}'}),
                 422, "InvalidSchemaData", "name")  # fmt: skip
    assert versions(svc, topic) == []


def test_without_auto_update_a_new_schema_must_be_posted_first(svc, topic):
    ns = "public/no-auto-update"
    call(f"{svc.url}/admin/v2/namespaces/{ns}", "PUT")
    call(f"{svc.url}/admin/v2/namespaces/{ns}/isAllowAutoUpdateSchema", body=b"false")
    assert produce_as(svc, topic, V1, ns)[1]["schemaVersion"] == 0  # the first one registers
    assert_error(produce_as(svc, topic, V2_DEFAULT, ns), 409, "IncompatibleSchema",
                 "isAllowAutoUpdateSchema")  # fmt: skip
    assert versions(svc, topic, ns) == [0]


def test_schema_validation_enforced_refuses_producers_without_a_schema(svc, topic):
    ns = "public/enforced"
    call(f"{svc.url}/admin/v2/namespaces/{ns}", "PUT")
    call(f"{svc.url}/admin/v2/namespaces/{ns}/schemaValidationEnforced", body=b"true")
    assert produce_as(svc, topic, None, ns)[0] == 200  # no schema yet: allowed
    produce_as(svc, topic, V1, ns)
    assert_error(produce_as(svc, topic, None, ns), 409, "IncompatibleSchema", "schemaValidationEnforced")  # fmt: skip
    assert_error(produce_as(svc, topic, {"type": "BYTES", "schema": ""}, ns), 409, "IncompatibleSchema")  # fmt: skip


def test_consumers_register_on_an_empty_topic_and_are_checked_otherwise(svc, topic):
    assert consume_as(svc, topic, V2_DEFAULT)[1]["schemaVersion"] == 0
    assert consume_as(svc, topic, avro())[1]["schemaVersion"] is None  # FULL-compatible: not stored
    assert_error(consume_as(svc, topic, avro({"name": "zip", "type": "long"})),
                 409, "IncompatibleSchema", "zip")  # fmt: skip
    assert versions(svc, topic) == [0]


class Reading(Record):
    sensor = String(required=True)
    value = Integer()


class Other(Record):
    count = Integer(required=True)


def test_the_sdk_declares_its_schema_and_messages_carry_the_version(svc, topic):
    client = pulsar.Client(svc.url)
    try:
        consumer = client.subscribe(topic, "s", schema=JsonSchema(Reading))
        client.create_producer(topic, schema=JsonSchema(Reading)).send(Reading(sensor="a"))
        client.create_producer(topic).send(b"raw")
        first, second = consumer.receive(5000), consumer.receive(5000)
        assert (first.value().sensor, first.schema_version()) == ("a", "\x00" * 8)
        assert (second.data(), second.schema_version()) == (b"raw", "")
        with pytest.raises(pulsar.exceptions.IncompatibleSchema):  # readers are checked too
            client.create_reader(topic, pulsar.MessageId.earliest, schema=JsonSchema(Other))
    finally:
        client.close()


def test_auto_consume_decodes_each_message_with_its_writers_registered_version(svc, topic):
    client = pulsar.Client(svc.url)
    try:
        consumer = client.subscribe(topic, "s", schema=AUTO_CONSUME)
        client.create_producer(topic, schema=JsonSchema(Reading)).send(Reading(sensor="a"))
        client.create_producer(topic).send(b"raw")
        first, second = consumer.receive(5000), consumer.receive(5000)
        assert first.value() == {"sensor": "a", "value": None}  # JSON: decoded as a dict
        assert second.value() == b"raw"  # no schema: the bytes
    finally:
        client.close()


def test_auto_consume_reads_versions_from_before_a_delete_and_bytes_when_a_version_is_missing(svc, topic):  # fmt: skip
    client = pulsar.Client(svc.url)
    try:
        consumer = client.subscribe(topic, "s", schema=AUTO_CONSUME)
        client.create_producer(topic, schema=StringSchema()).send("text")
        call(f"{svc.url}/admin/v2/schemas/public/default/{topic}/schema", "DELETE")
        assert consumer.receive(5000).value() == "text"  # version 0 stays readable, as Pulsar
        writers = WriterSchemas(client._t, logging.getLogger("test"))
        assert writers.info(f"persistent://public/default/{topic}", 0) is not None
        assert writers.info(f"persistent://public/default/{topic}", 7) is None  # no such version
    finally:
        client.close()
