"""openapi.yaml is as strict as the service: what the service refuses with 400, 412 or 422
for its form (a partition suffix out of range, a negative count, an Avro definition that is
not JSON, a seek with both or neither target) the document does not admit either, so a
request built from the document is not refused for its form (the fuzz lane's
``positive_data_acceptance``)."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from typing import Any

import pytest
from jsonschema import FormatChecker
from openapi_schema_validator import OAS30Validator
from openapi_support import load_openapi

from magnetar_core.domain.errors import InvalidTopicName, MagnetarError
from magnetar_core.domain.functions.config import _CLASS as FUNCTION_CLASS
from magnetar_core.domain.functions.config import check_function_name
from magnetar_core.domain.retention import RetentionPolicies
from magnetar_core.domain.schemas.avro import check_definition
from magnetar_core.domain.schemas.data import parse_payload
from magnetar_core.domain.security.model import Role
from magnetar_core.domain.triggers.spec import check_trigger_name
from magnetar_local.memory_service import MemoryService
from magnetar_wire.names import TopicName

TOPIC = "/admin/v2/persistent/public/default/t"


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return load_openapi()


def _valid(document: dict[str, Any], component: str, instance: Any) -> bool:
    """Whether ``instance`` is valid against ``#/components/schemas/<component>``, the
    ``avro-schema`` format checked as the service reads a definition."""
    checker = FormatChecker()
    checker.checks("avro-schema", raises=ValueError)(
        lambda text: check_definition(json.loads(text)) is None
    )
    root = {"$ref": f"#/components/schemas/{component}", "components": document["components"]}
    return OAS30Validator(root, format_checker=checker).is_valid(instance)


def _service_takes_topic(local: str) -> bool:
    try:
        TopicName.parse(f"persistent://public/default/{local}")
    except InvalidTopicName:
        return False
    return True


@pytest.mark.parametrize(
    "local",
    [
        "orders",
        "orders-partition-0",
        "orders-partition-7",
        "orders-partition-999999999",
        "orders-partition-1999999999",
        "orders-partition-2147483647",
        "orders-partition-2147483648",
        "orders-partition-2469790485",
        "orders-partition-9999999999",
        "orders-partition-01",
        "orders-partition--1",
        "-partition-3",
        "my-partition-key",
        "orders-partition-",
        "a-partition-1-partition-2",
        "a-partition-1-partition-x",
        "a-partition-x-partition-08",
    ],
)
def test_the_topic_pattern_admits_a_partition_suffix_exactly_when_the_service_does(document, local):
    pattern = document["components"]["parameters"]["topic"]["schema"]["pattern"]
    assert bool(re.search(pattern, local)) == _service_takes_topic(local), local


def _call(url: str, method: str, path: str, body: Any = None) -> tuple[int, dict]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url + path, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - local
            text = response.read()
            return response.status, json.loads(text) if text else {}
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


COUNTS = [
    ("post", "/subscription/{subscription}/skip/{numMessages}", "numMessages"),
    ("post", "/subscription/{subscription}/expireMessages/{expireTimeInSeconds}",
     "expireTimeInSeconds"),
    ("post", "/all_subscription/expireMessages/{expireTimeInSeconds}", "expireTimeInSeconds"),
    ("post", "/subscription/{subscription}/resetcursor/{timestamp}", "timestamp"),
    ("get", "/subscription/{subscription}/position/{messagePosition}", "messagePosition"),
]  # fmt: skip


def _minimum(document: dict[str, Any], suffix: str, name: str) -> int:
    item = document["paths"]["/admin/v2/{domain}/{tenant}/{namespace}/{topic}" + suffix]
    (parameter,) = [p for p in item["parameters"] if p.get("name") == name]
    return parameter["schema"]["minimum"]


def test_subscription_verbs_numbers_have_the_minimum_below_which_the_service_refuses(document):
    with MemoryService() as svc:
        assert _call(svc.url, "PUT", TOPIC)[0] == 204
        assert _call(svc.url, "PUT", TOPIC + "/subscription/s")[0] == 204
        for method, suffix, name in COUNTS:
            least = _minimum(document, suffix, name)
            path = TOPIC + suffix.replace("{subscription}", "s")
            below = _call(svc.url, method.upper(), path.replace("{" + name + "}", str(least - 1)))
            at = _call(svc.url, method.upper(), path.replace("{" + name + "}", str(least)))
            assert below[0] == 412 and name in below[1]["message"], (suffix, below)
            assert at[0] in (200, 204, 404), (suffix, at)  # 404: no entry at that position


@pytest.mark.parametrize(
    "body",
    [
        {"type": "AVRO"},
        {"type": "AVRO", "schema": ""},
        {"type": "JSON", "schema": "{}"},
        {"type": "JSON", "schema": "not json"},
        {"type": "AVRO", "schema": '"int"'},
        {"type": "AVRO", "schema": '["null", "string"]'},
        {"type": "JSON", "schema": '{"type": "record", "name": "R", "fields": []}'},
        {"type": "PROTOBUF", "schema": ""},
        {"type": "KEY_VALUE", "schema": ""},
        {"type": "STRING"},
        {"type": "AVRO", "schema": '"int"', "extra": 1},
        {"type": "AVRO", "schema": '"int"', "properties": {"k": "v"}},
    ],
    ids=json.dumps,
)
def test_a_schema_payload_is_valid_exactly_when_the_service_reads_it(document, body):
    try:
        parse_payload(body, timestamp_ms=0)
        taken = True
    except MagnetarError:
        taken = False
    assert _valid(document, "PostSchemaPayload", body) == taken


@pytest.mark.parametrize(
    "body", [{}, {"messageId": "earliest", "timestamp": 0}, {"timestamp": -1}], ids=json.dumps
)
def test_a_seek_with_neither_both_or_a_negative_target_is_invalid_and_refused(document, body):
    assert not _valid(document, "SeekRequest", body)
    with MemoryService() as svc:
        _call(svc.url, "PUT", TOPIC)
        base = "/v1/persistent/public/default/t/subscriptions/s/consumers"
        status, handle = _call(svc.url, "POST", base, {"subscriptionType": "Exclusive"})
        assert status == 200, handle
        status, error = _call(svc.url, "POST", f"{base}/{handle['consumerId']}/seek", body)
    assert (status, error["error"]) == (400, "InvalidMessage")


@pytest.mark.parametrize("body", [{"messageId": "earliest"}, {"timestamp": 0}], ids=json.dumps)
def test_a_seek_with_one_target_is_valid(document, body):
    assert _valid(document, "SeekRequest", body)


def _takes(check: Any, value: str) -> bool:
    try:
        check(value)
    except MagnetarError:
        return False
    return True


NAMES = ["f", "my_fn-2", "a" * 64, "a" * 65, "", "\n", "\u00d2", "BJy:u", "a.b", "a b", "x=1"]
ROLES = ["app", "arn:aws:iam::123456789012:role/r", "a b", " a", "a ", "\u00a0a", "a\u2003",
         "\x06x", "x\x7f", "caf\u00e9", "*L]", "\x85a", "r" * 1024, "r" * 1025, ""]  # fmt: skip


@pytest.mark.parametrize("name", NAMES, ids=repr)
def test_the_function_and_trigger_name_patterns_admit_exactly_what_the_service_takes(
    document, name
):
    parameters = document["components"]["parameters"]
    for parameter, check in (
        ("functionName", check_function_name),
        ("triggerName", check_trigger_name),
    ):
        schema = parameters[parameter]["schema"]
        admitted = bool(re.search(schema["pattern"], name)) and len(name) <= schema["maxLength"]
        assert admitted == _takes(check, name), (parameter, name)


@pytest.mark.parametrize("role", ROLES, ids=repr)
def test_a_role_is_valid_exactly_when_the_service_takes_it(document, role):
    assert _valid(document, "RoleName", role) == _takes(Role, role)


@pytest.mark.parametrize(
    "body",
    [{}, {"retentionTimeInMinutes": 0, "retentionSizeInMB": 0}, {"retentionTimeInMinutes": -1, "retentionSizeInMB": -1},
     {"retentionTimeInMinutes": 1440, "retentionSizeInMB": 10}, {"retentionTimeInMinutes": 0, "retentionSizeInMB": 2**63 - 2},
     {"retentionTimeInMinutes": 5}, {"retentionSizeInMB": -1}, {"retentionTimeInMinutes": -2, "retentionSizeInMB": 1},
     {"retentionTimeInMinutes": 2**31, "retentionSizeInMB": 1}, {"retentionTimeInMinutes": 1, "retentionSizeInMB": 2**63}],
    ids=json.dumps,
)  # fmt: skip
def test_a_retention_policy_is_valid_exactly_when_the_service_takes_it(document, body):
    assert _valid(document, "RetentionPolicies", body) == _takes(RetentionPolicies.from_body, body)


@pytest.mark.parametrize(
    "local", ["orders", "orders-partition-3", "orders-partition-x", "orders-partition-01", "a-partition-1-partition-x"]
)  # fmt: skip
def test_the_base_topic_pattern_admits_exactly_the_names_that_are_no_partitions_name(
    document, local
):
    pattern = document["components"]["parameters"]["baseTopic"]["schema"]["pattern"]
    name = (
        TopicName.parse(f"persistent://public/default/{local}")
        if _service_takes_topic(local)
        else None
    )
    assert bool(re.search(pattern, local)) == (name is not None and name.partition_index < 0)


@pytest.mark.parametrize(
    "body", [{"stringValue": "a"}, {"byteValue": "YQ=="}, {"key": "k", "stringValue": ""}, {}, {"byteValue": "", "stringValue": ""}, {"value": "a"}],
    ids=json.dumps,
)  # fmt: skip
def test_a_state_body_is_valid_exactly_when_the_service_takes_it(document, body):
    path = "/admin/v3/functions/{tenant}/{namespace}/{name}/state/{key}"
    schema = document["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]
    with MemoryService() as svc:
        status, _ = _call(svc.url, "POST", "/admin/v3/functions/public/default/f/state/k", body)
    root = {**schema, "components": document["components"]}
    assert OAS30Validator(root).is_valid(body) == (status != 400), status


@pytest.mark.parametrize("name", ["m.C", "m", "_m.f_1", "", "1m", "m.", "m..C", "m-C"])
def test_a_function_class_name_is_valid_exactly_when_the_service_takes_it(document, name):
    pattern = document["components"]["schemas"]["FunctionRequest"]["properties"]["className"][
        "pattern"
    ]
    assert bool(re.search(pattern, name)) == bool(FUNCTION_CLASS.match(name))
