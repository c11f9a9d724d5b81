"""The sample events of events/, checked without running them: the scenarios (``event_scenarios``)
together replay every file exactly once, every template route has a sample, and each sample is
the payload 2.0 event of its route. The scenarios run in the test_events_*.py files beside this
one."""

from __future__ import annotations

import base64

import pytest
from event_scenarios import SCENARIOS

from magnetar_local.routes import RouteTable
from magnetar_local.sample_events import EVENTS_DIR, PLACEHOLDERS, event_names, load_event
from magnetar_local.served_routes import default_served_routes
from magnetar_local.template import LocalTemplate
from magnetar_wire import decode_entry


def test_the_scenarios_replay_every_event_file_exactly_once():
    declared = [name for scenario in SCENARIOS for name in scenario]
    assert len(declared) == len(set(declared))
    assert sorted(declared) == event_names()


def test_every_template_route_has_at_least_one_sample_event():
    # the routes the API serves: behind ANY /admin/{proxy+}, the admin app's route each path takes
    served = RouteTable(default_served_routes())
    sampled = set()
    for name in event_names():
        event = load_event(name)
        sampled.add(
            served.match(
                event["requestContext"]["http"]["method"], event["rawPath"]
            ).route.route_key
        )
    missing = sorted(r.route_key for r in served.routes if r.route_key not in sampled)
    assert missing == [], f"routes without a sample in {EVENTS_DIR}: {missing}"


def test_every_sample_event_is_a_payload_2_0_event_of_the_route_its_path_matches():
    table = RouteTable(LocalTemplate().routes)
    for name in event_names():
        event = load_event(name)
        http = event["requestContext"]["http"]
        match = table.match(http["method"], event["rawPath"])
        assert match is not None, name
        assert event["version"] == "2.0"
        assert event["routeKey"] == event["requestContext"]["routeKey"] == match.route.route_key
        assert http["path"] == event["rawPath"]
        assert event.get("pathParameters", {}) == match.path_parameters, name
        assert all(header == header.lower() for header in event["headers"]), name
        assert event["requestContext"]["stage"] == "$default"
        if event.get("body") is not None:
            assert event["headers"]["content-type"], name
            assert int(event["headers"]["content-length"]) == len(
                base64.b64decode(event["body"])
                if event["isBase64Encoded"]
                else event["body"].encode()
            ), name


def test_the_entry_sample_is_a_base64_entry_body_that_decodes():
    event = load_event("produce_entry")
    assert event["isBase64Encoded"] is True
    assert event["headers"]["content-type"] == "application/vnd.magnetar.entry"
    entry = decode_entry(base64.b64decode(event["body"]))
    assert [m.payload for m in entry.messages] == [b'{"orderId": 42, "status": "shipped"}']


def test_load_event_replaces_the_placeholders_in_the_path_and_parameters_only():
    event = load_event("ack", topic="orders", subscription="audit", consumer_id="c-1")
    assert event["rawPath"] == (
        "/v1/persistent/public/default/orders/subscriptions/audit/consumers/c-1/ack"
    )
    assert event["requestContext"]["http"]["path"] == event["rawPath"]
    assert event["pathParameters"] == {
        "domain": "persistent",
        "tenant": "public",
        "namespace": "default",
        "topic": "orders",
        "subscription": "audit",
        "consumerId": "c-1",
    }
    assert event["routeKey"] == load_event("ack")["routeKey"]
    assert event["body"] == load_event("ack")["body"]
    partitioned = load_event("admin_get_partitions", topic="orders")
    # an admin event (ANY /admin/{proxy+}): the greedy parameter follows the new path
    assert partitioned["pathParameters"] == {
        "proxy": "v2/persistent/public/default/orders-partitioned/partitions"
    }
    assert (
        partitioned["rawPath"]
        == "/admin/v2/persistent/public/default/orders-partitioned/partitions"
    )
    assert load_event("ack")["pathParameters"]["consumerId"] == PLACEHOLDERS["consumer_id"]
    with pytest.raises(TypeError):
        load_event("ack", consumer="c-1")


def test_load_event_replaces_the_namespace_only_where_the_route_has_a_namespace_parameter():
    event = load_event("admin_set_max_message_size", topic="orders", namespace="ns-1")
    assert event["rawPath"] == "/admin/v2/namespaces/public/ns-1/maxMessageSize"
    assert event["requestContext"]["http"]["path"] == event["rawPath"]
    assert event["pathParameters"] == {"proxy": "v2/namespaces/public/ns-1/maxMessageSize"}
    # a topic route keeps namespace "default"; the topic placeholder never rewrites a namespace
    topic_event = load_event("producers_heartbeat", topic="orders", namespace="ns-1")
    assert topic_event["rawPath"] == (
        "/v1/persistent/public/default/orders/producers/demo-producer/heartbeat"
    )
    assert topic_event["pathParameters"]["namespace"] == "default"
    untouched = load_event("admin_get_namespace_deduplication", topic="orders")
    assert untouched["pathParameters"]["proxy"].split("/")[3] == PLACEHOLDERS["namespace"]
    assert untouched["rawPath"] == "/admin/v2/namespaces/public/events-demo-ns/deduplication"


# ---------------------------------------------------------------------- replays
