"""Backlog quotas and publish rates on the embedded stack (issue 14), through the HTTP API and
the SDK: a quota beyond the retention is 412, a producer_exception quota refuses produce and
stores nothing, and a publish rate holds concurrent producers within the stated error."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
import uuid
from typing import Any

import pytest

import magnetar

pytestmark = pytest.mark.emulator


def call(url: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url + path, data=data, method=method, headers={"Content-Type": "application/json"})  # fmt: skip
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            text = response.read().decode()
            return response.status, json.loads(text) if text else None
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read().decode())


def test_a_quota_beyond_the_retention_is_412_and_a_producer_exception_quota_stores_nothing(
    local_stack,
):
    url, ns = local_stack.url, f"public/quota-{uuid.uuid4().hex[:8]}"
    local_stack.create_namespaces(ns)
    retention = {"retentionTimeInMinutes": -1, "retentionSizeInMB": 1}
    assert call(url, "POST", f"/admin/v2/namespaces/{ns}/retention", retention)[0] == 204
    big = {"limitSize": 2 * 1024 * 1024, "policy": "producer_exception"}
    status, answer = call(url, "POST", f"/admin/v2/namespaces/{ns}/backlogQuota", big)
    assert (status, answer["error"]) == (412, "PreconditionFailed")
    assert "exceeds configured retention quota" in answer["message"]
    assert call(url, "GET", f"/admin/v2/namespaces/{ns}/backlogQuotaMap") == (200, {})

    topic = f"persistent://{ns}/refused"
    client = magnetar.Client(url)
    try:
        consumer = client.subscribe(topic, "slow")  # a subscription makes a backlog
        producer = client.create_producer(topic, batching_enabled=False)
        small = {"limitSize": 10, "policy": "producer_exception"}
        quota_path = f"/admin/v2/persistent/{ns}/refused/backlogQuota"
        assert (
            call(url, "POST", quota_path + "?backlogQuotaType=destination_storage", small)[0] == 204
        )
        producer.send(b"first")  # the backlog is empty when it arrives
        with pytest.raises(magnetar.ProducerBlockedQuotaExceededException):
            producer.send(b"second")
        stats = call(url, "GET", f"/admin/v2/persistent/{ns}/refused/stats")[1]
        assert stats["msgInCounter"] == 1
        consumer.close()
    finally:
        client.close()


def test_a_publish_rate_holds_concurrent_producers_within_the_stated_error(local_stack):
    """4 SDK producers send 15 messages each against 10 msg/s. Each container the gateway
    runs (at most 4 here) admits its full bucket (10) at once, then 10/s: the stated error
    (RATE_LIMIT_CONTAINERS=1) is at most C*R*(T+1) messages in T s, so the 60 messages take
    at least (60 - 4*10) / (4*10) = 0.5 s however the requests spread; every one is stored
    once (the SDK waited out its 429s)."""
    url, ns = local_stack.url, f"public/rate-{uuid.uuid4().hex[:8]}"
    local_stack.create_namespaces(ns)
    rate = {"publishThrottlingRateInMsg": 10}
    assert call(url, "POST", f"/admin/v2/namespaces/{ns}/publishRate", rate)[0] == 204
    topic = f"persistent://{ns}/rated"
    client = magnetar.Client(url)
    try:
        producers = [client.create_producer(topic, batching_enabled=False) for _ in range(4)]

        def send(p: magnetar.Producer) -> None:
            for i in range(15):
                p.send(b"m%d" % i)

        started = time.monotonic()
        threads = [threading.Thread(target=send, args=(p,)) for p in producers]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        elapsed = time.monotonic() - started
        stats = call(url, "GET", f"/admin/v2/persistent/{ns}/rated/stats")[1]
        assert stats["msgInCounter"] == 60
        assert elapsed >= (60 - 4 * 10) / (4 * 10)
    finally:
        client.close()
