"""A waiting long-poll returns as soon as a message is committed (issue 16, latency), on the
memory service: the produce container's commit wakes the receive container's wait, long
before its next head check (the check interval is set to 5 s here)."""

from __future__ import annotations

import json
import threading
import time

from edge_http import call, subscribe

from magnetar_local.memory_service import MemoryService, memory_settings
from magnetar_wire.names import TopicName

PATH = "persistent/public/default/wake"
TOPIC = TopicName.parse("persistent://public/default/wake")
CHECK_INTERVAL_MS = 5_000


def test_a_waiting_receive_returns_right_after_a_produce_not_at_the_next_head_check():
    settings = memory_settings(receive_check_interval_ms=CHECK_INTERVAL_MS)
    with MemoryService(settings) as svc:
        consumer = subscribe(svc, PATH, "s")
        key = svc.engine.topics.resolve(TOPIC, create=False).key
        url = f"{svc.url}/v1/{PATH}/subscriptions/s/consumers/{consumer}/receive"
        body = json.dumps({"maxMessages": 10, "waitMs": 3 * CHECK_INTERVAL_MS}).encode()
        answers: list = []

        def long_poll() -> None:
            started = time.monotonic()
            answers.append((call(url, body=body), time.monotonic() - started))

        poller = threading.Thread(target=long_poll)
        poller.start()
        deadline = time.monotonic() + 10
        while svc.signal.waiting(key) == 0:  # the receive is blocked in its wait
            assert time.monotonic() < deadline, "the receive never waited"
            threading.Event().wait(0.001)
        produced = call(f"{svc.url}/v1/{PATH}/messages",
                        body=json.dumps({"messages": [{"payload": "YWJj"}]}).encode())  # fmt: skip
        assert produced[0] == 200, produced
        poller.join(timeout=3 * CHECK_INTERVAL_MS / 1000)
        (status, answer, _), waited_s = answers[0]
        assert status == 200, answer
        assert [m["messageId"] for m in answer["messages"]] == produced[1]["messageIds"]
        assert waited_s < CHECK_INTERVAL_MS / 1000 / 2  # woken, not found by a head check
