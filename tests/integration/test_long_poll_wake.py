"""On the embedded stack a commit in one container wakes the long-poll waiting in another
(issue 16, latency): both engines share the process's commit signal (``COMMIT_SIGNAL=local``),
so the receive returns on the wake, not on a head check (every 5 s here): the signal's waits
on the partition are recorded, and the one the receive returned from was woken, whatever the
time the publish took on a loaded machine."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

from delivered import payloads

from magnetar_core.engine import Engine
from magnetar_local.commit_signal import SHARED

CHECK_INTERVAL_MS = 5_000


def test_a_waiting_receive_returns_right_after_another_container_commits(
    settings, engine_clients, topic, make_entry, monkeypatch
):
    assert settings.commit_signal == "local"
    slow = replace(settings, receive_check_interval_ms=CHECK_INTERVAL_MS)
    receiver, producer = (Engine.build(slow, clients=engine_clients) for _ in range(2))
    handle = receiver.subscriptions.subscribe(topic, "s", "c", "Shared", earliest=True)
    key = receiver.topics.resolve(topic, create=False).key
    answers: list = []
    woken: list[bool] = []  # each wait on the partition: True when a commit ended it
    wait = SHARED.wait

    def recorded_wait(pk: str, seen: int, timeout_ms: float) -> bool:
        ended_by_commit = wait(pk, seen, timeout_ms)
        if pk == key:
            woken.append(ended_by_commit)
        return ended_by_commit

    monkeypatch.setattr(SHARED, "wait", recorded_wait)

    def long_poll() -> None:
        answers.append(
            receiver.subscriptions.receive(
                topic, "s", handle.consumer_id, 10, 3 * CHECK_INTERVAL_MS
            )
        )

    poller = threading.Thread(target=long_poll)
    poller.start()
    deadline = time.monotonic() + 10
    while SHARED.waiting(key) == 0:  # the receive is blocked in its wait
        assert time.monotonic() < deadline, "the receive never waited"
        threading.Event().wait(0.001)
    producer.producer.publish(topic, make_entry(b"wake"))
    poller.join(timeout=3 * CHECK_INTERVAL_MS / 1000)
    assert [payloads(delivered) for delivered in answers] == [[b"wake"]]
    assert woken and woken[-1] is True  # woken, not found by a head check after a timeout
