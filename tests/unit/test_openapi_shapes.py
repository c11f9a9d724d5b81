"""openapi.yaml gives the contract's shapes: produce bodies, producer registration,
heartbeat and release, uploads, policy values, receive answers, health."""

from __future__ import annotations

from typing import Any

import pytest
from openapi_support import load_openapi, operation_at, query_parameters, resolve


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return load_openapi()


def test_produce_takes_json_messages_an_entry_ref_a_binary_entry_or_framed_entries(
    document,
):
    produce = operation_at(document, "post", "/v1/{domain}/{tenant}/{namespace}/{topic}/messages")
    content = produce["requestBody"]["content"]
    assert set(content) == {
        "application/json",
        "application/vnd.magnetar.entry",
        "application/vnd.magnetar.entries",
    }
    assert content["application/vnd.magnetar.entry"]["schema"] == {
        "type": "string",
        "format": "binary",
    }
    framed = content["application/vnd.magnetar.entries"]["schema"]
    assert (framed["type"], framed["format"]) == ("string", "binary")
    body, by_reference = (
        resolve(document, shape) for shape in content["application/json"]["schema"]["oneOf"]
    )
    assert body["required"] == ["messages"]
    assert by_reference["required"] == ["entryRef"]
    message = resolve(document, body["properties"]["messages"]["items"])
    assert {"payload", "key", "orderingKey", "properties", "eventTime", "deliverAt"} <= set(
        message["properties"]
    )
    single, many = (
        resolve(document, shape)
        for shape in produce["responses"]["200"]["content"]["application/json"]["schema"]["anyOf"]
    )
    assert set(many["required"]) == {"results", "committed"}
    result = single
    assert set(result["required"]) == {
        "messageIds",
        "ledgerId",
        "entryId",
        "partition",
        "topic",
        "duplicate",
    }
    assert result["properties"]["duplicate"]["type"] == "boolean"
    epoch = query_parameters(document, produce)["epoch"]
    assert epoch["required"] is False and epoch["schema"]["type"] == "integer"


def test_create_producer_takes_an_access_mode_and_answers_a_registration(document):
    register = operation_at(document, "post", "/v1/{domain}/{tenant}/{namespace}/{topic}/producers")
    request = resolve(document, register["requestBody"]["content"]["application/json"]["schema"])
    assert request["properties"]["accessMode"]["enum"] == [
        "Shared",
        "Exclusive",
        "ExclusiveWithFencing",
        "WaitForExclusive",
    ]
    assert request["properties"]["waitMs"]["maximum"] == 20000
    registration = resolve(
        document, register["responses"]["200"]["content"]["application/json"]["schema"]
    )
    assert set(registration["required"]) == {
        "producerName",
        "epoch",
        "lastSequenceId",
        "maxMessageSize",
        "deduplication",
        "leaseMs",
        "topic",
    }
    assert registration["properties"]["lastSequenceId"]["minimum"] == -1
    conflict = resolve(document, register["responses"]["409"])
    assert "ProducerFenced" in conflict["description"] and "ProducerBusy" in conflict["description"]
    names = document["components"]["schemas"]["Error"]["properties"]["error"]["enum"]
    assert {"ProducerFenced", "ProducerBusy"} <= set(names)


def test_heartbeat_requires_the_epoch_and_release_answers_released(document):
    base = "/v1/{domain}/{tenant}/{namespace}/{topic}/producers/{producerName}"
    heartbeat = operation_at(document, "post", f"{base}/heartbeat")
    assert query_parameters(document, heartbeat)["epoch"]["required"] is True
    beat = resolve(document, heartbeat["responses"]["200"]["content"]["application/json"]["schema"])
    assert beat["required"] == ["epoch"]
    release = operation_at(document, "delete", base)
    assert query_parameters(document, release)["epoch"]["required"] is False
    released = resolve(
        document, release["responses"]["200"]["content"]["application/json"]["schema"]
    )
    assert released["required"] == ["released"]


def test_uploads_answer_a_presigned_url_and_the_entry_ref(document):
    upload = operation_at(document, "post", "/v1/{domain}/{tenant}/{namespace}/{topic}/uploads")
    shape = resolve(document, upload["responses"]["200"]["content"]["application/json"]["schema"])
    assert set(shape["required"]) == {"uploadUrl", "entryRef", "expiresInSeconds"}


@pytest.mark.parametrize(
    ("path", "schema"),
    [
        ("/admin/v2/namespaces/{tenant}/{namespace}/deduplication", {"type": "boolean"}),
        (
            "/admin/v2/namespaces/{tenant}/{namespace}/maxMessageSize",
            {"type": "integer", "minimum": 1024, "maximum": 104857600},
        ),
        (
            "/admin/v2/{domain}/{tenant}/{namespace}/{topic}/deduplicationEnabled",
            {"type": "boolean"},
        ),
    ],
)
def test_policy_routes_take_and_answer_the_bare_json_value(document, path, schema):
    setter = operation_at(document, "post", path)
    assert set(setter["responses"]) & {"200", "204"} == {"204"}
    for shape in (
        setter["requestBody"]["content"]["application/json"]["schema"],
        operation_at(document, "get", path)["responses"]["200"]["content"]["application/json"][
            "schema"
        ],
    ):
        resolved = resolve(document, shape)
        assert {k: resolved[k] for k in schema} == schema


def test_retention_ttl_and_delayed_delivery_routes_take_pulsars_shapes(document):
    schemas = document["components"]["schemas"]
    assert set(schemas["RetentionPolicies"]["properties"]) == {
        "retentionTimeInMinutes",
        "retentionSizeInMB",
    }
    assert schemas["MessageTTL"]["minimum"] == 0
    delayed = schemas["DelayedDeliveryPolicies"]
    assert set(delayed["properties"]) == {"active", "tickTime", "maxDeliveryDelayInMillis"}
    assert delayed["required"] == ["active"] and delayed["properties"]["tickTime"]["minimum"] == 1
    topic = "/admin/v2/{domain}/{tenant}/{namespace}/{topic}"
    set_ttl = operation_at(document, "post", f"{topic}/messageTTL")
    assert query_parameters(document, set_ttl)["messageTTL"]["required"] is False
    for policy in ("retention", "messageTTL"):
        get = operation_at(document, "get", f"{topic}/{policy}")
        assert {"200", "204"} <= set(get["responses"])
        assert query_parameters(document, get)["applied"]["schema"]["type"] == "boolean"


def test_receive_answers_the_json_or_the_entry_shape(document):
    receive = operation_at(
        document,
        "post",
        "/v1/{domain}/{tenant}/{namespace}/{topic}/subscriptions/{subscription}/consumers/{consumerId}/receive",
    )
    request = resolve(document, receive["requestBody"]["content"]["application/json"]["schema"])
    assert request["properties"]["format"]["enum"] == ["json", "entry"]
    assert request["properties"]["waitMs"]["maximum"] == 20000
    shapes = receive["responses"]["200"]["content"]["application/json"]["schema"]["oneOf"]
    required = [set(resolve(document, shape)["required"]) for shape in shapes]
    assert required == [{"messages"}, {"entries"}]
    entry = document["components"]["schemas"]["ReceivedEntry"]
    assert entry["properties"]["batchIndexes"]["nullable"] is True
    assert entry["properties"]["data"]["nullable"] is True
    assert entry["properties"]["url"]["nullable"] is True
    assert {"data", "url"} <= set(entry["required"])


def test_health_answers_ok_as_text(document):
    health = operation_at(document, "get", "/admin/v2/brokers/health")
    assert health["responses"]["200"]["content"]["text/plain"]["schema"]["enum"] == ["ok"]
