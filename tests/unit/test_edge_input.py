"""Numbers, base64, query values and percent-encoded names at the HTTP edge (issue 11,
defect 8): what Pulsar refuses is a 400 naming the field; names the SDK percent-encodes
arrive decoded once."""

from __future__ import annotations

import json

import pytest
from edge_http import TOPIC, assert_error, call

import magnetar as pulsar

INT64_MAX = 2**63 - 1


def produce(svc, message: dict, query: str = ""):
    body = json.dumps({"messages": [{"payload": "YWJj", **message}]}).encode()
    return call(f"{svc.url}/v1{TOPIC}/messages{query}", body=body)


@pytest.mark.parametrize("field", ["eventTime", "sequenceId", "deliverAt"])
@pytest.mark.parametrize("value", [2**70, 2**63, -1])
def test_a_time_or_sequence_id_outside_a_java_long_is_a_400_naming_the_field(svc, field, value):
    assert_error(produce(svc, {field: value}), 400, "InvalidMessage", field)


def test_the_largest_sequence_id_and_event_time_are_stored_and_echoed(svc):
    status, body, _ = produce(svc, {"sequenceId": INT64_MAX, "eventTime": INT64_MAX})
    assert status == 200, body
    call(f"{svc.url}/v1{TOPIC}/subscriptions/s/consumers", body=b'{"initialPosition": "Earliest"}')


@pytest.mark.parametrize("payload", ["YWJj=", "YWJj==", "YQ=", "YR==", "YW Jj", "YQ"])
def test_base64_that_is_not_canonical_is_a_400(svc, payload):
    assert_error(produce(svc, {"payload": payload}), 400, "InvalidMessage", "payload", "base64")


def test_an_ordering_key_that_is_not_canonical_base64_is_a_400(svc):
    answer = produce(svc, {"orderingKey": "YWJj="})
    assert_error(answer, 400, "InvalidMessage", "orderingKey")


def test_canonical_base64_is_accepted(svc):
    for payload in ("", "YQ==", "YWI=", "YWJj", "/+8="):
        status, body, _ = produce(svc, {"payload": payload})
        assert status == 200, (payload, body)


def test_an_unknown_hashing_scheme_is_a_400_naming_the_allowed_ones(svc):
    answer = produce(svc, {}, "?hashingScheme=AAA")
    assert_error(answer, 400, "InvalidMessage", "hashingScheme", "JavaStringHash", "Murmur3_32Hash")


def test_the_allowed_hashing_schemes_are_accepted(svc):
    for scheme in ("JavaStringHash", "Murmur3_32Hash"):
        status, body, _ = produce(svc, {}, f"?hashingScheme={scheme}")
        assert status == 200, body


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", f"/v1{TOPIC}/messages?epoch=-1"),
        ("POST", f"/v1{TOPIC}/producers/p/heartbeat?epoch=-1"),
        ("DELETE", f"/v1{TOPIC}/producers/p?epoch=-1"),
        ("POST", f"/v1{TOPIC}/messages?epoch={2**64}"),
    ],
)
def test_an_epoch_that_is_negative_or_beyond_a_java_long_is_a_400(svc, method, path):
    body = b'{"messages": [{"payload": "YWJj"}]}' if path.endswith("messages") else None
    assert_error(call(svc.url + path, method, body=body), 400, "InvalidMessage", "epoch")


# ----------------------------------------------------------------------- percent-encoded names


def test_names_with_colon_and_equals_work_through_the_sdk(svc):
    topic = "persistent://public/default/orders:eu=1"
    client = pulsar.Client(svc.url)
    try:
        consumer = client.subscribe(
            topic, "audit:v=2", initial_position=pulsar.InitialPosition.Earliest
        )
        producer = client.create_producer(topic, producer_name="writer:a=b")
        producer.send(b"hello")
        message = consumer.receive(timeout_millis=5000)
        assert message.data() == b"hello"
        consumer.acknowledge(message)
        assert message.topic_name() == topic
        producer.close()
        consumer.close()
    finally:
        client.close()
    assert [str(t) for t in svc.engine.admin.list_topics(_name(topic), False)] == [topic]
    assert list(svc.engine.admin.subscriptions(_name(topic))) == ["audit:v=2"]


def test_a_percent_encoded_path_and_a_plain_one_name_the_same_topic(svc):
    body = b'{"messages": [{"payload": "YWJj"}]}'
    encoded = call(f"{svc.url}/v1/persistent/public/default/a%3Ab%3Dc/messages", body=body)
    plain = call(f"{svc.url}/v1/persistent/public/default/a:b=c/messages", body=body)
    assert encoded[0] == plain[0] == 200, (encoded, plain)
    assert encoded[1]["topic"] == plain[1]["topic"] == "persistent://public/default/a:b=c"
    assert plain[1]["entryId"] == encoded[1]["entryId"] + 1


def test_path_parameters_are_decoded_once_not_twice(svc):
    # a literal "%3A" in a name arrives as %253A: decoded once it is "%3A", not ":"
    answer = call(f"{svc.url}/v1/persistent/public/default/a%253Ab/messages", body=b"{}")
    assert_error(answer, 400, "InvalidTopicName", "a%3Ab")


def _name(text: str):
    from magnetar_wire.names import TopicName

    return TopicName.parse(text)
