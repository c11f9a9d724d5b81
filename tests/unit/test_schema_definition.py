"""``pulsar.schema`` records (issue 15, schemas client side): ``Record.schema()`` is the Avro
definition pulsar-client 3.13 produces (expectations written by hand from its
``definition.py``), field defaults and validation with its error messages."""

from __future__ import annotations

from enum import Enum

import pytest

import magnetar as pulsar
from magnetar.schema import (
    Array,
    Boolean,
    Bytes,
    CustomEnum,
    Double,
    Float,
    Integer,
    Long,
    Map,
    Null,
    Record,
    String,
)


class Color(Enum):
    red = 1
    green = 2


class Address(Record):
    street = String()
    number = Integer(required=True)


class Person(Record):
    name = String(required=True)
    age = Integer(default=18, required_default=True)
    height = Double()
    color = Color
    tags = Array(String())
    address = Address()


def test_a_flat_record_gives_pulsar_clients_definition_with_optional_fields_as_unions():
    class Example(Record):
        a = Null()
        b = Boolean()
        c = Integer()
        d = Long()
        e = Float()
        f = Double()
        g = Bytes()
        h = String()

    assert Example.schema() == {
        "type": "record",
        "name": "Example",
        "fields": [
            {"name": "a", "type": ["null", "null"]},
            {"name": "b", "type": ["null", "boolean"]},
            {"name": "c", "type": ["null", "int"]},
            {"name": "d", "type": ["null", "long"]},
            {"name": "e", "type": ["null", "float"]},
            {"name": "f", "type": ["null", "double"]},
            {"name": "g", "type": ["null", "bytes"]},
            {"name": "h", "type": ["null", "string"]},
        ],
    }


def test_nested_records_enums_arrays_required_and_required_default_fields():
    assert Person.schema() == {
        "type": "record",
        "name": "Person",
        "fields": [
            {"name": "name", "type": "string"},
            {"name": "age", "default": 18, "type": ["null", "int"]},
            {"name": "height", "type": ["null", "double"]},
            {"name": "color",
             "type": ["null", {"type": "enum", "name": "Color", "symbols": ["red", "green"]}]},
            {"name": "tags", "type": ["null", {"type": "array", "items": "string"}]},
            {"name": "address", "type": ["null", {
                "type": "record", "name": "Address",
                "fields": [{"name": "street", "type": ["null", "string"]},
                           {"name": "number", "type": "int"}],
            }]},
        ],
    }  # fmt: skip


def test_a_namespace_sorted_fields_an_enum_default_and_a_record_named_twice():
    class Point(Record):
        _avro_namespace = "geo"
        y = Double(required=True)
        x = Double(required=True)

    class Segment(Record):
        _avro_namespace = "geo"
        _sorted_fields = True
        start = Point()
        end = Point()
        kind = CustomEnum(Color, default=Color.green, required_default=True)
        weights = Map(Float())

    point = {"type": "record", "name": "Point", "namespace": "geo",
             "fields": [{"name": "y", "type": "double"}, {"name": "x", "type": "double"}]}  # fmt: skip
    assert Segment.schema() == {
        "type": "record",
        "name": "Segment",
        "namespace": "geo",
        "fields": [
            {"name": "end", "type": ["null", point]},
            {"name": "kind", "default": "green",
             "type": ["null", {"type": "enum", "name": "Color", "symbols": ["red", "green"]}]},
            {"name": "start", "type": ["null", "geo.Point"]},
            {"name": "weights", "type": ["null", {"type": "map", "values": "float"}]},
        ],
    }  # fmt: skip
    assert list(Segment.schema()["fields"][1]) == ["name", "default", "type"]


def test_unset_fields_take_their_defaults_and_dicts_become_nested_records():
    p = Person(name="ann", color="green", address={"street": "Main", "number": 4})

    assert (p.name, p.age, p.height, p.tags) == ("ann", 18, None, None)
    assert p.color is Color.green
    assert isinstance(p.address, Address) and p.address.number == 4
    assert Boolean().default() is False


def test_records_compare_by_field_values_and_print_their_dict():
    a = Person(name="ann", tags=["x"])
    assert a == Person(name="ann", tags=["x"])
    assert a != Person(name="bob", tags=["x"])
    assert str(Address(street="s", number=1)) == (
        "{'_required_default': False, '_default': None, '_required': False, "
        "'street': 's', 'number': 1}"
    )


def test_values_of_the_wrong_type_are_refused_with_pulsar_clients_messages():
    with pytest.raises(
        TypeError, match=r"^Invalid type '<class 'str'>' for field 'age'. Expected: int$"
    ):
        Person(name="ann", age="old")
    with pytest.raises(
        TypeError, match=r"^Invalid type '<class 'int'>' for field 'name'. Expected a string$"
    ):
        Person(name=3)
    with pytest.raises(
        TypeError,
        match=r"^Invalid enum value 'blue' for field 'color'. Expected: dict_keys\(\['red', 'green'\]\)$",
    ):
        Person(name="ann", color="blue")
    with pytest.raises(TypeError, match=r"^Array field tags items should all be of type string$"):
        Person(name="ann", tags=[1])
    with pytest.raises(
        TypeError,
        match=r"^Invalid type '<class 'int'>' for sub-record field 'address'. Expected: Address$",
    ):
        Person(name="ann", address=5)
    with pytest.raises(AttributeError, match=r"^Cannot set undeclared field nickname on record$"):
        Person(name="ann").nickname = "a"
    with pytest.raises(TypeError, match=r"^Field n is set to be None$"):
        Null().validate_type("n", 1)


def test_map_keys_must_be_strings_and_values_of_the_value_type():
    class Counts(Record):
        m = Map(Integer())

    assert Counts(m={"a": 1}).m == {"a": 1}
    with pytest.raises(TypeError, match=r"^Map keys for field m  should all be strings$"):
        Counts(m={1: 1})
    with pytest.raises(TypeError, match=r"^Map values for field m should all be of type int$"):
        Counts(m={"a": "x"})


def test_bad_declarations_raise_as_pulsar_client_does():
    with pytest.raises(Exception, match=r"^int is not a valid Enum type$"):
        CustomEnum(int)
    with pytest.raises(Exception, match=r"^Argument int is not a Record or a Field$"):
        Array(int)
    with pytest.raises(TypeError, match="for field 'default'"):
        Integer(default="x")


def test_lenient_conversions_ints_for_floats_str_for_bytes_and_bytes_for_str():
    class Loose(Record):
        f = Float()
        b = Bytes()
        s = String()

    r = Loose(f=2, b="hé", s=b"ok")
    assert (r.f, r.b, r.s) == (2, "hé".encode(), "ok")


def test_the_module_is_reachable_as_pulsar_schema():
    assert pulsar.schema.Record is Record
    assert pulsar.schema.BytesSchema is pulsar.BytesSchema
    assert pulsar._pulsar.SchemaType.AVRO == 4
