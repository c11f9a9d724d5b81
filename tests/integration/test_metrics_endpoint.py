"""``GET /metrics`` of the embedded stack: what the real handlers did on the emulator, in
Prometheus text with Pulsar's names, backlog read from the stats on scrape."""

from __future__ import annotations

import json
import urllib.request
import uuid

import pytest

pytestmark = pytest.mark.emulator


def _post(url: str, body: dict) -> dict:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"},
        method="POST",
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read() or b"null")


def test_after_producing_three_and_acking_two_the_metrics_show_the_counts_and_a_backlog_of_one(
    local_stack,
):
    name = f"metrics-{uuid.uuid4().hex[:8]}"
    base = f"{local_stack.url}/v1/persistent/public/default/{name}"
    handle = _post(f"{base}/subscriptions/sub/consumers", {"initialPosition": "Earliest",
                                                           "subscriptionType": "Shared"})  # fmt: skip
    consumer = f"{base}/subscriptions/sub/consumers/{handle['consumerId']}"
    _post(f"{base}/messages", {"messages": [{"payload": "YQ=="}, {"payload": "Yg=="}]})
    _post(f"{base}/messages", {"messages": [{"payload": "Yw=="}]})
    received = _post(f"{consumer}/receive", {"maxMessages": 10, "waitMs": 1000})
    ids = [m["messageId"] for m in received["messages"]]
    assert len(ids) == 3
    _post(f"{consumer}/ack", {"messageIds": ids[:2]})

    with urllib.request.urlopen(f"{local_stack.url}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    labels = f'namespace="public/default",topic="persistent://public/default/{name}"'
    assert f"pulsar_in_messages_total{{{labels}}} 3\n" in text
    assert f"pulsar_out_messages_total{{{labels}}} 3\n" in text
    assert f'magnetar_acks_total{{{labels},subscription="sub"}} 2\n' in text
    assert f'pulsar_subscription_back_log{{{labels},subscription="sub"}} 1\n' in text
    assert f"pulsar_msg_backlog{{{labels}}} 1\n" in text
    produce = "POST /v1/{domain}/{tenant}/{namespace}/{topic}/messages"
    assert f'magnetar_requests_total{{route="{produce}",status="200"}} ' in text


def test_the_notification_channels_invocations_are_recorded_by_the_stack_not_printed(
    local_stack, capsys
):
    from websockets.sync.client import connect

    capsys.readouterr()
    with connect(local_stack.notify.url, open_timeout=10) as channel:
        channel.send(json.dumps({"action": "watch", "ref": 1, "watches": []}))
        channel.recv(timeout=10)  # the function's answer: it ran
    printed = capsys.readouterr().out
    assert '"route":"notify"' not in printed  # a Lambda's stdout, here every test's
    with urllib.request.urlopen(f"{local_stack.url}/metrics", timeout=10) as answer:
        assert 'route="notify"' in answer.read().decode()
