"""The fuzz lane's own checks can fail: a rejected request that writes, and a 5xx, are caught
(run through ``run_case`` with exact requests against a MemoryService whose admin is broken
on purpose), its avro-schema format draws only definitions the service reads, and its
generation caches (generation_cache) key what they cache by what it draws."""

from __future__ import annotations

import re
import string

import generation_cache
import pytest
from fuzz_support import (
    AVRO_DEFINITIONS,
    SHORTEST_AVRO_DEFINITION,
    ReadBack,
    memory_state,
    run_case,
    schema,
)
from generation_cache import schema_key, too_short_for_its_format
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.strategies._internal import regex
from hypothesis.strategies._internal.strings import OneCharStringStrategy
from schemathesis.core.failures import FailureGroup
from schemathesis.generation.hypothesis.examples import generate_many

from magnetar_core.domain.errors import InvalidMessage
from magnetar_core.domain.schemas.data import parse_payload
from magnetar_core.services.admin import Admin
from magnetar_local.memory_service import MemoryService, topic_name

PARTITIONS = "/admin/v2/{domain}/{tenant}/{namespace}/{topic}/partitions"
NAMES = {"domain": "persistent", "tenant": "public", "namespace": "default", "topic": "t"}


@pytest.fixture
def svc():
    with MemoryService() as service:
        yield service


def _create_partitioned(svc: MemoryService) -> None:
    case = schema[PARTITIONS]["PUT"].Case(path_parameters=NAMES, body=2)
    run_case(case, svc.url, "checks", ReadBack(lambda: memory_state(svc)))


def _text(group: FailureGroup) -> str:
    return "\n".join(str(failure) for failure in group.exceptions)


def test_a_rejected_request_that_wrote_fails_the_lane(svc, monkeypatch):
    create = Admin.create_topic

    def writes_then_rejects(self, name, partitions):
        create(self, name, partitions)
        raise InvalidMessage("rejected after writing")

    monkeypatch.setattr(Admin, "create_topic", writes_then_rejects)
    with pytest.raises(FailureGroup) as failed:
        _create_partitioned(svc)
    assert "answered 400 but changed the stored state: changed ['topics']" in _text(failed.value)


def test_a_server_error_fails_the_lane(svc, monkeypatch):
    def breaks(self, name, partitions):
        raise RuntimeError("broken on purpose")

    monkeypatch.setattr(Admin, "create_topic", breaks)
    with pytest.raises(FailureGroup) as failed:
        _create_partitioned(svc)
    assert "Server error" in _text(failed.value)


def test_an_accepted_request_passes_the_lane(svc):
    _create_partitioned(svc)
    assert svc.engine.admin.partitions(topic_name("persistent/public/default/t")) == {
        "partitions": 2
    }


@settings(max_examples=50, derandomize=True, database=None)
@given(AVRO_DEFINITIONS)
def test_the_lanes_avro_schema_format_draws_definitions_the_service_reads(definition):
    assert len(definition) >= SHORTEST_AVRO_DEFINITION
    assert parse_payload({"type": "AVRO", "schema": definition}, timestamp_ms=0).definition == (
        definition
    )


def test_generation_cache_keys_a_bundled_definition_by_its_content_not_its_number():
    def parameter(number: int, pattern: str) -> dict:
        name = f"schema{number:06}"
        return {
            "allOf": [{"$ref": f"#/x-bundled/{name}"}],
            "examples": ["public"],
            "type": "string",
            "x-bundled": {name: {"type": "string", "pattern": pattern}},
        }

    names = "^[A-Za-z0-9_=:.\\-]+$"
    assert schema_key(parameter(47, names), {}) == schema_key(parameter(48, names), {})
    assert schema_key(parameter(47, names), {}) != schema_key(parameter(47, "^[a-z]+$"), {})
    root = {"x-bundled": {"schema000047": {"type": "integer"}}}
    assert schema_key(parameter(47, names), root) != schema_key(parameter(47, names), {})


def test_generation_cache_reuses_a_mapping_s_strategy_and_draws_what_a_new_one_draws():
    mapping = {"a": st.integers(), "b": st.text(max_size=4)}
    cached = generation_cache.fixed_dictionaries(mapping)
    assert generation_cache.fixed_dictionaries(dict(mapping)) is cached
    assert generation_cache.fixed_dictionaries({**mapping, "b": st.text()}) is not cached
    fresh = st.fixed_dictionaries(mapping)
    assert generate_many(cached, 20) == generate_many(fresh, 20)


def test_generation_cache_knows_an_avro_schema_string_shorter_than_any_definition_has_no_value():
    def avro(**lengths: int) -> dict:
        return {"type": "string", "format": "avro-schema", "description": "d", **lengths}

    assert len('"int"') == SHORTEST_AVRO_DEFINITION
    for length in range(SHORTEST_AVRO_DEFINITION):
        assert too_short_for_its_format(avro(minLength=length, maxLength=length))
    assert not too_short_for_its_format(avro(maxLength=SHORTEST_AVRO_DEFINITION))
    assert not too_short_for_its_format(avro(minLength=1))
    assert not too_short_for_its_format({**avro(maxLength=1), "format": "uuid"})
    assert not too_short_for_its_format({**avro(maxLength=1), "type": ["string", "null"]})
    assert not too_short_for_its_format({**avro(maxLength=1), "enum": ["x"]})


def test_generation_cache_reuses_a_pattern_s_strategy_and_draws_what_a_new_one_draws():
    def build(pattern: str, characters: str):
        # what st.from_regex calls, with a new alphabet of ``characters`` each time (as it does)
        alphabet = OneCharStringStrategy.from_alphabet(characters)
        return regex.regex_strategy(re.compile(pattern), True, alphabet=alphabet)

    pattern, characters = r"^[a-z0-9]+-[0-9]{2}$", string.ascii_lowercase + string.digits + "-"
    generation_cache.install()
    try:
        cached = build(pattern, characters)
        assert build(pattern, characters) is cached
        assert build(pattern, characters + "_") is not cached
        assert build(r"^[a-z]+-[0-9]{2}$", characters) is not cached
    finally:
        generation_cache.release()  # Hypothesis' own regex_strategy again
    fresh = build(pattern, characters)
    assert fresh is not cached and build(pattern, characters) is not fresh
    assert generate_many(cached, 20) == generate_many(fresh, 20)
