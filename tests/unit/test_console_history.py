"""The console's history: the in-memory minutes (local), CloudWatch's GetMetricData (on
moto: moto does not turn EMF logs into metrics, so the test puts the metrics the EMF
records would make), the use case that ends the backlog with now's, and the source a
handler container gets (injected beside an injected engine: a MemoryService's own)."""

from __future__ import annotations

from datetime import UTC, datetime

import boto3
import pytest
import requests
from moto import mock_aws

from magnetar_core.adapters.aws.history import CloudWatchHistory
from magnetar_core.adapters.memory.history import MinuteHistory
from magnetar_core.api.http import container_engine, injected_engine
from magnetar_core.domain.errors import TopicNotFound
from magnetar_core.ports import HISTORY_WINDOW_MS, History
from magnetar_core.services.console_history import ConsoleHistory
from magnetar_local.history import LocalHistory
from magnetar_local.memory_service import MemoryService
from magnetar_wire.names import TopicName

TOPIC = "persistent://acme/orders/t"
NOW_MS = 1_700_000_000_000 - 1_700_000_000_000 % 60_000 + 30_000  # mid-minute


def test_counts_of_a_minute_become_its_rate_in_messages_per_second():
    minutes = MinuteHistory()
    minutes.add(TOPIC, "MessagesIn", 90, NOW_MS)
    minutes.add(TOPIC, "MessagesIn", 30, NOW_MS + 10_000)
    minutes.add(TOPIC, "MessagesOut", 60, NOW_MS - 60_000)
    minutes.add(TOPIC, "Acks", 5, NOW_MS)  # not a series of the history
    minutes.sample(TOPIC, "msgBacklog", 7, NOW_MS - 60_000)
    minutes.sample(TOPIC, "msgBacklog", 4, NOW_MS - 50_000)  # the minute's latest wins
    history = minutes.history(TOPIC, NOW_MS - HISTORY_WINDOW_MS, NOW_MS + 1)
    minute = NOW_MS - 30_000
    assert history.scope == "topic"
    assert history.series["msgRateIn"] == [(minute, 2.0)]
    assert history.series["msgRateOut"] == [(minute - 60_000, 1.0)]
    assert history.series["msgBacklog"] == [(minute - 60_000, 4)]


def test_minutes_older_than_an_hour_are_dropped_and_other_topics_are_apart():
    minutes = MinuteHistory()
    minutes.add(TOPIC, "MessagesIn", 60, NOW_MS - HISTORY_WINDOW_MS - 120_000)
    minutes.add(TOPIC, "MessagesIn", 60, NOW_MS)
    minutes.add("persistent://acme/orders/other", "MessagesIn", 600, NOW_MS)
    series = minutes.history(TOPIC, 0, NOW_MS + 1).series["msgRateIn"]
    assert series == [(NOW_MS - 30_000, 1.0)]
    with pytest.raises(ValueError, match="gauge"):
        minutes.sample(TOPIC, "MessagesIn", 1, NOW_MS)


def test_the_local_history_takes_counts_from_emf_records_and_samples_backlog():
    local = LocalHistory(lambda: [TOPIC, "persistent://acme/orders/gone"], _stats, now_ms=lambda: NOW_MS)  # fmt: skip
    emf = {
        "_aws": {"Timestamp": NOW_MS, "CloudWatchMetrics": []},
        "topic": TOPIC,
        "MessagesIn": 120,
    }
    local.record(emf)
    local.record({"_aws": {}, "topic": TOPIC, "MessagesIn": 1})  # no timestamp: ignored
    local.sample()
    history = local.minutes.history(TOPIC, 0, NOW_MS + 1)
    assert history.series["msgRateIn"] == [(NOW_MS - 30_000, 2.0)]
    assert history.series["msgBacklog"] == [(NOW_MS - 30_000, 3)]


def _stats(topic: str) -> dict:
    if topic.endswith("gone"):
        raise TopicNotFound(topic)
    return {"subscriptions": {"a": {"msgBacklog": 1}, "b": {"msgBacklog": 2}}}


def test_cloudwatch_history_reads_the_namespace_series_back_per_minute(monkeypatch):
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)  # in-process moto, not the stack's
    with mock_aws():
        cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
        dimensions = [{"Name": "service", "Value": "magnetar-api"},
                      {"Name": "tenant", "Value": "acme"}, {"Name": "namespace", "Value": "orders"}]  # fmt: skip
        at = datetime.fromtimestamp((NOW_MS - 120_000) / 1000, UTC)
        cloudwatch.put_metric_data(Namespace="Magnetar", MetricData=[
            {"MetricName": "MessagesIn", "Dimensions": dimensions, "Timestamp": at, "Value": 120},
            {"MetricName": "MessagesIn", "Dimensions": dimensions, "Timestamp": at, "Value": 60},
            {"MetricName": "MessagesOut", "Dimensions": dimensions, "Timestamp": at, "Value": 30},
            {"MetricName": "MessagesIn", "Dimensions": dimensions[:1], "Timestamp": at, "Value": 999},
        ])  # fmt: skip
        history = CloudWatchHistory(cloudwatch, "Magnetar", "magnetar-api").history(
            TOPIC, NOW_MS - HISTORY_WINDOW_MS, NOW_MS
        )
    assert history.scope == "namespace"
    assert [value for _, value in history.series["msgRateIn"]] == [3.0]
    assert [value for _, value in history.series["msgRateOut"]] == [0.5]
    assert history.series["msgBacklog"] == []


class _Source:
    def history(self, topic: str, start_ms: int, end_ms: int) -> History:
        self.asked = (topic, start_ms, end_ms)
        return History("topic", 60_000, {"msgRateIn": [(NOW_MS - 90_000, 1.5)], "msgBacklog": []})


def test_the_console_history_ends_the_backlog_with_the_stats_of_now():
    source = _Source()
    console = ConsoleHistory(lambda: source, lambda name: _stats(str(name)), lambda: NOW_MS)
    body = console.history(TopicName.parse(TOPIC))
    assert source.asked == (TOPIC, NOW_MS - HISTORY_WINDOW_MS, NOW_MS + 1)
    assert body["series"] == {"msgRateIn": [[NOW_MS - 90_000, 1.5]], "msgBacklog": [[NOW_MS, 3]]}
    assert (body["startMs"], body["endMs"], body["periodMs"]) == (NOW_MS - HISTORY_WINDOW_MS, NOW_MS, 60_000)  # fmt: skip
    with pytest.raises(TopicNotFound):
        console.history(TopicName.parse("persistent://acme/orders/gone"))


def test_a_memory_service_serves_the_console_history_of_its_own_records_without_the_environment(
    monkeypatch,
):
    for name in ("TOPICS_TABLE", "METRICS_HISTORY", "AWS_ENDPOINT_URL"):  # no stack's settings
        monkeypatch.delenv(name, raising=False)
    with MemoryService() as svc:
        topic = "persistent/public/default/charted"
        produced = requests.post(f"{svc.url}/v1/{topic}/messages", timeout=10,
                                 json={"messages": [{"value": "m"}] * 3})  # fmt: skip
        assert produced.status_code == 200, produced.text
        answer = requests.get(f"{svc.url}/console/api/history/{topic}", timeout=10)
    assert answer.status_code == 200, answer.text
    assert [rate for _, rate in answer.json()["series"]["msgRateIn"]] == [3 / 60]


def test_an_engine_injected_without_a_history_source_says_so_and_one_with_it_serves_it():
    minutes = MinuteHistory()
    with injected_engine(object()):  # type: ignore[arg-type] - any object will do
        bare = container_engine()
    with injected_engine(object(), lambda: minutes):  # type: ignore[arg-type]
        served = container_engine()
    with pytest.raises(LookupError, match="without a metrics history source"):
        bare.history("magnetar-api")
    assert served.history("magnetar-api") is minutes
