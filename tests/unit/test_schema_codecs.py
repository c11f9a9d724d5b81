"""``pulsar.schema`` codecs without a service: JSON and Avro round trips (pulsar-client's
bytes), ``schema_info()``, key/value encodings, protobuf native and AUTO_CONSUME decoding."""

from __future__ import annotations

import base64
import io
import json
from enum import Enum

import fastavro
import pytest

from magnetar.schema import (
    AUTO_CONSUME,
    Array,
    AvroSchema,
    Bytes,
    BytesSchema,
    Integer,
    JsonSchema,
    KeyValue,
    KeyValueEncodingType,
    KeyValueSchema,
    Map,
    ProtobufNativeSchema,
    Record,
    SchemaInfo,
    SchemaType,
    String,
    StringSchema,
)
from magnetar.schema.schema_auto import decode_with_info


class Kind(Enum):
    small = 1
    large = 2


class Item(Record):
    sku = String(required=True)
    qty = Integer()


class Order(Record):
    _avro_namespace = "shop"
    id = Integer(required=True)
    kind = Kind
    items = Array(Item())
    notes = Map(String())


def order() -> Order:
    return Order(id=7, kind=Kind.large, items=[Item(sku="a", qty=2)], notes={"gift": "yes"})


def test_json_writes_pulsar_clients_bytes_enums_by_value_and_reads_them_back():
    schema = JsonSchema(Item)
    data = schema.encode(Item(sku="a", qty=2))

    assert data == b'{\n "sku": "a",\n "qty": 2\n}'
    back = JsonSchema(Order).decode(JsonSchema(Order).encode(order()))
    assert back == order() and back.kind is Kind.large and isinstance(back.items[0], Item)
    assert json.loads(JsonSchema(Order).encode(order()))["kind"] == 2


def test_avro_round_trips_a_nested_record_in_avros_binary_encoding():
    schema = AvroSchema(Order)
    data = schema.encode(order())

    assert schema.decode(data) == order()
    plain = fastavro.schemaless_reader(io.BytesIO(data), fastavro.parse_schema(Order.schema()))
    assert plain == {"id": 7, "kind": "large", "items": [{"sku": "a", "qty": 2}],
                     "notes": {"gift": "yes"}}  # fmt: skip


def test_avro_with_an_explicit_definition_reads_and_writes_dicts():
    definition = {"type": "record", "name": "Reading",
                  "fields": [{"name": "value", "type": "double"}]}  # fmt: skip
    schema = AvroSchema(None, schema_definition=definition)

    assert schema.decode(schema.encode({"value": 1.5})) == {"value": 1.5}
    with pytest.raises(
        ValueError, match="^If using the custom schema, the record data should be dict type.$"
    ):
        schema.encode([1.5])
    with pytest.raises(AssertionError, match="shouldn't be both None"):
        AvroSchema(None)


def test_a_record_schema_refuses_another_type_with_pulsar_clients_message():
    with pytest.raises(
        TypeError,
        match=r"^Invalid record obj of type <class 'str'> - expected type is <class '.*Item'>$",
    ):
        JsonSchema(Item).encode("x")
    with pytest.raises(TypeError, match="Invalid record obj"):
        AvroSchema(Item).encode(order())
    with pytest.raises(TypeError, match=r"expected type is <class 'bytes'>"):
        BytesSchema().encode("text")


def test_json_refuses_a_bytes_field_it_cannot_hold():
    class Blob(Record):
        data = Bytes()

    with pytest.raises(TypeError, match="^Object of type bytes is not JSON serializable$"):
        JsonSchema(Blob).encode(Blob(data=b"\x00"))


def test_schema_info_carries_type_name_definition_and_is_a_registry_payload():
    info = AvroSchema(Item).schema_info()

    assert (info.schema_type(), info.name()) == (SchemaType.AVRO, "AVRO")
    assert json.loads(info.schema()) == Item.schema()
    assert info.to_dict() == {"type": "AVRO", "schema": info.schema(), "properties": {}}
    assert JsonSchema(Item).schema_info().schema_type() == SchemaType.JSON
    assert StringSchema().schema_info().to_dict() == {"type": "STRING", "schema": "null",
                                                      "properties": {}}  # fmt: skip
    assert (str(StringSchema()), str(BytesSchema())) == ("StringSchema", "BytesSchema")


def test_the_definition_text_is_pulsar_clients_json_key_for_key_in_its_order():
    assert JsonSchema(Item).schema_info().schema() == (
        '{\n "type": "record",\n "name": "Item",\n "fields": [\n  {\n   "name": "sku",\n'
        '   "type": "string"\n  },\n  {\n   "name": "qty",\n   "type": [\n    "null",\n'
        '    "int"\n   ]\n  }\n ]\n}'
    )
    definition = Order.schema()
    assert list(definition) == ["type", "name", "namespace", "fields"]


def test_key_value_inline_packs_lengths_and_both_parts_in_the_payload():
    schema = KeyValueSchema(StringSchema(), JsonSchema(Item))
    data = schema.encode(("k1", Item(sku="a", qty=1)))

    assert data[:6] == b"\x00\x00\x00\x02k1"
    assert schema.decode(data) == KeyValue("k1", Item(sku="a", qty=1))
    assert schema.decode(schema.encode((None, Item(sku="b")))).key is None
    info = schema.schema_info()
    assert info.schema_type() == SchemaType.KEY_VALUE
    assert json.loads(info.schema()) == {"key": None, "value": Item.schema()}
    assert info.properties()["kv.encoding.type"] == "INLINE"
    assert info.properties()["value.schema.type"] == "JSON"


def test_key_value_separated_sends_the_key_as_a_base64_message_key():
    schema = KeyValueSchema(StringSchema(), StringSchema(), KeyValueEncodingType.SEPARATED)

    data, key = schema._encode_message(("user-1", "hello"))

    assert (data, key) == (b"hello", base64.b64encode(b"user-1").decode())

    class Received:
        def data(self):
            return data

        def partition_key(self):
            return key

    assert schema.decode_message(Received()) == ("user-1", "hello")


def test_key_value_refuses_what_is_not_a_pair_or_not_a_schema():
    schema = KeyValueSchema(StringSchema(), StringSchema())
    with pytest.raises(TypeError, match="expected a \\(key, value\\) pair"):
        schema.encode("just a value")
    with pytest.raises(ValueError, match="key_schema"):
        KeyValueSchema(str, StringSchema())
    with pytest.raises(ValueError, match="truncated"):
        schema.decode(b"\x00\x00\x00\x09ab")


def _dynamic_message_class():
    from google.protobuf import descriptor_pb2, message_factory

    proto = descriptor_pb2.FileDescriptorProto(name="sensor.proto", package="demo",
                                               syntax="proto3")  # fmt: skip
    message = proto.message_type.add(name="Sensor")
    message.field.add(name="id", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                      label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)  # fmt: skip
    message.field.add(name="value", number=2, type=descriptor_pb2.FieldDescriptorProto.TYPE_INT64,
                      label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)  # fmt: skip
    return message_factory.GetMessages([proto])["demo.Sensor"]


def test_protobuf_native_round_trips_and_describes_its_file_descriptor_set():
    from google.protobuf import descriptor_pb2

    sensor = _dynamic_message_class()
    schema = ProtobufNativeSchema(sensor)

    assert schema.decode(schema.encode(sensor(id="t1", value=-3))) == sensor(id="t1", value=-3)
    definition = json.loads(schema.schema_info().schema())
    assert definition["rootMessageTypeName"] == "demo.Sensor"
    assert definition["rootFileDescriptorName"] == "sensor.proto"
    files = descriptor_pb2.FileDescriptorSet.FromString(
        base64.b64decode(definition["fileDescriptorSet"])
    )
    assert [f.name for f in files.file] == ["sensor.proto"]
    with pytest.raises(TypeError, match="not a protobuf message class"):
        ProtobufNativeSchema(Item)


def test_auto_consume_decodes_by_the_writers_schema_info_and_else_returns_bytes():
    avro = AvroSchema(Item)
    kv = KeyValueSchema(StringSchema(), JsonSchema(Item))

    assert decode_with_info(avro.schema_info(), avro.encode(Item(sku="a", qty=1))) == {
        "sku": "a",
        "qty": 1,
    }
    assert decode_with_info(JsonSchema(Item).schema_info(), b'{"sku": "b"}') == {"sku": "b"}
    assert decode_with_info(StringSchema().schema_info(), "é".encode()) == "é"
    assert decode_with_info(kv.schema_info(), kv.encode(("k", Item(sku="c")))) == (
        "k",
        {"sku": "c", "qty": None},
    )
    assert decode_with_info(SchemaInfo(SchemaType.BYTES, "BYTES", "null"), b"\x01") == b"\x01"
    assert AUTO_CONSUME() is AUTO_CONSUME
    with pytest.raises(TypeError, match="only decodes"):
        AUTO_CONSUME.encode(b"x")
