"""``msgBacklog`` counts every message not acknowledged, whatever happened to the consumers
that read them (issue 14, "Stats that are right"), on the memory service with hand-computed
expectations; ``msgBacklogNoDelayed`` leaves out the delayed ones, as Pulsar's
(``msgBacklog - msgDelayed``)."""

from __future__ import annotations

import json

from edge_http import call
from stats_support import b64, close, consumer_call, produce, stats, subscribe

PATH = "persistent/public/default/backlog"


def test_a_closed_consumers_read_but_unacked_messages_stay_in_the_backlog(svc):
    first = subscribe(svc, PATH, "s")
    for i in range(5):
        produce(svc, PATH, b64(f"m{i}"))  # five entries of one message
    got = consumer_call(svc, PATH, "s", first, "receive", {"maxMessages": 3, "waitMs": 0})
    assert len(got["messages"]) == 3
    before = stats(svc, PATH)["subscriptions"]["s"]
    # the receive took a grant of all 5 entries (3 handed out, 2 held for the consumer's
    # next receives): unacked, as Pulsar counts the messages in a consumer's receiver queue
    assert (before["msgBacklog"], before["unackedMessages"]) == (5, 5)
    assert before["consumers"][0]["unackedMessages"] == 5

    close(svc, PATH, "s", first)

    closed = stats(svc, PATH)["subscriptions"]["s"]
    assert (closed["msgBacklog"], closed["unackedMessages"], closed["consumers"]) == (5, 0, [])
    second = subscribe(svc, PATH, "s")
    got = consumer_call(svc, PATH, "s", second, "receive", {"maxMessages": 10, "waitMs": 0})
    assert len(got["messages"]) == 5  # the three read before come again
    ids = [m["messageId"] for m in got["messages"]][:2]
    consumer_call(svc, PATH, "s", second, "ack", {"messageIds": ids})
    acked = stats(svc, PATH)["subscriptions"]["s"]
    assert (acked["msgBacklog"], acked["msgBacklogNoDelayed"], acked["unackedMessages"]) == (
        3,
        3,
        3,
    )


def test_delayed_messages_are_in_the_backlog_but_not_in_the_backlog_without_delayed(svc):
    consumer = subscribe(svc, PATH, "s")
    produce(svc, PATH, b64("now-1"), b64("now-2"))  # one entry of two messages
    later = svc.runtime.now_ms() + 3_600_000
    body = {"messages": [{"payload": b64("later"), "deliverAt": later}]}
    status, answer, _ = call(f"{svc.url}/v1/{PATH}/messages", body=json.dumps(body).encode())
    assert status == 200, answer
    got = consumer_call(svc, PATH, "s", consumer, "receive", {"maxMessages": 10, "waitMs": 0})
    assert [m["payload"] for m in got["messages"]] == [b64("now-1"), b64("now-2")]

    sub = stats(svc, PATH)["subscriptions"]["s"]
    assert (sub["msgBacklog"], sub["msgDelayed"], sub["msgBacklogNoDelayed"]) == (3, 1, 2)
    assert sub["unackedMessages"] == 2
