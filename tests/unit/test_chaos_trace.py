"""The request trace explains a key order violation with its partition's requests only:
what each receive dispatched (entries, batch indexes, redelivery counts) and what each ack
and nack named, in arrival order."""

from __future__ import annotations

import json

from magnetar_chaos.trace import RequestTrace, explain
from magnetar_local.events import HttpRequest, HttpResponse

TOPIC = "/v1/persistent/public/chaos/t-partition-{p}/subscriptions/{sub}/consumers/cid-{c}/{action}"


def call(trace, p, sub, c, action, body, answer, status=200):
    path = TOPIC.format(p=p, sub=sub, c=c, action=action)
    request = HttpRequest("POST", path, "", [], json.dumps(body).encode())
    trace.wrap(lambda r: HttpResponse(status, [], json.dumps(answer).encode()))(request)


def test_a_violation_is_explained_by_the_requests_of_its_subscription_and_partition_only():
    trace = RequestTrace(frozenset({"sub-key_shared"}))
    entry = {"entryId": 2, "batchIndexes": [1, 4], "redeliveryCount": 1}
    call(trace, 1, "sub-key_shared", "aaaaaa", "receive", {}, {"entries": [entry]})
    call(
        trace,
        1,
        "sub-key_shared",
        "aaaaaa",
        "nack",
        {"messageIds": ["7:2:1:4"], "redeliveryCounts": {"7:2:1:4": 1}, "delayMs": 100},
        {},
    )
    call(trace, 1, "sub-key_shared", "bbbbbb", "receive", {}, {}, status=504)
    call(trace, 0, "sub-key_shared", "aaaaaa", "receive", {}, {"entries": [entry]})  # partition 0
    call(trace, 1, "sub-shared", "cccccc", "receive", {}, {"entries": [entry]})  # not traced
    report = {"invariants": {"key_order": {"violations": [
        "sub-key_shared key p1-k1: 1:41 at (1, 7, 2, 4) after (1, 7, 7, 0)"]}}}  # fmt: skip

    lines = explain(report, trace).splitlines()

    assert lines[0].startswith("--- sub-key_shared, partition 1")
    assert [line.split()[2:] for line in lines[1:]] == [
        ["aaaaaa", "receive", "200", "2[1,", "4]@1"],
        ["aaaaaa", "nack", "200", "2:4", "seen=[1]", "delay=100"],
        ["bbbbbb", "receive", "504", "{}"],
    ]
