"""Issue 15: Avro's resolution rules and Pulsar's nine compatibility strategies, as pure
domain functions (no I/O): what BACKWARD, FORWARD, FULL and their transitive forms accept
and refuse, promotions, unions, enums, nested and recursive records, and payload parsing."""

from __future__ import annotations

import json
import re

import pytest

from magnetar_core.domain.errors import InvalidMessage, InvalidSchemaData
from magnetar_core.domain.schemas.avro import can_read
from magnetar_core.domain.schemas.compatibility import (
    STRATEGIES,
    applied,
    incompatibility,
    parse_strategy,
)
from magnetar_core.domain.schemas.data import SchemaData, parse_payload


def record(*fields: dict, name: str = "User") -> dict:
    return {"type": "record", "name": name, "namespace": "acme", "fields": list(fields)}


NAME = {"name": "name", "type": "string"}
AGE = {"name": "age", "type": "int"}
AGE_DEFAULT = {"name": "age", "type": "int", "default": 0}
V1 = record(NAME)
V2_REQUIRED = record(NAME, AGE)  # a field without a default: not BACKWARD
V2_DEFAULT = record(NAME, AGE_DEFAULT)  # with a default: FULL


def avro(definition: dict) -> SchemaData:
    return SchemaData("AVRO", json.dumps(definition))


def test_a_reader_with_a_new_field_needs_a_default_for_it():
    assert "age" in (can_read(V2_REQUIRED, V1) or "")
    assert can_read(V2_DEFAULT, V1) is None
    assert can_read(V1, V2_REQUIRED) is None  # extra written fields are skipped


def test_avro_promotes_int_to_long_but_not_back():
    wide = record(NAME, {"name": "age", "type": "long"})
    assert can_read(wide, V2_REQUIRED) is None
    assert "int" in (can_read(V2_REQUIRED, wide) or "")


def test_unions_read_a_writer_branch_they_hold_and_nothing_else():
    optional = record(NAME, {"name": "age", "type": ["null", "int"], "default": None})
    assert can_read(optional, V2_REQUIRED) is None
    assert can_read(V2_REQUIRED, optional) is not None  # the writer may have written null


def test_enums_refuse_a_writer_symbol_the_reader_lacks_unless_it_has_a_default():
    small = {"type": "enum", "name": "Color", "symbols": ["RED"]}
    big = {"type": "enum", "name": "Color", "symbols": ["RED", "BLUE"]}
    assert can_read(big, small) is None
    assert "BLUE" in (can_read(small, big) or "")
    assert can_read({**small, "default": "RED"}, big) is None


def test_nested_and_recursive_records_are_compared_field_by_field_with_a_path():
    node = record({"name": "value", "type": "int"},
                  {"name": "next", "type": ["null", "Node"], "default": None}, name="Node")  # fmt: skip
    assert can_read(node, node) is None
    outer_old = record({"name": "address", "type": record(NAME, name="Address")})
    outer_new = record({"name": "address", "type": record(NAME, AGE, name="Address")})
    assert "address.age" in (can_read(outer_new, outer_old) or "")


def test_a_nested_record_renamed_is_another_type():
    person = record({"name": "who", "type": record(NAME, name="Person")})
    user = record({"name": "who", "type": record(NAME, name="User")})
    assert "Person" in (can_read(person, user) or "")


def test_the_top_level_record_s_name_is_not_compared_as_avros_resolving_grammar_does_not():
    assert can_read(record(NAME, name="Person"), V1) is None
    assert "age" in (can_read(record(NAME, AGE, name="Person"), V1) or "")


@pytest.mark.parametrize(
    ("strategy", "new", "accepted"),
    [
        ("BACKWARD", V2_REQUIRED, False),
        ("BACKWARD", V2_DEFAULT, True),
        ("FORWARD", V2_REQUIRED, True),
        ("FORWARD", record(AGE_DEFAULT), False),  # the old reader needs name
        ("FULL", V2_REQUIRED, False),
        ("FULL", V2_DEFAULT, True),
        ("UNDEFINED", V2_REQUIRED, False),  # UNDEFINED applies FULL
        ("ALWAYS_COMPATIBLE", record(AGE), True),
        ("ALWAYS_INCOMPATIBLE", V2_DEFAULT, False),
    ],
)
def test_each_strategy_checks_the_new_schema_against_the_latest(strategy, new, accepted):
    why = incompatibility(strategy, [avro(V1)], avro(new))
    assert (why is None) == accepted, why


def test_transitive_strategies_check_every_live_version_not_only_the_latest():
    # v0 wrote age as a string, v1 dropped it; the new int age reads v1 but not v0
    history = [avro(record(NAME, {"name": "age", "type": "string"})), avro(V1)]
    new = avro(V2_DEFAULT)
    assert incompatibility("BACKWARD", history, new) is None
    assert "string" in (incompatibility("BACKWARD_TRANSITIVE", history, new) or "")
    history = [avro(record(NAME, AGE)), avro(record(NAME, AGE_DEFAULT))]
    new = avro(record(NAME, AGE_DEFAULT, {"name": "zip", "type": "string", "default": ""}))
    assert incompatibility("FORWARD", history, new) is None
    dropped = avro(record(NAME))
    assert incompatibility("FORWARD", history, dropped) is None
    assert "age" in (incompatibility("FORWARD_TRANSITIVE", history, dropped) or "")


def test_any_schema_may_follow_none_and_other_types_compare_by_type_only():
    assert incompatibility("ALWAYS_INCOMPATIBLE", [], avro(V1)) is None
    string = SchemaData("STRING", "")
    assert incompatibility("FULL", [string], SchemaData("STRING", "other")) is None
    assert "AVRO" in (incompatibility("FULL", [string], avro(V1)) or "")
    assert incompatibility("ALWAYS_COMPATIBLE", [string], avro(V1)) is None


def test_strategy_names_are_pulsars_nine_and_undefined_applies_full():
    assert len(STRATEGIES) == 9 and applied(None) == applied("UNDEFINED") == "FULL"
    assert parse_strategy("BACKWARD_TRANSITIVE") == "BACKWARD_TRANSITIVE"
    with pytest.raises(InvalidMessage, match="FULL_TRANSITIVE"):
        parse_strategy("backward")


def test_a_payload_is_parsed_with_its_properties_and_bad_ones_are_named():
    parsed = parse_payload({"type": "AVRO", "schema": json.dumps(V1), "properties": {"a": "b"}}, 7)
    assert (parsed.schema_type, parsed.properties, parsed.timestamp_ms) == ("AVRO", {"a": "b"}, 7)
    assert parse_payload({"type": "STRING"}, 0).definition == ""
    with pytest.raises(InvalidMessage, match="type"):
        parse_payload({"type": "XML", "schema": ""}, 0)
    with pytest.raises(InvalidMessage, match="Unknown schema fields"):
        parse_payload({"type": "AVRO", "schema": "{}", "name": "x"}, 0)
    with pytest.raises(InvalidSchemaData, match="Avro schema in JSON"):
        parse_payload({"type": "JSON", "schema": "not json"}, 0)
    assert parsed.same_as(SchemaData("AVRO", json.dumps(V1)))  # properties do not count


@pytest.mark.parametrize(
    ("definition", "words"),
    [
        ("5", "expected a type name"),
        ('{"type": "record", "fields": []}', "needs a name"),
        ('{"type": "record", "name": "R", "fields": [{"name": "a"}]}', "without a name and a type"),
        ('{"type": "record", "name": "R", "fields": [{"name": "a", "type": "Nope"}]}', "unknown type 'Nope'"),
        ('{"type": "enum", "name": "E", "symbols": [1]}', "string symbols"),
        ('{"type": "fixed", "name": "F"}', "integer size"),
        ('{"type": "array"}', "needs items"),
        ('["null", {"type": "map"}]', "branch 1"),
    ],
)  # fmt: skip
def test_a_definition_that_is_not_a_well_formed_avro_schema_is_refused(definition, words):
    with pytest.raises(InvalidSchemaData, match=re.escape(words)):
        parse_payload({"type": "AVRO", "schema": definition}, 0)
