"""Namespace and topic policies through the HTTP API on the embedded stack: set, read, remove;
bad input answers Pulsar's error and changes nothing; the engine sees what was set."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from typing import Any

import pytest

from magnetar_wire.names import TopicName

pytestmark = pytest.mark.emulator


@dataclass(frozen=True)
class Answer:
    status: int
    text: str

    @property
    def json(self) -> Any:
        return json.loads(self.text)


@pytest.fixture
def call(local_stack):
    """``call(method, path, body=None)``: one HTTP request to the local gateway."""

    def request(method: str, path: str, body: Any = None) -> Answer:
        data = None if body is None else (body if isinstance(body, str) else json.dumps(body))
        req = urllib.request.Request(
            local_stack.url + path,
            data=None if data is None else data.encode(),
            method=method,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=30) as response:
                return Answer(response.status, response.read().decode())
        except urllib.error.HTTPError as error:
            return Answer(error.code, error.read().decode())

    return request


@pytest.fixture
def namespace(local_stack) -> str:
    """A namespace nobody configured (``public/<fresh>``), created."""
    name = f"public/policies-{uuid.uuid4().hex[:10]}"
    local_stack.create_namespaces(name)
    return name


def _refused(answer: Answer) -> tuple[int, str]:
    return answer.status, answer.json["error"]


# ------------------------------------------------------------------ delayed delivery
def test_delayed_delivery_defaults_to_the_service_settings_until_a_namespace_sets_it(
    call, namespace, settings, engine
):
    path = f"/admin/v2/namespaces/{namespace}/delayedDelivery"
    default = {
        "active": settings.delayed_delivery_enabled,
        "tickTime": settings.delayed_delivery_tick_ms,
        "maxDeliveryDelayInMillis": 0,
    }
    assert call("GET", path).json == default

    body = {"active": False, "tickTime": 250, "maxDeliveryDelayInMillis": 60000}
    assert call("POST", path, body).status == 204
    assert call("GET", path).json == body
    topic = TopicName.parse(f"persistent://{namespace}/t")
    effective = engine.namespaces.effective(topic, fresh=True)
    assert (
        effective.delayed_delivery_active,
        effective.delayed_delivery_tick_ms,
        effective.delayed_delivery_max_delay_ms,
    ) == (False, 250, 60000)

    assert call("DELETE", path).status == 204
    assert call("GET", path).json == default
    effective = engine.namespaces.effective(topic, fresh=True)
    assert (effective.delayed_delivery_active, effective.delayed_delivery_tick_ms) == (
        settings.delayed_delivery_enabled,
        settings.delayed_delivery_tick_ms,
    )


def test_delayed_delivery_takes_the_default_tick_when_the_body_leaves_it_out(
    call, namespace, settings
):
    path = f"/admin/v2/namespaces/{namespace}/delayedDelivery"
    assert call("POST", path, {"active": True}).status == 204
    assert call("GET", path).json == {
        "active": True,
        "tickTime": settings.delayed_delivery_tick_ms,
        "maxDeliveryDelayInMillis": 0,
    }


@pytest.mark.parametrize(
    "body",
    [
        '{"active": "false"}',
        '{"tickTime": 1000}',
        '{"active": true, "tickTime": 0}',
        '{"active": true, "tickTime": 1.5}',
        '{"active": true, "maxDeliveryDelayInMillis": -1}',
        '{"active": true, "tickTimeMs": 1000}',
        "true",
        "not json",
    ],
)
def test_a_bad_delayed_delivery_body_is_invalid_message_and_changes_nothing(call, namespace, body):
    path = f"/admin/v2/namespaces/{namespace}/delayedDelivery"
    before = {"active": True, "tickTime": 2000, "maxDeliveryDelayInMillis": 0}
    assert call("POST", path, before).status == 204

    assert _refused(call("POST", path, body)) == (400, "InvalidMessage")
    assert call("GET", path).json == before


def test_setting_one_namespace_policy_keeps_the_others(call, namespace):
    base = f"/admin/v2/namespaces/{namespace}"
    assert call("POST", f"{base}/deduplication", True).status == 204
    assert call("POST", f"{base}/maxMessageSize", 2048).status == 204
    assert call("POST", f"{base}/delayedDelivery", {"active": False}).status == 204
    assert call("DELETE", f"{base}/delayedDelivery").status == 204

    assert call("GET", f"{base}/deduplication").json is True
    assert call("GET", f"{base}/maxMessageSize").json == 2048


def test_a_policy_write_that_loses_a_race_is_retried_and_keeps_the_winners_change(
    engine, new_engine, namespace, monkeypatch
):
    tenant, local = namespace.split("/")
    other = new_engine()
    store = engine.namespaces._store
    read = store.get
    raced: list[str] = []

    def read_then_lose_the_race(name: str):
        policies = read(name)
        if not raced:
            raced.append(name)
            other.namespaces.set_max_message_size(tenant, local, 4096)
        return policies

    monkeypatch.setattr(store, "get", read_then_lose_the_race)
    engine.namespaces.set_deduplication(tenant, local, True)

    stored = other.namespaces.get(tenant, local)
    assert raced == [namespace]
    assert (stored.deduplication, stored.max_message_size_bytes, stored.version) == (
        True,
        4096,
        2,
    )


# ------------------------------------------------------------------ retention and message TTL
NO_RETENTION = {"retentionTimeInMinutes": 0, "retentionSizeInMB": 0}


@pytest.fixture
def topic_in(engine, namespace):
    """A new non-partitioned topic in the test's namespace, and its admin path."""
    name = TopicName.parse(f"persistent://{namespace}/t-{uuid.uuid4().hex[:6]}")
    engine.admin.create_topic(name, None)
    return name, f"/admin/v2/persistent/{namespace}/{name.local}"


def _applied(engine, name: TopicName) -> tuple[int, int, int]:
    policies = engine.namespaces.effective(name, fresh=True)
    return (
        policies.retention_time_minutes,
        policies.retention_size_mb,
        policies.message_ttl_seconds,
    )


def test_namespace_retention_and_ttl_are_set_read_and_removed(call, namespace, engine):
    base = f"/admin/v2/namespaces/{namespace}"
    name = TopicName.parse(f"persistent://{namespace}/any")
    assert call("GET", f"{base}/retention").json == NO_RETENTION
    assert call("GET", f"{base}/messageTTL").json == 0
    assert _applied(engine, name) == (0, 0, 0)

    infinite = {"retentionTimeInMinutes": -1, "retentionSizeInMB": -1}
    assert call("POST", f"{base}/retention", infinite).status == 204
    assert call("POST", f"{base}/messageTTL", 3600).status == 204
    assert call("GET", f"{base}/retention").json == infinite
    assert call("GET", f"{base}/messageTTL").json == 3600
    assert _applied(engine, name) == (-1, -1, 3600)

    assert call("DELETE", f"{base}/retention").status == 204
    assert call("DELETE", f"{base}/messageTTL").status == 204
    assert call("GET", f"{base}/retention").json == NO_RETENTION
    assert call("GET", f"{base}/messageTTL").json == 0
    assert _applied(engine, name) == (0, 0, 0)


def test_a_topic_setting_wins_over_its_namespace_until_it_is_removed(
    call, namespace, engine, topic_in
):
    name, path = topic_in
    base = f"/admin/v2/namespaces/{namespace}"
    assert (
        call(
            "POST", f"{base}/retention", {"retentionTimeInMinutes": 60, "retentionSizeInMB": 10}
        ).status
        == 204
    )
    assert call("POST", f"{base}/messageTTL", 300).status == 204
    assert call("GET", f"{path}/retention").status == 204  # nothing of its own
    assert call("GET", f"{path}/messageTTL").status == 204
    assert call("GET", f"{path}/retention?applied=true").json == {
        "retentionTimeInMinutes": 60,
        "retentionSizeInMB": 10,
    }
    assert call("GET", f"{path}/messageTTL?applied=true").json == 300

    own = {"retentionTimeInMinutes": -1, "retentionSizeInMB": 512}
    assert call("POST", f"{path}/retention", own).status == 204
    assert call("POST", f"{path}/messageTTL?messageTTL=30").status == 204
    assert call("GET", f"{path}/retention").json == own
    assert call("GET", f"{path}/retention?applied=true").json == own
    assert call("GET", f"{path}/messageTTL").json == 30
    assert _applied(engine, name) == (-1, 512, 30)
    assert call("GET", f"{base}/messageTTL").json == 300  # the namespace keeps its own

    assert call("DELETE", f"{path}/retention").status == 204
    assert call("DELETE", f"{path}/messageTTL").status == 204
    assert _applied(engine, name) == (60, 10, 300)


def test_a_topic_ttl_of_zero_overrides_a_namespace_ttl(call, namespace, engine, topic_in):
    name, path = topic_in
    assert call("POST", f"/admin/v2/namespaces/{namespace}/messageTTL", 300).status == 204
    assert call("POST", f"{path}/messageTTL", 0).status == 204  # a JSON body works too
    assert call("GET", f"{path}/messageTTL?applied=true").json == 0
    assert _applied(engine, name)[2] == 0


def test_a_partitioned_topics_setting_applies_to_every_partition(call, namespace, engine):
    name = TopicName.parse(f"persistent://{namespace}/p-{uuid.uuid4().hex[:6]}")
    engine.admin.create_topic(name, 2)
    base_path = f"/admin/v2/persistent/{namespace}/{name.local}"
    partition_path = f"{base_path}-partition-1"

    assert call("POST", f"{partition_path}/messageTTL?messageTTL=90").status == 204
    assert (
        call(
            "POST", f"{base_path}/retention", {"retentionTimeInMinutes": 5, "retentionSizeInMB": -1}
        ).status
        == 204
    )

    assert call("GET", f"{base_path}/messageTTL").json == 90
    for partition in (name.partition(0), name.partition(1)):
        assert _applied(engine, partition) == (5, -1, 90)


def test_deleting_a_topic_drops_its_settings(call, engine, topic_in):
    name, path = topic_in
    assert call("POST", f"{path}/messageTTL?messageTTL=90").status == 204
    engine.admin.delete_topic(name, partitioned=False, force=True)
    assert _refused(call("GET", f"{path}/messageTTL")) == (404, "TopicNotFound")

    engine.admin.create_topic(name, None)
    assert call("GET", f"{path}/messageTTL").status == 204


@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [
        ("POST", "retention", {"retentionTimeInMinutes": 1, "retentionSizeInMB": 1}),
        ("GET", "retention", None),
        ("DELETE", "retention", None),
        ("POST", "messageTTL?messageTTL=5", None),
        ("GET", "messageTTL?applied=true", None),
        ("DELETE", "messageTTL", None),
    ],
)
def test_an_unknown_topic_is_topic_not_found(call, namespace, method, suffix, body):
    path = f"/admin/v2/persistent/{namespace}/nobody-made-this/{suffix}"
    assert _refused(call(method, path, body)) == (404, "TopicNotFound")


BAD_RETENTION = [
    '{"retentionTimeInMinutes": 0, "retentionSizeInMB": 10}',
    '{"retentionTimeInMinutes": 10, "retentionSizeInMB": 0}',
    '{"retentionSizeInMB": 10}',
    '{"retentionTimeInMinutes": -2, "retentionSizeInMB": 10}',
    '{"retentionTimeInMinutes": 10, "retentionSizeInMB": -5}',
    '{"retentionTimeInMinutes": 2147483648, "retentionSizeInMB": 1}',
    '{"retentionTimeInMinutes": "10", "retentionSizeInMB": 10}',
    '{"retentionTimeInMinutes": 1, "retentionSizeInMB": 1, "retentionSizeInMb": 2}',
    "[1, 1]",
    "{",
]
BAD_TTL = ["-1", "2147483648", '"60"', "true", "6.5", "null", "{"]


@pytest.mark.parametrize("body", BAD_RETENTION)
def test_a_bad_retention_is_invalid_message_and_changes_nothing(call, namespace, topic_in, body):
    _, topic_path = topic_in
    kept = {"retentionTimeInMinutes": 7, "retentionSizeInMB": 8}
    for path in (f"/admin/v2/namespaces/{namespace}/retention", f"{topic_path}/retention"):
        assert call("POST", path, kept).status == 204
        refused = call("POST", path, body)
        assert _refused(refused) == (400, "InvalidMessage")
        assert call("GET", path).json == kept


@pytest.mark.parametrize("body", BAD_TTL)
def test_a_bad_message_ttl_body_is_invalid_message_and_changes_nothing(
    call, namespace, topic_in, body
):
    _, topic_path = topic_in
    for path in (f"/admin/v2/namespaces/{namespace}/messageTTL", f"{topic_path}/messageTTL"):
        assert call("POST", path, 11).status == 204
        assert _refused(call("POST", path, body)) == (400, "InvalidMessage")
        assert call("GET", path).json == 11


@pytest.mark.parametrize("query", ["-1", "abc", "2147483648", ""])
def test_a_bad_message_ttl_query_is_invalid_message_and_changes_nothing(call, topic_in, query):
    _, path = topic_in
    assert call("POST", f"{path}/messageTTL?messageTTL=12").status == 204
    assert _refused(call("POST", f"{path}/messageTTL?messageTTL={query}")) == (
        400,
        "InvalidMessage",
    )
    assert call("GET", f"{path}/messageTTL").json == 12


def test_fresh_lookups_see_a_change_made_by_another_process_at_once(
    engine, new_engine, namespace, topic_in
):
    name, _ = topic_in
    tenant, local = namespace.split("/")
    assert _applied(engine, name) == (0, 0, 0)
    admin = new_engine()
    admin.namespaces.set_message_ttl(tenant, local, 45)
    admin.namespaces.set_topic_retention(
        name, {"retentionTimeInMinutes": 3, "retentionSizeInMB": 4}
    )
    assert _applied(engine, name) == (3, 4, 45)
