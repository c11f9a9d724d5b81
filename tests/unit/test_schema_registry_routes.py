"""Issue 15's schema registry on the memory service, through the admin handler, on Pulsar's
paths: versions 0, 1, 2... per topic, an equal schema answering its version, the
namespace's strategy deciding (409 IncompatibleSchema, nothing stored), compatibility tests
and version look-ups that store nothing, DELETE's tombstone, and the schema policies."""

from __future__ import annotations

import json

import pytest
from edge_http import assert_error, call
from schema_samples import V1, V2_DEFAULT, V2_REQUIRED

from magnetar_local.memory_service import MemoryService

NS = "public/default"


@pytest.fixture(scope="module")
def svc():
    with MemoryService() as service:
        yield service


@pytest.fixture
def topic(request) -> str:
    """A topic of the test's own (the service is shared by the module)."""
    return request.node.name.removeprefix("test_")[:80]


def schemas(svc, topic: str, rest: str, method: str = "GET", body: object = None):
    url = f"{svc.url}/admin/v2/schemas/{NS}/{topic}/{rest}"
    data = None if body is None else json.dumps(body).encode()
    return call(url, method, data)


def policy(svc, name: str, method: str = "GET", body: object = None, ns: str = NS):
    url = f"{svc.url}/admin/v2/namespaces/{ns}/{name}"
    return call(url, method, None if body is None else json.dumps(body).encode())


def test_posted_schemas_get_versions_and_an_equal_one_answers_its_version(svc, topic):
    assert schemas(svc, topic, "schema", "POST", V1)[:2] == (200, {"version": {"version": 0}})
    assert schemas(svc, topic, "schema", "POST", V2_DEFAULT)[1] == {"version": {"version": 1}}
    assert schemas(svc, topic, "schema", "POST", V1)[1] == {"version": {"version": 0}}
    status, latest, _ = schemas(svc, topic, "schema")
    assert (status, latest["version"], latest["type"], latest["data"]) == (
        200, 1, "AVRO", V2_DEFAULT["schema"])  # fmt: skip
    assert schemas(svc, topic, "schema/0")[1]["data"] == V1["schema"]
    every = schemas(svc, topic, "schemas")[1]["getSchemaResponses"]
    assert [v["version"] for v in every] == [0, 1]
    assert schemas(svc, topic, "version", "POST", V1)[1] == {"version": 0}


def test_an_incompatible_schema_is_refused_with_409_and_nothing_is_stored(svc, topic):
    schemas(svc, topic, "schema", "POST", V1)
    answer = schemas(svc, topic, "schema", "POST", V2_REQUIRED)
    assert_error(answer, 409, "IncompatibleSchema", "FULL", "age")
    assert [v["version"] for v in schemas(svc, topic, "schemas")[1]["getSchemaResponses"]] == [0]
    check = schemas(svc, topic, "compatibility", "POST", V2_REQUIRED)[1]
    assert check == {"compatibility": False, "schemaCompatibilityStrategy": "FULL"}
    assert schemas(svc, topic, "compatibility", "POST", V2_DEFAULT)[1]["compatibility"] is True
    assert len(schemas(svc, topic, "schemas")[1]["getSchemaResponses"]) == 1  # tests store nothing


def test_the_namespace_strategy_decides_and_defaults_to_undefined_applying_full(svc, topic):
    assert policy(svc, "schemaCompatibilityStrategy")[:2] == (200, "UNDEFINED")
    ns = "public/strategies"
    assert call(f"{svc.url}/admin/v2/namespaces/{ns}", "PUT")[0] == 204
    assert policy(svc, "schemaCompatibilityStrategy", "PUT", "ALWAYS_COMPATIBLE", ns)[0] == 204
    assert policy(svc, "schemaCompatibilityStrategy", ns=ns)[1] == "ALWAYS_COMPATIBLE"
    url = f"{svc.url}/admin/v2/schemas/{ns}/{topic}"
    call(url + "/schema", "POST", json.dumps(V1).encode())
    answer = call(url + "/schema", "POST", json.dumps(V2_REQUIRED).encode())
    assert answer[:2] == (200, {"version": {"version": 1}})
    assert_error(policy(svc, "schemaCompatibilityStrategy", "PUT", "LOOSE", ns),
                 400, "InvalidMessage", "BACKWARD_TRANSITIVE")  # fmt: skip


def test_delete_leaves_a_tombstone_and_the_next_schema_starts_afresh(svc, topic):
    schemas(svc, topic, "schema", "POST", V1)
    assert schemas(svc, topic, "schema", "DELETE")[:2] == (200, {"version": 1})
    assert_error(schemas(svc, topic, "schema"), 404, "NotFound", "Schema is deleted")
    assert schemas(svc, topic, "schemas")[1] == {"getSchemaResponses": []}
    assert schemas(svc, topic, "schema", "POST", V2_REQUIRED)[1] == {"version": {"version": 2}}
    assert_error(schemas(svc, topic, "schema/1"), 404, "NotFound", "version 1")


def test_bad_requests_are_named_and_change_nothing(svc, topic):
    assert_error(schemas(svc, topic, "schema"), 404, "NotFound", "Schema not found")
    assert_error(schemas(svc, topic, "schema", "POST", {"type": "BYTES", "schema": ""}),
                 406, "NotAcceptable", "BYTES")  # fmt: skip
    assert_error(schemas(svc, topic, "schema", "POST", {"type": "AVRO", "schema": "{nope"}),
                 422, "InvalidSchemaData")  # fmt: skip
    assert_error(schemas(svc, topic, "schema", "POST", ["AVRO"]), 400, "InvalidMessage")
    assert_error(schemas(svc, topic, "schema/x"), 400, "InvalidMessage", "version")
    assert_error(schemas(svc, topic, "schema", "DELETE"), 404, "NotFound")
    assert_error(schemas(svc, topic, "version", "POST", V1), 404, "NotFound")
    assert schemas(svc, topic, "schemas")[1] == {"getSchemaResponses": []}


def test_the_auto_update_and_validation_flags_default_and_take_booleans(svc):
    assert policy(svc, "isAllowAutoUpdateSchema")[1] is True
    assert policy(svc, "schemaValidationEnforced")[1] is False
    assert_error(policy(svc, "schemaValidationEnforced", "POST", "yes"), 400, "InvalidMessage")
    assert_error(policy(svc, "isAllowAutoUpdateSchema", ns="public/none"), 404, "NotFound")
