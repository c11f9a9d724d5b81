"""Many producers at once on one topic of the embedded stack: every message stored once, no
connection refused or reset, no send failed (entry ids come from the ledger's sequencer, so
concurrent commits never race; overload answers 503 with Retry-After, which the SDK honours
within its send timeout)."""

from __future__ import annotations

import threading
import uuid

import magnetar as pulsar

PRODUCERS = 100
BOUND_S = 120  # the whole run, start to last join


def test_a_hundred_concurrent_single_message_producers_store_every_message_without_a_failure(
    local_stack,
):
    topic = f"persistent://public/default/crowd-{uuid.uuid4().hex[:8]}"
    start = threading.Barrier(PRODUCERS)
    failures: list[BaseException] = []
    stored: list[pulsar.MessageId] = []
    lock = threading.Lock()

    def produce(index: int) -> None:
        client = pulsar.Client(local_stack.url, operation_timeout_seconds=60)
        try:
            producer = client.create_producer(topic, batching_enabled=False)
            start.wait(timeout=BOUND_S)
            msg_id = producer.send(b"from-%03d" % index)
            with lock:
                stored.append(msg_id)
            producer.close()
        except BaseException as exc:  # surfaced below
            with lock:
                failures.append(exc)
        finally:
            client.close()

    threads = [threading.Thread(target=produce, args=(i,)) for i in range(PRODUCERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(BOUND_S)

    assert not any(t.is_alive() for t in threads), "producers still running after the bound"
    assert failures == []
    assert len({m.entry_id() for m in stored}) == PRODUCERS
    client = pulsar.Client(local_stack.url)
    try:
        reader = client.create_reader(topic, pulsar.MessageId.earliest)
        payloads = {reader.read_next(10_000).data() for _ in range(PRODUCERS)}
        assert payloads == {b"from-%03d" % i for i in range(PRODUCERS)}
        assert not reader.has_message_available()
    finally:
        client.close()
