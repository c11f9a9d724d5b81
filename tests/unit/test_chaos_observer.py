"""The gateway observer flags a dispatch that arrived after a confirmed ack of the same
message on the same topic and subscription, and only that."""

from __future__ import annotations

import json

from magnetar_chaos.observer import GatewayObserver
from magnetar_local.events import HttpRequest, HttpResponse

BASE = "/v1/persistent/public/chaos/{topic}/subscriptions/s/consumers/c1/"


def call(observer, topic, action, body, answer):
    request = HttpRequest("POST", BASE.format(topic=topic) + action, "", [],
                          json.dumps(body).encode())  # fmt: skip
    observer.wrap(lambda r: HttpResponse(200, [], json.dumps(answer).encode()))(request)


def receive(observer, topic, batch_indexes):
    entry = {"ledgerId": 1, "entryId": 0, "partition": 0, "batchIndexes": batch_indexes}
    call(observer, topic, "receive", {}, {"entries": [entry]})


def test_a_message_dispatched_after_its_confirmed_ack_is_flagged_once_per_topic():
    observer = GatewayObserver()
    receive(observer, "a", None)
    call(observer, "a", "ack", {"messageIds": ["1:0:0:3"]}, {"acknowledged": 1})
    receive(observer, "a", [4, 5])  # the acked index is not in it: fine
    receive(observer, "b", None)  # another topic's entry 1:0:0
    assert observer.acked_then_dispatched() == []
    receive(observer, "a", [3, 4])
    assert observer.acked_then_dispatched() == ["persistent/public/chaos/a/s: 1:0:0:3"]
