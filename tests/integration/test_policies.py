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

from magnetar_core.names import TopicName

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
def namespace() -> str:
    """A namespace nobody configured (``public/<fresh>``)."""
    return f"public/policies-{uuid.uuid4().hex[:10]}"


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
