"""api/views.py: JSON produce bodies become entries; delivered entries render as messages."""

import base64

import pytest

from magnetar_core.api.views import entries, entry_from_json, messages
from magnetar_core.domain.errors import InvalidMessage
from magnetar_core.services.subscriptions import DeliveredEntry
from magnetar_wire import EntryMessage, decode_entry, encode_entry
from magnetar_wire.names import TopicName

NOW = 1_763_700_000_000
TOPIC = TopicName.parse("persistent://public/default/t")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def build(messages_json, **body):
    return entry_from_json({"messages": messages_json, **body}, NOW, "default-producer")


def test_one_message_becomes_a_plain_entry_that_decodes_back_field_by_field():
    data = build(
        [
            {
                "payload": b64(b"hello"),
                "key": "k1",
                "orderingKey": b64(b"\x00\xffok"),
                "properties": {"a": "b", "c": ""},
                "eventTime": 42,
                "deliverAt": 7,
                "sequenceId": 9,
            }
        ],
        producerName="p1",
    )
    entry = decode_entry(data)
    assert entry.header.batched is False
    assert entry.header.count == 1
    assert entry.producer_name == "p1"
    (m,) = entry.messages
    assert (m.payload, m.key, m.ordering_key) == (b"hello", "k1", b"\x00\xffok")
    assert dict(m.properties) == {"a": "b", "c": ""}
    assert (m.event_time_ms, m.deliver_at_ms, m.sequence_id) == (42, 7, 9)
    assert m.publish_time_ms == NOW
    assert m.null_value is False


def test_several_messages_become_one_batched_entry_in_order():
    data = build([{"payload": b64(b"a")}, {"payload": b64(b"bb")}, {"payload": b64(b"")}])
    entry = decode_entry(data)
    assert entry.header.batched is True
    assert entry.header.count == 3
    assert [m.payload for m in entry.messages] == [b"a", b"bb", b""]
    assert entry.producer_name == "default-producer"
    assert [m.key for m in entry.messages] == [None, None, None]


def test_a_null_value_message_carries_no_payload_and_is_flagged():
    (m,) = decode_entry(build([{"nullValue": True, "payload": b64(b"ignored")}])).messages
    assert (m.payload, m.null_value) == (b"", True)


def test_missing_optional_fields_take_their_defaults():
    (m,) = decode_entry(build([{}])).messages
    assert (m.payload, m.key, m.ordering_key, dict(m.properties)) == (b"", None, None, {})
    assert (m.event_time_ms, m.deliver_at_ms, m.sequence_id, m.null_value) == (0, 0, 0, False)


def test_exactly_one_thousand_messages_are_accepted():
    assert decode_entry(build([{"payload": b64(b"x")}] * 1000)).header.count == 1000


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "The body needs 'messages': a non-empty list of message objects"),
        ({"messages": []}, "The body needs 'messages': a non-empty list of message objects"),
        ({"messages": {"payload": "aGk="}}, "The body needs 'messages'"),
        ({"messages": "aGk="}, "The body needs 'messages'"),
        ({"messages": [{}] * 1001}, "At most 1000 messages per request, not 1001"),
        ({"messages": ["aGk="]}, "Each message must be a JSON object"),
        ({"messages": [{"payload": "not base64!"}]}, "'payload' is not valid base64"),
        ({"messages": [{"payload": "aGk"}]}, "'payload' is not valid base64"),
        ({"messages": [{"payload": 5}]}, "'payload' must be a base64 string"),
        ({"messages": [{"orderingKey": "%%"}]}, "'orderingKey' is not valid base64"),
        ({"messages": [{"properties": {"a": 1}}]}, "'properties' must be an object of string"),
        ({"messages": [{"properties": [["a", "b"]]}]}, "'properties' must be an object"),
        ({"messages": [{"key": 3}]}, "'key' must be a string"),
        ({"messages": [{"eventTime": -1}]}, "'eventTime' must be a non-negative integer"),
        ({"messages": [{"eventTime": 1.5}]}, "'eventTime' must be a non-negative integer"),
        ({"messages": [{"eventTime": True}]}, "'eventTime' must be a non-negative integer"),
        ({"messages": [{"sequenceId": "3"}]}, "'sequenceId' must be a non-negative integer"),
        ({"messages": [{"deliverAt": -5}]}, "'deliverAt' must be a non-negative integer"),
        ({"messages": [{}], "producerName": 7}, "'producerName' must be a string"),
    ],
)
def test_bad_produce_bodies_raise_invalid_message_saying_what_is_wrong(body, message):
    with pytest.raises(InvalidMessage) as caught:
        entry_from_json(body, NOW, "p")
    assert caught.value.message.startswith(message)
    assert (caught.value.code, caught.value.status) == ("InvalidMessage", 400)


def delivered(data, batch_indexes=None, entry_id=5, redelivery_count=0, partition=-1):
    return DeliveredEntry(TOPIC, 3, entry_id, partition, redelivery_count, batch_indexes, data)


def test_messages_renders_a_plain_entry_as_one_message_with_batch_index_minus_one():
    data = encode_entry(
        [
            EntryMessage(
                payload=b"hi",
                sequence_id=4,
                publish_time_ms=NOW,
                key="k",
                ordering_key=b"ok",
                properties={"x": "y"},
                event_time_ms=11,
            )
        ],
        producer_name="prod",
    )
    assert messages([delivered(data, redelivery_count=2, partition=1)]) == {
        "messages": [
            {
                "messageId": "3:5:1:-1",
                "payload": b64(b"hi"),
                "properties": {"x": "y"},
                "publishTime": NOW,
                "eventTime": 11,
                "redeliveryCount": 2,
                "producerName": "prod",
                "sequenceId": 4,
                "nullValue": False,
                "topic": "persistent://public/default/t",
                "key": "k",
                "orderingKey": b64(b"ok"),
            }
        ]
    }


def batch_entry():
    return encode_entry(
        [EntryMessage(payload=bytes([65 + i]), sequence_id=i) for i in range(4)],
        producer_name="prod",
    )


def test_messages_renders_every_message_of_a_batch_without_a_mask():
    out = messages([delivered(batch_entry())])["messages"]
    assert [m["messageId"] for m in out] == ["3:5:-1:0", "3:5:-1:1", "3:5:-1:2", "3:5:-1:3"]
    assert [m["payload"] for m in out] == [b64(b"A"), b64(b"B"), b64(b"C"), b64(b"D")]
    assert [m["sequenceId"] for m in out] == [0, 1, 2, 3]
    assert all("key" not in m and "orderingKey" not in m for m in out)


def test_messages_renders_only_the_masked_batch_indexes():
    out = messages([delivered(batch_entry(), batch_indexes=(1, 3), redelivery_count=1)])
    assert [(m["messageId"], m["payload"], m["redeliveryCount"]) for m in out["messages"]] == [
        ("3:5:-1:1", b64(b"B"), 1),
        ("3:5:-1:3", b64(b"D"), 1),
    ]


def test_messages_of_several_entries_keep_entry_order_and_an_empty_mask_renders_nothing():
    plain = encode_entry([EntryMessage(payload=b"p")], producer_name="prod")
    out = messages(
        [delivered(plain, entry_id=1), delivered(batch_entry(), batch_indexes=(), entry_id=2)]
    )
    assert [m["messageId"] for m in out["messages"]] == ["3:1:-1:-1"]
    assert messages([]) == {"messages": []}


def test_entries_renders_the_sdk_shape_with_the_bytes_as_produced():
    data = batch_entry()
    assert entries([delivered(data, batch_indexes=(0, 2)), delivered(data, entry_id=6)]) == {
        "entries": [
            {
                "ledgerId": 3,
                "entryId": 5,
                "partition": -1,
                "redeliveryCount": 0,
                "batchIndexes": [0, 2],
                "data": b64(data),
                "url": None,
                "topic": "persistent://public/default/t",
            },
            {
                "ledgerId": 3,
                "entryId": 6,
                "partition": -1,
                "redeliveryCount": 0,
                "batchIndexes": None,
                "data": b64(data),
                "url": None,
                "topic": "persistent://public/default/t",
            },
        ]
    }
