"""Schema evolution through the embedded stack (issue 15, registry side): under BACKWARD a
producer whose record adds a required field is refused with IncompatibleSchema and nothing
is stored; under ALWAYS_COMPATIBLE the same producer registers version 1, and its messages
carry that version to the consumer."""

from __future__ import annotations

import json
import urllib.request
import uuid

import pytest

import magnetar as pulsar
from magnetar.schema import Integer, JsonSchema, Record, String

pytestmark = pytest.mark.emulator


class Reading(Record):
    sensor = String(required=True)
    value = Integer()


def evolved() -> type[Record]:
    """``Reading`` (the same record name) with a field a BACKWARD reader cannot fill in."""

    class Reading(Record):
        sensor = String(required=True)
        value = Integer()
        unit = String(required=True)  # required, no default

    return Reading


ReadingWithUnit = evolved()


def admin(url: str, method: str, body: object = None) -> object:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(request, timeout=15) as response:
        raw = response.read()
    return json.loads(raw) if raw else None


def test_an_evolution_refused_under_backward_is_accepted_under_always_compatible(local_stack, client):  # fmt: skip
    ns = f"public/evolve-{uuid.uuid4().hex[:8]}"
    base = f"{local_stack.url}/admin/v2"
    admin(f"{base}/namespaces/{ns}", "PUT")
    admin(f"{base}/namespaces/{ns}/schemaCompatibilityStrategy", "PUT", "BACKWARD")
    topic = f"persistent://{ns}/readings"
    consumer = client.subscribe(topic, "s", schema=JsonSchema(Reading))
    client.create_producer(topic, schema=JsonSchema(Reading)).send(Reading(sensor="a", value=1))

    with pytest.raises(pulsar.exceptions.IncompatibleSchema, match="unit"):
        client.create_producer(topic, schema=JsonSchema(ReadingWithUnit))
    versions = admin(f"{base}/schemas/{ns}/readings/schemas", "GET")
    assert [v["version"] for v in versions["getSchemaResponses"]] == [0]  # type: ignore[index]

    admin(f"{base}/namespaces/{ns}/schemaCompatibilityStrategy", "PUT", "ALWAYS_COMPATIBLE")
    evolved = client.create_producer(topic, schema=JsonSchema(ReadingWithUnit))
    evolved.send(ReadingWithUnit(sensor="b", value=2, unit="C"))

    first, second = consumer.receive(15000), consumer.receive(15000)
    assert (first.value().sensor, first.schema_version()) == ("a", "\x00" * 8)
    assert (second.value().sensor, second.schema_version()) == ("b", "\x00" * 7 + "\x01")
