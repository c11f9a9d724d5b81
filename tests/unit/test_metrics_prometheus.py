"""The local ``GET /metrics``: the handlers' EMF records as Prometheus text, Pulsar's names."""

from __future__ import annotations

import json
import urllib.request

import pytest

from magnetar_core.api import metrics
from magnetar_core.domain import metering
from magnetar_local import metrics as prometheus
from magnetar_local.memory_service import MemoryService

PRODUCE = "POST /v1/{domain}/{tenant}/{namespace}/{topic}/messages"
ACK = "POST /v1/{domain}/{tenant}/{namespace}/{topic}/subscriptions/{subscription}/consumers/{consumerId}/ack"
PATH = {"domain": "persistent", "tenant": "acme", "namespace": "orders", "topic": "t1"}
TOPIC_LABELS = 'namespace="acme/orders",topic="persistent://acme/orders/t1"'


def _emf(route: str, path: dict, status: int = 200, latency_ms: float = 3.0, **counts) -> dict:
    """The EMF record the handlers write for one invocation with these counts."""
    records: list[dict] = []
    clock = iter([0.0, latency_ms])
    with (
        metrics.emitting(records.append),
        metrics.measured(route, path, "r", lambda: next(clock)) as m,
    ):
        for name, value in counts.items():
            metering.count(name, value)
        m.status = status
    return records[0]


def test_records_become_pulsar_counters_per_topic_and_request_counters_per_route_and_status():
    registry = prometheus.MetricsRegistry()
    for _ in range(2):
        registry.record(_emf(PRODUCE, PATH, MessagesIn=5, BytesIn=700))
    registry.record(_emf(PRODUCE, PATH, status=400))
    registry.record(_emf(ACK, {**PATH, "subscription": "s"}, Acks=4))
    text = registry.render()
    assert f"pulsar_in_messages_total{{{TOPIC_LABELS}}} 10\n" in text
    assert f"pulsar_in_bytes_total{{{TOPIC_LABELS}}} 1400\n" in text
    assert f'magnetar_acks_total{{{TOPIC_LABELS},subscription="s"}} 4\n' in text
    assert f'magnetar_requests_total{{route="{PRODUCE}",status="200"}} 2\n' in text
    assert f'magnetar_requests_total{{route="{PRODUCE}",status="400"}} 1\n' in text
    assert "# TYPE pulsar_in_messages_total counter\n" in text
    assert "pulsar_out_messages_total" not in text  # nothing was dispatched


def test_latency_is_a_cumulative_histogram_per_route_in_milliseconds():
    registry = prometheus.MetricsRegistry()
    for latency_ms in (0.5, 3.0, 7.0, 40000.0):
        registry.record(_emf(PRODUCE, PATH, latency_ms=latency_ms))
    text = registry.render()
    bucket = f'magnetar_request_duration_ms_bucket{{route="{PRODUCE}",le='
    assert f'{bucket}"1"}} 1\n' in text
    assert f'{bucket}"5"}} 2\n' in text
    assert f'{bucket}"10"}} 3\n' in text
    assert f'{bucket}"30000"}} 3\n' in text
    assert f'{bucket}"+Inf"}} 4\n' in text
    assert f'magnetar_request_duration_ms_count{{route="{PRODUCE}"}} 4\n' in text
    assert f'magnetar_request_duration_ms_sum{{route="{PRODUCE}"}} 40010.5\n' in text


def test_label_values_are_escaped_as_prometheus_text_requires():
    registry = prometheus.MetricsRegistry()
    registry.record(_emf('GET /a"b\\c', {}))
    assert 'route="GET /a\\"b\\\\c"' in registry.render()


def test_backlog_is_read_on_scrape_for_recent_topics_only_and_a_failing_topic_is_left_out():
    asked: list[str] = []

    def backlog_of(topic: str) -> dict:
        asked.append(topic)
        if topic.endswith("/gone"):
            raise LookupError("deleted")
        return {"storageSize": 900, "backlogSize": 300,
                "subscriptions": {"a": {"msgBacklog": 2}, "b": {"msgBacklog": 5}}}  # fmt: skip

    registry = prometheus.MetricsRegistry(backlog_of)
    for i in range(prometheus.MAX_SCRAPED_TOPICS + 5):
        registry.record(_emf(PRODUCE, {**PATH, "topic": f"t{i}"}, MessagesIn=1))
    registry.record(_emf(PRODUCE, {**PATH, "topic": "gone"}, MessagesIn=1))
    registry.record(_emf(PRODUCE, {**PATH, "topic": "idle"}))  # nothing in: not scraped
    text = registry.render()
    assert len(asked) == prometheus.MAX_SCRAPED_TOPICS
    assert "persistent://acme/orders/t0" not in asked  # the oldest ones dropped out
    last = f'namespace="acme/orders",topic="persistent://acme/orders/t{prometheus.MAX_SCRAPED_TOPICS + 4}"'
    assert f"pulsar_msg_backlog{{{last}}} 7\n" in text
    assert f"pulsar_storage_size{{{last}}} 900\n" in text
    assert f"pulsar_storage_backlog_size{{{last}}} 300\n" in text
    assert f'pulsar_subscription_back_log{{{last},subscription="b"}} 5\n' in text
    assert "acme/orders/gone" not in text.split("# HELP pulsar_msg_backlog")[1]


@pytest.mark.timeout(30)
def test_the_gateway_serves_what_its_handlers_did_at_get_metrics():
    with MemoryService() as svc:
        body = b'{"messages": [{"payload": "aGk="}, {"payload": "aGk="}]}'
        request = urllib.request.Request(
            svc.url + "/v1/persistent/public/default/scraped/messages", data=body,
            headers={"Content-Type": "application/json"}, method="POST",
        )  # fmt: skip
        urllib.request.urlopen(request, timeout=10).read()
        with urllib.request.urlopen(svc.url + "/metrics", timeout=10) as answer:
            content_type, text = answer.headers["Content-Type"], answer.read().decode()
    assert content_type == prometheus.CONTENT_TYPE
    labels = 'namespace="public/default",topic="persistent://public/default/scraped"'
    assert f"pulsar_in_messages_total{{{labels}}} 2\n" in text
    assert f"pulsar_storage_size{{{labels}}} " in text  # read from the stats on scrape


def _post(url: str, body: dict) -> dict:
    data = json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method="POST",
                                     headers={"Content-Type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read() or b"null")


@pytest.mark.timeout(30)
def test_nacks_and_a_dead_letter_move_are_counted_on_the_subscription_and_not_as_messages_in():
    with MemoryService() as svc:
        base = f"{svc.url}/v1/persistent/public/default/poison"
        policy = {
            "maxRedeliverCount": 1,
            "deadLetterTopic": "persistent://public/default/poison-dlq",
        }
        handle = _post(f"{base}/subscriptions/s/consumers",
                       {"subscriptionType": "Shared", "deadLetterPolicy": policy})  # fmt: skip
        consumer = f"{base}/subscriptions/s/consumers/{handle['consumerId']}"
        _post(f"{base}/messages", {"messages": [{"payload": "YQ=="}]})
        for _ in range(2):  # delivered, nacked; redelivered (count 1), nacked: exhausted
            [message] = _post(f"{consumer}/receive", {"maxMessages": 1, "waitMs": 2000})["messages"]
            _post(f"{consumer}/nack", {"messageIds": [message["messageId"]]})
        assert _post(f"{consumer}/receive", {"maxMessages": 1, "waitMs": 200})["messages"] == []
        text = svc.gateway.metrics.render()
    labels = 'namespace="public/default",topic="persistent://public/default/poison"'
    assert f'magnetar_nacks_total{{{labels},subscription="s"}} 2\n' in text
    assert f'magnetar_dead_letter_moves_total{{{labels},subscription="s"}} 1\n' in text
    assert f"pulsar_in_messages_total{{{labels}}} 1\n" in text  # the produce only
    assert "poison-dlq" not in text.split("# HELP pulsar_msg_backlog")[0]
