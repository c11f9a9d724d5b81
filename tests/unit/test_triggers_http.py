"""The trigger routes on the memory service: PUT, GET, list, DELETE, the subscription seen
in stats, and a bad body refused with the field named and nothing stored."""

from __future__ import annotations

import json

import pytest
from edge_http import call

from magnetar_local.memory_service import MemoryService

TOPIC = "persistent/public/default/hooked"
TRIGGERS = f"/admin/v2/{TOPIC}/triggers"
WEBHOOK = {"type": "webhook", "url": "http://127.0.0.1:9/hook", "secret": "s3cret"}


@pytest.fixture(scope="module")
def svc():
    with MemoryService() as service:
        status, answer, _ = call(f"{service.url}/admin/v2/{TOPIC}", method="PUT")
        assert status == 204, answer
        yield service


def put(svc, name: str, body: object):
    return call(f"{svc.url}{TRIGGERS}/{name}", "PUT", json.dumps(body).encode())


def test_a_trigger_is_created_read_listed_and_deleted_with_its_subscription(svc):
    status, answer, _ = put(svc, "to-hook", {"target": WEBHOOK, "batchSize": 50})
    assert status == 200, answer
    assert answer["target"] == {"type": "webhook", "url": WEBHOOK["url"]}  # no secret
    assert answer["batchSize"] == 50 and answer["topic"] == "persistent://public/default/hooked"
    assert call(f"{svc.url}{TRIGGERS}/to-hook", "GET")[1] == answer
    assert call(f"{svc.url}{TRIGGERS}", "GET")[1] == ["to-hook"]
    stats = call(f"{svc.url}/admin/v2/{TOPIC}/stats", "GET")[1]
    assert "to-hook" in stats["subscriptions"]
    assert call(f"{svc.url}{TRIGGERS}/to-hook", "DELETE")[0] == 204
    assert call(f"{svc.url}{TRIGGERS}", "GET")[1] == []
    status, answer, _ = call(f"{svc.url}{TRIGGERS}/to-hook", "GET")
    assert (status, answer["error"]) == (404, "NotFound")
    assert "to-hook" not in call(f"{svc.url}/admin/v2/{TOPIC}/stats", "GET")[1]["subscriptions"]


def test_a_bad_body_is_a_400_naming_the_field_and_stores_nothing(svc):
    status, answer, _ = put(svc, "bad", {"target": WEBHOOK, "filter": {"key": [{"suffix": "x"}]}})
    assert (status, answer["error"]) == (400, "InvalidMessage")
    assert "'filter.key'" in answer["message"]
    assert call(f"{svc.url}{TRIGGERS}", "GET")[1] == []
    assert "bad" not in call(f"{svc.url}/admin/v2/{TOPIC}/stats", "GET")[1]["subscriptions"]
