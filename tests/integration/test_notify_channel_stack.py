"""The local stack's notification channel (issue 16) with the real handlers on the
emulator: subscribe tells the channel's URL, a connection watches a consumer's partition
(answered, a two-way route), a produce posts one notice to it, and the moto management API
takes the AWS adapter's posts."""

from __future__ import annotations

import json
import uuid

import requests
from websockets.sync.client import connect

from magnetar_core.adapters.aws.watches import ManagementConnections


def subscribe(url: str, topic: str) -> dict:
    answer = requests.post(f"{url}/v1/persistent/public/default/{topic}/subscriptions/s/consumers",
                           json={"subscriptionType": "Shared"}, timeout=10)  # fmt: skip
    answer.raise_for_status()
    return answer.json()


def test_a_produce_posts_one_notice_to_the_connection_watching_its_partition(local_stack):
    topic = f"notify-{uuid.uuid4().hex[:8]}"
    handle = subscribe(local_stack.url, topic)
    assert handle["notifyUrl"] == local_stack.notify.url
    full = f"persistent://public/default/{topic}"
    watch = {"action": "watch", "ref": 7,
             "watches": [{"topic": full, "subscription": "s", "consumerId": handle["consumerId"]}]}  # fmt: skip
    with connect(handle["notifyUrl"], open_timeout=5) as channel:
        channel.send(json.dumps(watch))
        assert json.loads(channel.recv(timeout=5)) == {"watching": 1, "ref": 7}
        produced = requests.post(f"{local_stack.url}/v1/persistent/public/default/{topic}/messages",
                                 json={"messages": [{"payload": "aGk="}]}, timeout=10)  # fmt: skip
        produced.raise_for_status()
        assert json.loads(channel.recv(timeout=5)) == {"notice": full}
        channel.send(json.dumps({**watch, "watches": [{"topic": full, "subscription": "s"}]}))
        refused = json.loads(channel.recv(timeout=5))
        assert (refused["error"], refused["ref"]) == ("InvalidMessage", 7)


def test_the_management_adapter_posts_through_motos_api_gateway_management_api(local_stack):
    client = local_stack.client("apigatewaymanagementapi")
    assert ManagementConnections(lambda: client).post("conn-1", b'{"notice":"t"}') is True
