"""The sample events of events/: every file replayed through its real handler on the local stack.

Each scenario runs on a fresh topic (``events-demo`` replaced by a unique name) and a fresh
namespace for the namespace policy routes (``events-demo-ns`` likewise), subscribes first and
substitutes the returned consumer id for ``demo-consumer-id``. A static check makes
sure the scenarios together replay every file, and that every template route has a sample.
"""

from __future__ import annotations

import base64
import json
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from magnetar_core.engine import Engine
from magnetar_core.settings import Settings
from magnetar_local.events import LambdaContext
from magnetar_local.routes import RouteTable
from magnetar_local.sample_events import EVENTS_DIR, PLACEHOLDERS, event_names, load_event
from magnetar_local.served_routes import default_served_routes
from magnetar_local.template import LocalTemplate
from magnetar_wire import EntryMessage, decode_entry, encode_entry
from magnetar_wire.names import TopicName

ADMIN_EVENTS = (
    "admin_health",
    "admin_create_topic",
    "admin_create_partitioned",
    "admin_get_partitions",
    "admin_list_topics",
    "admin_list_partitioned",
    "admin_partitioned_stats",
    "admin_delete_topic",
    "admin_delete_partitioned",
)
SHARED_EVENTS = (
    "subscribe_shared",
    "produce_json",
    "produce_entry",
    "produce_bad_topic",
    "receive",
    "ack",
    "ack_cumulative_on_shared",
    "nack",
    "redeliver",
    "admin_stats",
    "admin_last_message_id",
    "seek",
    "admin_subscriptions",
    "close_consumer",
    "admin_delete_subscription",
)
EXCLUSIVE_EVENTS = ("subscribe_exclusive", "consumer_heartbeat", "unsubscribe")
PRODUCER_EVENTS = (
    "producers_register_exclusive",
    "producers_heartbeat",
    "producers_release",
    "producers_register_shared",
    "produce_upload",
    "admin_set_topic_deduplication",
    "admin_get_topic_deduplication",
)
NAMESPACE_EVENTS = (
    "admin_set_namespace_deduplication",
    "admin_get_namespace_deduplication",
    "admin_remove_namespace_deduplication",
    "admin_set_max_message_size",
    "admin_get_max_message_size",
)
DELAYED_DELIVERY_EVENTS = (
    "admin_set_delayed_delivery",
    "admin_get_delayed_delivery",
    "admin_remove_delayed_delivery",
)
RETENTION_EVENTS = (
    "admin_set_namespace_retention",
    "admin_get_namespace_retention",
    "admin_remove_namespace_retention",
    "admin_set_namespace_message_ttl",
    "admin_get_namespace_message_ttl",
    "admin_remove_namespace_message_ttl",
)
TOPIC_POLICY_EVENTS = (
    "admin_set_topic_retention",
    "admin_get_topic_retention",
    "admin_remove_topic_retention",
    "admin_set_topic_message_ttl",
    "admin_get_topic_message_ttl",
    "admin_remove_topic_message_ttl",
)
COMPACTION_EVENTS = ("admin_compaction_status", "admin_trigger_compaction")
TRIGGER_EVENTS = (
    "admin_put_trigger",
    "admin_get_trigger",
    "admin_list_triggers",
    "admin_delete_trigger",
)
FUNCTION_EVENTS = (
    "admin_register_function",
    "admin_put_function",
    "admin_get_function",
    "admin_list_functions",
    "admin_function_status",
    "admin_function_stats",
    "admin_stop_function",
    "admin_trigger_function",
    "admin_start_function",
    "admin_restart_function",
    "admin_put_function_state",
    "admin_get_function_state",
    "admin_incr_function_counter",
    "admin_get_function_counter",
    "admin_delete_function_counter",
    "admin_delete_function",
)
SUBSCRIPTION_VERB_EVENTS = (
    "admin_create_subscription",
    "admin_reset_cursor_to_time",
    "admin_skip_messages",
    "admin_skip_all",
    "admin_reset_cursor_to_message_id",
    "admin_expire_messages",
    "admin_expire_all_subscriptions",
    "admin_peek_message",
    "admin_examine_message",
    "admin_get_message_by_id",
)
NAMESPACE_SUBSCRIPTION_EVENTS = (
    "admin_clear_namespace_subscription_backlog",
    "admin_clear_namespace_backlog",
    "admin_unsubscribe_namespace",
)
TOPIC_VERB_EVENTS = (
    "admin_update_partitions",
    "admin_terminate_partitions",
    "admin_truncate",
    "admin_terminate",
    "admin_unload",
)
TENANCY_EVENTS = (
    "tenancy_list_clusters",
    "tenancy_list_tenants",
    "tenancy_create_tenant",
    "tenancy_get_tenant",
    "tenancy_update_tenant",
    "tenancy_list_namespaces",
    "tenancy_create_namespace",
    "tenancy_get_namespace",
    "tenancy_namespace_topics",
    "tenancy_grant_namespace_permission",
    "tenancy_namespace_permissions",
    "tenancy_grant_subscription_permission",
    "tenancy_subscription_permissions",
    "tenancy_revoke_subscription_permission",
    "tenancy_grant_topic_permission",
    "tenancy_topic_permissions",
    "tenancy_revoke_topic_permission",
    "tenancy_revoke_namespace_permission",
    "tenancy_delete_namespace",
    "tenancy_delete_tenant",
)
SCHEMA_EVENTS = (
    "admin_get_schema_compatibility_strategy",
    "admin_set_schema_compatibility_strategy",
    "admin_post_schema",
    "admin_get_schema",
    "admin_get_schema_version",
    "admin_get_all_schemas",
    "admin_get_schema_version_of",
    "admin_test_schema_compatibility",
    "admin_delete_schema",
    "admin_get_allow_auto_update_schema",
    "admin_set_allow_auto_update_schema",
    "admin_get_schema_validation_enforced",
    "admin_set_schema_validation_enforced",
)
RATE_KINDS = ("publish_rate", "dispatch_rate", "subscription_dispatch_rate", "subscribe_rate")


def _quota_events(level: str) -> tuple[str, ...]:
    """The backlog quota and rate samples of ``level`` ("namespace" or "topic")."""
    quotas = ("get_{}_backlog_quotas", "set_{}_backlog_quota", "remove_{}_backlog_quota")
    rates = (f"{verb}_{{}}_{kind}" for kind in RATE_KINDS for verb in ("get", "set", "remove"))
    return tuple("admin_" + name.format(level) for name in (*quotas, *rates))


NAMESPACE_QUOTA_EVENTS = _quota_events("namespace")
TOPIC_QUOTA_EVENTS = _quota_events("topic")
CONSOLE_EVENTS = ("console_page", "console_file", "console_history")
SCENARIOS = (
    ADMIN_EVENTS,
    SHARED_EVENTS,
    EXCLUSIVE_EVENTS,
    PRODUCER_EVENTS,
    NAMESPACE_EVENTS,
    DELAYED_DELIVERY_EVENTS,
    RETENTION_EVENTS,
    TOPIC_POLICY_EVENTS,
    COMPACTION_EVENTS,
    TRIGGER_EVENTS,
    FUNCTION_EVENTS,
    SUBSCRIPTION_VERB_EVENTS,
    NAMESPACE_SUBSCRIPTION_EVENTS,
    TOPIC_VERB_EVENTS,
    TENANCY_EVENTS,
    SCHEMA_EVENTS,
    NAMESPACE_QUOTA_EVENTS,
    TOPIC_QUOTA_EVENTS,
    CONSOLE_EVENTS,
)


@dataclass
class Reply:
    """A handler's payload 2.0 response."""

    status: int
    headers: dict[str, str]
    text: str

    @property
    def json(self) -> Any:
        return json.loads(self.text)

    def error(self) -> str:
        """The Pulsar error name of an error reply."""
        return self.json["error"]


@dataclass
class Replay:
    """Runs sample events on one fresh topic through the handlers the template routes them to."""

    stack: Any
    declared: tuple[str, ...]
    topic: str = field(default_factory=lambda: f"events-demo-{uuid.uuid4().hex[:10]}")
    namespace: str = field(default_factory=lambda: f"events-demo-ns-{uuid.uuid4().hex[:10]}")
    tenant: str = field(default_factory=lambda: f"events-demo-tenant-{uuid.uuid4().hex[:10]}")
    create_namespace: bool = True
    """Create ``public/<namespace>`` first (the namespace policy samples need it)."""
    ran: set[str] = field(default_factory=set)
    ledger: str | None = None
    """The topic's ledger, once known: the samples' ids of ledger 1 are aimed at it."""

    def __post_init__(self) -> None:
        if self.create_namespace:
            self.stack.create_namespaces(f"public/{self.namespace}")

    @property
    def full_topic(self) -> str:
        return f"persistent://public/default/{self.topic}"

    def __call__(self, name: str, body: str | None = None, **replacements: str) -> Reply:
        """Replay ``name``; ``body`` replaces the sample's (JSON text) for a bad-input case."""
        assert name in self.declared, f"{name} is not declared for this scenario"
        if self.ledger is not None:
            replacements.setdefault("ledger", self.ledger)
        event = load_event(
            name, topic=self.topic, namespace=self.namespace, tenant=self.tenant, **replacements
        )
        if body is not None:
            event["body"] = body
            event["headers"]["content-length"] = str(len(body.encode()))
        routes = [r for r in self.stack.template.routes if r.route_key == event["routeKey"]]
        assert len(routes) == 1, f"{name}: routeKey {event['routeKey']!r} is not one template route"
        spec = self.stack.template.functions[routes[0].function]
        handler = self.stack.gateway.loader.get(spec.logical_id)
        result = handler(event, LambdaContext(spec.name, spec.memory_mb, spec.timeout_s))
        self.ran.add(name)
        body = result.get("body") or ""
        if result.get("isBase64Encoded"):
            body = base64.b64decode(body).decode()
        headers = {k.lower(): v for k, v in (result.get("headers") or {}).items()}
        return Reply(result["statusCode"], headers, body)

    def assert_ran_everything(self) -> None:
        assert self.ran == set(self.declared)


def _sample_body(name: str) -> str:
    return load_event(name)["body"]


def _call(url: str, method: str, body: object = None) -> int:
    """Send ``body`` as JSON (none when None) through the local gateway; the status."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data, {"Content-Type": "application/json"}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


def _replay_rates(run: Replay, level: str) -> None:
    """Each rate of ``level``: unset (204), set, read back as the sample's body, removed."""
    for kind in RATE_KINDS:
        get = f"admin_get_{level}_{kind}"
        unset = run(get)
        assert (unset.status, unset.text) == (204, ""), kind
        assert run(f"admin_set_{level}_{kind}").status == 204, kind
        rate = run(get)
        sample = json.loads(_sample_body(f"admin_set_{level}_{kind}"))
        assert (rate.status, rate.json) == (200, sample), kind
        assert run(f"admin_remove_{level}_{kind}").status == 204, kind
        assert run(get).status == 204, kind


# ---------------------------------------------------------------------- static checks
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
@pytest.mark.emulator
def test_the_admin_events_create_list_inspect_and_delete_a_topic_and_a_partitioned_topic(
    local_stack,
):
    run = Replay(local_stack, ADMIN_EVENTS)
    topic, partitioned = run.full_topic, f"{run.full_topic}-partitioned"

    health = run("admin_health")
    assert (health.status, health.text) == (200, "ok")
    assert health.headers["content-type"].startswith("text/plain")

    assert run("admin_create_topic").status == 204
    again = run("admin_create_topic")
    assert (again.status, again.error()) == (409, "TopicAlreadyExists")
    assert run("admin_create_partitioned").status == 204

    partitions = run("admin_get_partitions")
    assert (partitions.status, partitions.json) == (200, {"partitions": 3})

    listed = run("admin_list_topics")
    assert listed.status == 200
    assert {topic, *(f"{partitioned}-partition-{i}" for i in range(3))} <= set(listed.json)
    assert partitioned not in listed.json

    listed_partitioned = run("admin_list_partitioned")
    assert listed_partitioned.status == 200
    assert partitioned in listed_partitioned.json and topic not in listed_partitioned.json

    stats = run("admin_partitioned_stats")
    assert stats.status == 200
    assert sorted(stats.json["partitions"]) == [f"{partitioned}-partition-{i}" for i in range(3)]
    assert stats.json["msgInCounter"] == 0 and stats.json["subscriptions"] == {}

    assert run("admin_delete_topic").status == 204
    assert run("admin_delete_partitioned").status == 204
    gone = run("admin_get_partitions")
    assert (gone.status, gone.error()) == (404, "TopicNotFound")
    assert topic not in run("admin_list_topics").json
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_data_events_produce_receive_acknowledge_and_redeliver_on_a_shared_subscription(
    local_stack,
):
    run = Replay(local_stack, SHARED_EVENTS)

    subscribed = run("subscribe_shared")
    assert subscribed.status == 200
    consumer = subscribed.json["consumerId"]
    assert subscribed.json == {
        "consumerId": consumer,
        "consumerName": "demo-shared-consumer",
        "subscription": "demo",
        "topic": run.full_topic,
        "schemaVersion": None,  # no schema declared
        "notifyUrl": local_stack.notify.url,  # where an idle consumer may wait (issue 16)
    }

    produced = run("produce_json")
    ledger = produced.json["ledgerId"]  # epoch-ms based, never another incarnation's
    run.ledger = str(ledger)
    assert (produced.status, produced.json) == (
        200,
        {
            "messageIds": [f"{ledger}:0:-1:-1"],
            "ledgerId": ledger,
            "entryId": 0,
            "partition": -1,
            "topic": run.full_topic,
            "duplicate": False,
        },
    )
    entry = run("produce_entry")
    assert (entry.status, entry.json["messageIds"]) == (200, [f"{ledger}:1:-1:-1"])
    bad = run("produce_bad_topic")
    assert (bad.status, bad.error()) == (400, "InvalidTopicName")

    received = run("receive", consumer_id=consumer)
    assert received.status == 200
    messages = received.json["messages"]
    json_message = json.loads(_sample_body("produce_json"))["messages"][0]
    entry_payload = decode_entry(base64.b64decode(_sample_body("produce_entry"))).messages[0]
    assert [m["messageId"] for m in messages] == [f"{ledger}:0:-1:-1", f"{ledger}:1:-1:-1"]
    assert [m["payload"] for m in messages] == [
        json_message["payload"],
        base64.b64encode(entry_payload.payload).decode(),
    ]
    assert [m["key"] for m in messages] == ["order-41", "order-42"]
    assert [m["producerName"] for m in messages] == ["demo-producer", "demo-producer"]
    assert messages[0]["properties"] == {"source": "rest-demo"}
    assert [m["redeliveryCount"] for m in messages] == [0, 0]
    assert all(m["topic"] == run.full_topic for m in messages)

    acked = run("ack", consumer_id=consumer)
    assert (acked.status, acked.json) == (200, {"acknowledged": 1})
    refused = run("ack_cumulative_on_shared", consumer_id=consumer)
    assert (refused.status, refused.error()) == (400, "CumulativeAcknowledgementNotAllowedError")
    nacked = run("nack", consumer_id=consumer)
    assert (nacked.status, nacked.json) == (200, {"redelivered": 1})

    again = run("receive", consumer_id=consumer)
    assert [(m["messageId"], m["redeliveryCount"]) for m in again.json["messages"]] == [
        (f"{ledger}:1:-1:-1", 1)
    ]
    redelivered = run("redeliver", consumer_id=consumer)
    assert (redelivered.status, redelivered.json) == (200, {"redelivered": 1})

    stats = run("admin_stats")
    assert stats.status == 200
    assert stats.json["msgInCounter"] == 2 and stats.json["lastMessageId"] == f"{ledger}:1:-1:-1"
    subscription = stats.json["subscriptions"]["demo"]
    assert subscription["type"] == "Shared"
    assert subscription["msgBacklog"] == 1 and subscription["markDeletePosition"] == f"{ledger}:0"
    assert [c["consumerId"] for c in subscription["consumers"]] == [consumer]
    last = run("admin_last_message_id")
    assert (last.status, last.json["messageId"], last.json["entryId"]) == (
        200,
        f"{ledger}:1:-1:-1",
        1,
    )
    seeked = run("seek", consumer_id=consumer)
    assert (seeked.status, seeked.json) == (200, {"seeked": True})
    replayed = run("receive", consumer_id=consumer)
    assert [m["messageId"] for m in replayed.json["messages"]] == [
        f"{ledger}:0:-1:-1",
        f"{ledger}:1:-1:-1",
    ]
    listed = run("admin_subscriptions")
    assert (listed.status, listed.json) == (200, ["demo"])

    closed = run("close_consumer", consumer_id=consumer)
    assert (closed.status, closed.json) == (200, {"closed": True})
    after_close = run("receive", consumer_id=consumer)
    assert (after_close.status, after_close.error()) == (404, "ConsumerNotFound")

    assert run("admin_delete_subscription").status == 204
    assert run("admin_subscriptions").json == []
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_exclusive_subscribe_event_holds_the_subscription_until_unsubscribe_deletes_it(
    local_stack,
):
    run = Replay(local_stack, EXCLUSIVE_EVENTS)

    first = run("subscribe_exclusive")
    assert first.status == 200
    assert first.json["consumerName"] == "demo-exclusive-consumer"
    busy = run("subscribe_exclusive")
    assert (busy.status, busy.error()) == (409, "ConsumerBusy")
    alive = run("consumer_heartbeat", consumer_id=first.json["consumerId"])
    assert (alive.status, alive.json) == (200, {"alive": True})

    gone = run("unsubscribe", consumer_id=first.json["consumerId"])
    assert (gone.status, gone.json) == (200, {"unsubscribed": True})
    stale = run("unsubscribe", consumer_id=first.json["consumerId"])
    assert (stale.status, stale.error()) == (404, "SubscriptionNotFound")
    orphan = run("consumer_heartbeat", consumer_id=first.json["consumerId"])
    assert (orphan.status, orphan.error()) == (404, "SubscriptionNotFound")
    second = run("subscribe_exclusive")
    assert second.status == 200 and second.json["consumerId"] != first.json["consumerId"]
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_producer_events_take_heartbeat_and_release_an_exclusive_lease_then_upload(
    local_stack,
):
    run = Replay(local_stack, PRODUCER_EVENTS)

    # a fresh topic: the first exclusive producer opens epoch 1 (the heartbeat and release
    # samples send ?epoch=1)
    exclusive = run("producers_register_exclusive")
    assert exclusive.status == 200
    assert exclusive.json == {
        "producerName": "demo-producer",
        "epoch": 1,
        "lastSequenceId": -1,
        "maxMessageSize": exclusive.json["maxMessageSize"],
        "deduplication": exclusive.json["deduplication"],
        "leaseMs": 30000,
        "topic": run.full_topic,
        "schemaVersion": None,  # no schema declared
    }
    assert isinstance(exclusive.json["maxMessageSize"], int)
    assert isinstance(exclusive.json["deduplication"], bool)
    other = json.dumps({"producerName": "demo-other-producer", "accessMode": "Exclusive"})
    fenced = run("producers_register_exclusive", body=other)
    assert (fenced.status, fenced.error()) == (409, "ProducerFenced")
    shared_while_held = run("producers_register_shared")
    assert (shared_while_held.status, shared_while_held.error()) == (409, "ProducerFenced")

    beat = run("producers_heartbeat")
    assert (beat.status, beat.json) == (200, {"epoch": 1})
    released = run("producers_release")
    assert (released.status, released.json) == (200, {"released": True})
    again = run("producers_release")
    assert (again.status, again.json) == (200, {"released": False})
    lost = run("producers_heartbeat")
    assert (lost.status, lost.error()) == (409, "ProducerFenced")

    shared = run("producers_register_shared")
    assert shared.status == 200
    assert shared.json["producerName"] == "demo-shared-producer"
    assert shared.json["epoch"] == 2 and shared.json["lastSequenceId"] == -1
    assert shared.json["topic"] == run.full_topic

    upload = run("produce_upload")
    assert upload.status == 200
    assert set(upload.json) == {"uploadUrl", "entryRef", "expiresInSeconds"}
    prefix = f"entries/persistent/public/default/{run.topic}/"
    assert upload.json["entryRef"].startswith(prefix)
    assert len(upload.json["entryRef"]) > len(prefix)
    assert upload.json["expiresInSeconds"] == 900
    url = urlsplit(upload.json["uploadUrl"])
    assert url.scheme in ("http", "https") and url.query
    assert unquote(url.path).endswith("/" + upload.json["entryRef"]) or (
        unquote(url.path).lstrip("/") == upload.json["entryRef"]
    )

    assert run("admin_set_topic_deduplication").status == 204
    enabled = run("admin_get_topic_deduplication")
    assert (enabled.status, enabled.json) == (200, True)
    deduplicated = run("producers_register_shared")
    assert deduplicated.status == 200
    assert deduplicated.json["deduplication"] is True
    assert deduplicated.json["lastSequenceId"] == -1
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_namespace_policy_events_set_and_read_deduplication_and_the_maximum_size(
    local_stack,
):
    run = Replay(local_stack, NAMESPACE_EVENTS)

    off = run("admin_get_namespace_deduplication")
    assert (off.status, off.json) == (200, False)
    assert run("admin_set_namespace_deduplication").status == 204
    on = run("admin_get_namespace_deduplication")
    assert (on.status, on.json) == (200, True)
    not_a_flag = run("admin_set_namespace_deduplication", body='"yes"')
    assert (not_a_flag.status, not_a_flag.error()) == (400, "InvalidMessage")
    assert run("admin_remove_namespace_deduplication").status == 204
    assert run("admin_get_namespace_deduplication").json is False

    default = run("admin_get_max_message_size")
    assert (default.status, default.json) == (200, 5 * 1024 * 1024)
    assert run("admin_set_max_message_size").status == 204
    limit = run("admin_get_max_message_size")
    assert (limit.status, limit.json) == (200, 1048576)
    for bad in ("abc", "10", "104857601", "true", "1048576.5"):
        refused = run("admin_set_max_message_size", body=bad)
        assert (refused.status, refused.error()) == (400, "InvalidMessage"), bad
    assert run("admin_get_max_message_size").json == 1048576
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_namespace_policy_events_set_read_and_remove_delayed_delivery(local_stack):
    run = Replay(local_stack, DELAYED_DELIVERY_EVENTS)
    settings = Settings.from_env(local_stack.environment)
    defaults = {
        "active": settings.delayed_delivery_enabled,
        "tickTime": settings.delayed_delivery_tick_ms,
        "maxDeliveryDelayInMillis": 0,
    }

    fresh = run("admin_get_delayed_delivery")
    assert (fresh.status, fresh.json) == (200, defaults)
    assert run("admin_set_delayed_delivery").status == 204
    stored = run("admin_get_delayed_delivery")
    sample = json.loads(_sample_body("admin_set_delayed_delivery"))
    assert (stored.status, stored.json) == (200, sample)
    for bad in ('{"active": "no"}', '{"active": true, "tickTime": 0}', "true", '{"tick": 1}'):
        refused = run("admin_set_delayed_delivery", body=bad)
        assert (refused.status, refused.error()) == (400, "InvalidMessage"), bad
    assert run("admin_get_delayed_delivery").json == stored.json
    assert run("admin_remove_delayed_delivery").status == 204
    assert run("admin_get_delayed_delivery").json == defaults
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_namespace_policy_events_set_read_and_remove_retention_and_message_ttl(
    local_stack,
):
    run = Replay(local_stack, RETENTION_EVENTS)

    assert run("admin_get_namespace_retention").json == {
        "retentionTimeInMinutes": 0,
        "retentionSizeInMB": 0,
    }
    assert run("admin_set_namespace_retention").status == 204
    retention = run("admin_get_namespace_retention")
    sample = json.loads(_sample_body("admin_set_namespace_retention"))
    assert (retention.status, retention.json) == (200, sample)
    one_zero = '{"retentionTimeInMinutes": 0, "retentionSizeInMB": 10}'
    for bad in (one_zero, '{"retentionTimeInMinutes": -2, "retentionSizeInMB": 1}', "60"):
        refused = run("admin_set_namespace_retention", body=bad)
        assert (refused.status, refused.error()) == (400, "InvalidMessage"), bad
    assert run("admin_get_namespace_retention").json == sample
    assert run("admin_remove_namespace_retention").status == 204
    assert run("admin_get_namespace_retention").json == {
        "retentionTimeInMinutes": 0,
        "retentionSizeInMB": 0,
    }

    assert run("admin_get_namespace_message_ttl").json == 0
    assert run("admin_set_namespace_message_ttl").status == 204
    ttl = run("admin_get_namespace_message_ttl")
    assert (ttl.status, ttl.json) == (200, 3600)
    for bad in ("-1", '"3600"', "1.5", "2147483648"):
        refused = run("admin_set_namespace_message_ttl", body=bad)
        assert (refused.status, refused.error()) == (400, "InvalidMessage"), bad
    assert run("admin_get_namespace_message_ttl").json == 3600
    assert run("admin_remove_namespace_message_ttl").status == 204
    assert run("admin_get_namespace_message_ttl").json == 0
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_topic_policy_events_override_the_namespace_retention_and_message_ttl(
    local_stack, engine_clients
):
    run = Replay(local_stack, TOPIC_POLICY_EVENTS)
    engine = Engine.build(Settings.from_env(local_stack.environment), clients=engine_clients)
    topic = TopicName.parse(run.full_topic)

    unknown = run("admin_set_topic_retention")
    assert (unknown.status, unknown.error()) == (404, "TopicNotFound")
    engine.admin.create_topic(topic, None)

    assert run("admin_set_topic_retention").status == 204
    retention = run("admin_get_topic_retention")
    sample = json.loads(_sample_body("admin_set_topic_retention"))
    assert (retention.status, retention.json) == (200, sample)
    assert run("admin_remove_topic_retention").status == 204
    inherited = run("admin_get_topic_retention")  # ?applied=true: the namespace's
    assert inherited.json == engine.namespaces.retention("public", "default").to_body()

    assert run("admin_set_topic_message_ttl").status == 204  # ?messageTTL=600
    ttl = run("admin_get_topic_message_ttl")
    assert (ttl.status, ttl.json) == (200, 600)
    query_wins = run("admin_set_topic_message_ttl", body="-5")
    assert query_wins.status == 204 and run("admin_get_topic_message_ttl").json == 600
    assert run("admin_remove_topic_message_ttl").status == 204
    assert run("admin_get_topic_message_ttl").json == engine.namespaces.message_ttl(
        "public", "default"
    )
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_compaction_events_start_a_run_report_it_running_then_done(
    local_stack, jobs_in_process, engine_clients
):
    jobs_in_process.hold()  # the run waits until it has been seen RUNNING
    run = Replay(local_stack, COMPACTION_EVENTS)
    unknown = run("admin_compaction_status")
    assert (unknown.status, unknown.error()) == (404, "TopicNotFound")
    engine = Engine.build(Settings.from_env(local_stack.environment), clients=engine_clients)
    engine.admin.create_topic(TopicName.parse(run.full_topic), None)
    fresh = run("admin_compaction_status")
    assert (fresh.status, fresh.json) == (200, {"status": "NOT_RUN", "lastError": ""})
    message = EntryMessage(payload=b"v", sequence_id=0, publish_time_ms=1, key="k")
    engine.producer.publish(
        TopicName.parse(run.full_topic), encode_entry([message], producer_name="p")
    )
    assert run("admin_trigger_compaction").status == 204
    assert run("admin_compaction_status").json == {"status": "RUNNING", "lastError": ""}
    again = run("admin_trigger_compaction")
    assert (again.status, again.error()) == (409, "Conflict")
    assert again.json["message"].startswith("Compaction already in progress")
    [(job, args)] = jobs_in_process.started
    assert (job, args["topic"]) == ("compact-topic", run.full_topic)
    jobs_in_process.release()
    deadline = time.monotonic() + 240
    while run("admin_compaction_status").json["status"] == "RUNNING":
        assert time.monotonic() < deadline, "the local compact-topic run did not finish"
        time.sleep(0.1)  # the launcher's background run reports through the pointer item
    assert run("admin_compaction_status").json == {"status": "SUCCESS", "lastError": ""}
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_trigger_events_create_show_list_and_delete_a_trigger_with_its_subscription(
    local_stack, engine_clients
):
    run = Replay(local_stack, TRIGGER_EVENTS)
    missing = run("admin_get_trigger")  # its topic does not exist yet
    assert (missing.status, missing.error()) == (404, "TopicNotFound")
    engine = Engine.build(Settings.from_env(local_stack.environment), clients=engine_clients)
    topic = TopicName.parse(run.full_topic)
    bad = run("admin_put_trigger", body='{"target": {"type": "lambda"}, "batchSize": 0}')
    assert (bad.status, bad.error()) == (400, "InvalidMessage")
    assert str(topic) not in engine.admin.list_topics(topic, False)  # the bad body created nothing
    absent = run("admin_put_trigger")  # its Lambda target does not exist yet
    assert (absent.status, absent.error()) == (404, "NotFound")
    assert str(topic) not in engine.admin.list_topics(topic, False)
    local_stack.functions.register("demo-function", lambda event, context: None)
    created = run("admin_put_trigger")  # creates the topic too, as subscribing does
    assert created.status == 200
    assert created.json["target"] == {"type": "lambda", "function": "demo-function"}
    shown = run("admin_get_trigger")
    assert (shown.status, shown.json["batchSize"]) == (200, 10)
    assert run("admin_list_triggers").json == ["demo-trigger"]
    assert "demo-trigger" in engine.admin.stats(topic, partitioned=False)["subscriptions"]
    assert run("admin_delete_trigger").status == 204
    gone = run("admin_get_trigger")
    assert (gone.status, gone.error()) == (404, "NotFound")
    assert "demo-trigger" not in engine.admin.stats(topic, partitioned=False)["subscriptions"]
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_function_events_create_show_list_and_delete_a_function_with_its_trigger(
    local_stack, engine_clients
):
    run = Replay(local_stack, FUNCTION_EVENTS)
    bad = run("admin_put_function", body='{"className": "9Module", "code": "x", "inputs": []}')
    assert (bad.status, bad.error()) == (400, "InvalidMessage") and "'className'" in bad.text
    assert run("admin_list_functions").json == []  # the bad body stored nothing
    created = run("admin_put_function")
    assert created.status == 200 and "code" not in created.json
    assert created.json["inputs"] == ["persistent://public/default/events-demo-fn-in"]
    engine = Engine.build(Settings.from_env(local_stack.environment), clients=engine_clients)
    inputs, trigger = TopicName.parse("events-demo-fn-in"), f"public.{run.namespace}.demo-function"
    assert trigger in engine.triggers.names(inputs)
    again = run("admin_register_function")  # the same definition again: nothing changes
    assert again.status == 200 and again.json["name"] == "demo-function"
    shown = run("admin_get_function")
    assert (shown.status, shown.json["className"]) == (200, "exclaim.Exclaim")
    assert run("admin_list_functions").json == ["demo-function"]
    status = run("admin_function_status")
    restarts = status.json["instances"][0]["status"]["numRestarts"]
    assert (status.status, status.json["numInstances"], restarts) == (200, 1, 0)
    stats = run("admin_function_stats")
    assert (stats.status, stats.json["receivedTotal"]) == (200, 0)
    assert run("admin_stop_function").status == 204
    stopped = run("admin_trigger_function")  # a stopped function takes no trigger
    assert (stopped.status, stopped.error()) == (503, "ServiceUnitNotReady")
    assert run("admin_start_function").status == 204
    assert run("admin_restart_function").status == 204
    assert run("admin_function_status").json["instances"][0]["status"]["numRestarts"] == 1
    assert run("admin_put_function_state").status in (200, 204)
    state = run("admin_get_function_state")
    assert (state.status, state.json["stringValue"]) == (200, "hello")
    assert run("admin_incr_function_counter").json == {"key": "seen", "numberValue": 1}
    assert run("admin_get_function_counter").json == {"key": "seen", "numberValue": 1}
    assert run("admin_delete_function_counter").status == 204
    assert run("admin_get_function_counter").json == {"key": "seen", "numberValue": 0}
    assert run("admin_delete_function").status == 204
    gone = run("admin_get_function")
    assert (gone.status, gone.error()) == (404, "NotFound")
    assert trigger not in engine.triggers.names(inputs)
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_tenancy_events_create_a_tenant_and_namespace_grant_and_revoke_then_delete_them(
    local_stack,
):
    run = Replay(local_stack, TENANCY_EVENTS, create_namespace=False)
    namespace = f"{run.tenant}/{run.namespace}"

    assert (run("tenancy_list_clusters").json) == ["magnetar"]
    assert "public" in run("tenancy_list_tenants").json
    assert run("tenancy_create_tenant").status == 204
    again = run("tenancy_create_tenant")
    assert (again.status, again.error()) == (409, "Conflict")
    assert run("tenancy_get_tenant").json == {
        "adminRoles": ["demo-admin"], "allowedClusters": ["magnetar"]}  # fmt: skip
    assert run("tenancy_update_tenant").status == 204
    assert run("tenancy_list_namespaces").json == []
    assert run("tenancy_create_namespace").status == 204
    assert run("tenancy_list_namespaces").json == [namespace]
    assert run("tenancy_get_namespace").json["replication_clusters"] == ["magnetar"]
    assert run("tenancy_namespace_topics").json == []

    assert run("tenancy_grant_namespace_permission").status == 204
    assert run("tenancy_namespace_permissions").json == {"demo-role": ["consume", "produce"]}
    assert run("tenancy_grant_subscription_permission").status == 204
    assert run("tenancy_subscription_permissions").json == {"demo": ["demo-role"]}
    assert run("tenancy_revoke_subscription_permission").status == 204
    gone = run("tenancy_revoke_subscription_permission")
    assert (gone.status, gone.error()) == (412, "PreconditionFailed")
    assert run("tenancy_grant_topic_permission").status == 204
    assert run("tenancy_topic_permissions").json == {"demo-role": ["consume", "produce"]}
    assert run("tenancy_revoke_topic_permission").status == 204
    assert run("tenancy_revoke_namespace_permission").status == 204
    assert run("tenancy_namespace_permissions").json == {}

    assert run("tenancy_delete_namespace").status == 204
    missing = run("tenancy_get_namespace")
    assert (missing.status, missing.error()) == (404, "NotFound")
    assert run("tenancy_delete_tenant").status == 204
    assert run.tenant not in run("tenancy_list_tenants").json
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_subscription_verb_events_create_reset_skip_clear_and_expire_a_subscription(
    local_stack,
):
    run = Replay(local_stack, SUBSCRIPTION_VERB_EVENTS)
    missing = run("admin_create_subscription")
    assert (missing.status, missing.error()) == (404, "TopicNotFound")
    for n in range(3):  # entries 0, 1, 2 of the topic's ledger
        body = json.dumps({"messages": [{"payload": base64.b64encode(b"m%d" % n).decode()}]})
        request = urllib.request.Request(
            f"{local_stack.url}/v1/persistent/public/default/{run.topic}/messages",
            data=body.encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            assert answer.status == 200
            run.ledger = str(json.loads(answer.read())["ledgerId"])

    def backlog() -> int:
        url = f"{local_stack.url}/admin/v2/persistent/public/default/{run.topic}/stats"
        with urllib.request.urlopen(url, timeout=30) as answer:
            return json.loads(answer.read())["subscriptions"]["demo"]["msgBacklog"]

    assert run("admin_create_subscription").status == 204  # at earliest
    again = run("admin_create_subscription")
    assert (again.status, again.error()) == (409, "Conflict")
    assert backlog() == 3
    peeked = run("admin_peek_message")  # position 1 of the backlog, consuming nothing
    assert (peeked.status, peeked.text, peeked.headers["x-pulsar-message-id"]) == (
        200,
        "m0",
        f"{run.ledger}:0",
    )
    examined = run("admin_examine_message")  # earliest, position 2
    assert (examined.status, examined.text) == (200, "m1")
    by_id = run("admin_get_message_by_id")  # entry 2
    assert (by_id.status, by_id.text) == (200, "m2")
    assert backlog() == 3
    assert run("admin_skip_messages").status == 204 and backlog() == 2
    assert run("admin_skip_all").status == 204 and backlog() == 0
    assert run("admin_reset_cursor_to_time").status == 204 and backlog() == 3
    assert run("admin_reset_cursor_to_message_id").status == 204 and backlog() == 2
    assert run("admin_expire_messages").status == 204 and backlog() == 2  # none an hour old
    assert run("admin_expire_all_subscriptions").status == 204 and backlog() == 0
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_namespace_subscription_events_clear_backlogs_and_unsubscribe_across_topics(
    local_stack,
):
    run = Replay(local_stack, NAMESPACE_SUBSCRIPTION_EVENTS)
    admin = f"{local_stack.url}/admin/v2/persistent/public/{run.namespace}"

    def send(method: str, url: str, body: object) -> bytes:
        request = urllib.request.Request(
            url, json.dumps(body).encode(), {"Content-Type": "application/json"}, method=method
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            assert answer.status in (200, 204)
            return answer.read()

    def backlogs(topic: str) -> dict[str, int]:
        with urllib.request.urlopen(f"{admin}/{topic}/stats", timeout=30) as answer:
            subscriptions = json.loads(answer.read())["subscriptions"]
        return {name: sub["msgBacklog"] for name, sub in subscriptions.items()}

    for topic in ("t1", "t2"):
        message = {"payload": base64.b64encode(b"m").decode()}
        url = f"{local_stack.url}/v1/persistent/public/{run.namespace}/{topic}/messages"
        send("POST", url, {"messages": [message]})
        send("POST", url, {"messages": [message]})
        for sub in ("demo", "other"):
            send("PUT", f"{admin}/{topic}/subscription/{sub}", {"ledgerId": -1, "entryId": -1})
    assert run("admin_clear_namespace_subscription_backlog").status == 204
    assert backlogs("t1") == backlogs("t2") == {"demo": 0, "other": 2}
    assert run("admin_clear_namespace_backlog").status == 204
    assert backlogs("t1") == backlogs("t2") == {"demo": 0, "other": 0}
    assert run("admin_unsubscribe_namespace").status == 204
    assert set(backlogs("t1")) == set(backlogs("t2")) == {"other"}
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_topic_verb_events_grow_terminate_truncate_and_unload_topics(local_stack):
    run = Replay(local_stack, TOPIC_VERB_EVENTS)
    admin = f"{local_stack.url}/admin/v2/persistent/public/default/{run.topic}"
    produce = f"{local_stack.url}/v1/persistent/public/default/{run.topic}/messages"
    message = {"messages": [{"payload": base64.b64encode(b"m").decode()}]}

    def send(method: str, url: str, body: object) -> tuple[int, dict]:
        request = urllib.request.Request(
            url, json.dumps(body).encode(), {"Content-Type": "application/json"}, method=method
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status, json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    assert send("PUT", f"{admin}-partitioned/partitions", 3)[0] == 204
    assert send("POST", produce, message)[0] == 200
    assert send("PUT", f"{admin}/subscription/demo", {"ledgerId": -1, "entryId": -1})[0] == 204
    assert run("admin_update_partitions").status == 204
    assert send("GET", f"{admin}-partitioned/partitions", None)[1] == {"partitions": 4}
    terminated = run("admin_terminate_partitions")
    assert (terminated.status, sorted(terminated.json)) == (200, ["0", "1", "2", "3"])
    assert run("admin_truncate").status == 204
    assert send("GET", f"{admin}/stats", None)[1]["subscriptions"]["demo"]["msgBacklog"] == 0
    last = run("admin_terminate")
    assert (last.status, last.json["entryId"]) == (200, 0)
    assert run("admin_unload").status == 204
    status, refused = send("POST", produce, message)
    assert (status, refused["error"]) == (409, "TopicTerminated")
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_schema_events_register_read_test_and_delete_a_schema_under_a_strategy(local_stack):
    run = Replay(local_stack, SCHEMA_EVENTS)
    assert run("admin_get_schema_compatibility_strategy").json == "UNDEFINED"
    assert run("admin_set_schema_compatibility_strategy").status == 204
    assert run("admin_get_schema_compatibility_strategy").json == "BACKWARD"
    bad = run("admin_set_schema_compatibility_strategy", body='"LOOSE"')
    assert (bad.status, bad.error()) == (400, "InvalidMessage")

    posted = run("admin_post_schema")
    assert (posted.status, posted.json) == (200, {"version": {"version": 0}})
    assert run("admin_post_schema").json == {"version": {"version": 0}}  # equal: same version
    latest = run("admin_get_schema")
    assert (latest.status, latest.json["version"], latest.json["type"]) == (200, 0, "AVRO")
    assert run("admin_get_schema_version").json == latest.json
    assert [v["version"] for v in run("admin_get_all_schemas").json["getSchemaResponses"]] == [0]
    assert run("admin_get_schema_version_of").json == {"version": 0}
    check = run("admin_test_schema_compatibility")
    assert check.json == {"compatibility": False, "schemaCompatibilityStrategy": "BACKWARD"}
    assert run("admin_delete_schema").json == {"version": 1}
    gone = run("admin_get_schema")
    assert (gone.status, gone.error()) == (404, "NotFound")

    assert run("admin_get_allow_auto_update_schema").json is True
    assert run("admin_set_allow_auto_update_schema").status == 204
    assert run("admin_get_allow_auto_update_schema").json is False
    assert run("admin_get_schema_validation_enforced").json is False
    assert run("admin_set_schema_validation_enforced").status == 204
    assert run("admin_get_schema_validation_enforced").json is True
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_namespace_quota_events_set_read_and_remove_a_backlog_quota_and_each_rate(
    local_stack,
):
    run = Replay(local_stack, NAMESPACE_QUOTA_EVENTS)
    assert run("admin_get_namespace_backlog_quotas").json == {}
    assert run("admin_set_namespace_backlog_quota").status == 204  # destination_storage
    quota = json.loads(_sample_body("admin_set_namespace_backlog_quota"))
    shown = run("admin_get_namespace_backlog_quotas")
    assert (shown.status, shown.json) == (200, {"destination_storage": quota})
    bad = run("admin_set_namespace_backlog_quota", body='{"limitSize": 1, "policy": "drop"}')
    assert (bad.status, bad.error()) == (400, "InvalidMessage")
    assert run("admin_remove_namespace_backlog_quota").status == 204
    assert run("admin_get_namespace_backlog_quotas").json == {}

    retention = {"retentionTimeInMinutes": -1, "retentionSizeInMB": 50}  # below the 100 MiB
    namespace_url = f"{local_stack.url}/admin/v2/namespaces/public/{run.namespace}"
    assert _call(f"{namespace_url}/retention", "POST", retention) == 204
    beyond = run("admin_set_namespace_backlog_quota")
    assert (beyond.status, beyond.error()) == (412, "PreconditionFailed")
    assert run("admin_get_namespace_backlog_quotas").json == {}

    not_a_rate = run("admin_set_namespace_publish_rate", body='{"publishThrottlingRateInMsg": "x"}')
    assert (not_a_rate.status, not_a_rate.error()) == (400, "InvalidMessage")
    _replay_rates(run, "namespace")
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_topic_quota_events_set_read_and_remove_a_backlog_quota_and_each_rate(local_stack):
    run = Replay(local_stack, TOPIC_QUOTA_EVENTS, create_namespace=False)
    unknown = run("admin_set_topic_backlog_quota")
    assert (unknown.status, unknown.error()) == (404, "TopicNotFound")
    topic_url = f"{local_stack.url}/admin/v2/persistent/public/default/{run.topic}"
    assert _call(topic_url, "PUT") == 204

    assert run("admin_get_topic_backlog_quotas").json == {}
    assert run("admin_set_topic_backlog_quota").status == 204  # message_age
    quota = json.loads(_sample_body("admin_set_topic_backlog_quota"))
    shown = run("admin_get_topic_backlog_quotas")
    assert (shown.status, shown.json) == (200, {"message_age": quota})
    assert run("admin_remove_topic_backlog_quota").status == 204
    assert run("admin_get_topic_backlog_quotas").json == {}

    retention = {"retentionTimeInMinutes": 30, "retentionSizeInMB": -1}  # below the 3600 s
    assert _call(f"{topic_url}/retention", "POST", retention) == 204
    beyond = run("admin_set_topic_backlog_quota")
    assert (beyond.status, beyond.error()) == (412, "PreconditionFailed")
    assert run("admin_get_topic_backlog_quotas").json == {}

    _replay_rates(run, "topic")
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_console_events_serve_the_page_its_script_and_a_topics_history(local_stack):
    run = Replay(local_stack, CONSOLE_EVENTS, create_namespace=False)
    page = run("console_page")
    assert (page.status, page.headers["content-type"]) == (200, "text/html; charset=utf-8")
    assert "console.js" in page.text
    script = run("console_file")
    assert (script.status, script.headers["content-type"]) == (
        200,
        "text/javascript; charset=utf-8",
    )
    unknown = run("console_history")
    assert (unknown.status, unknown.error()) == (404, "TopicNotFound")

    produce = f"{local_stack.url}/v1/persistent/public/default/{run.topic}/messages"
    message = {"messages": [{"payload": base64.b64encode(b"m").decode()}]}
    assert _call(produce, "POST", message) == 200
    subscription = f"{local_stack.url}/admin/v2/persistent/public/default/{run.topic}"
    earliest = {"ledgerId": -1, "entryId": -1}
    assert _call(f"{subscription}/subscription/demo", "PUT", earliest) == 204
    history = run("console_history")
    assert (history.status, history.json["topic"]) == (200, run.full_topic)
    assert history.json["series"]["msgBacklog"][-1][1] == 1  # now's backlog of demo
    run.assert_ran_everything()
