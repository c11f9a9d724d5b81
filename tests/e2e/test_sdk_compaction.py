"""SDK -> HTTP -> handlers -> emulator: topic compaction triggered through the admin route
(the job launcher of the stack's handlers runs the compact-topic job, in this process: see
``jobs_in_process``), then a compacted reader."""

from __future__ import annotations

import time
import uuid

import pytest
import requests

import magnetar as pulsar

pytestmark = pytest.mark.emulator


def _compact(url: str, topic: str, timeout_s: float = 240.0) -> dict:
    """PUT .../compaction, then the status once it is no longer RUNNING."""
    path = f"{url}/admin/v2/{topic.replace('://', '/')}/compaction"
    started = requests.put(path, timeout=30)
    assert started.status_code == 204, started.text
    deadline = time.monotonic() + timeout_s
    while True:
        status = requests.get(path, timeout=30).json()
        if status["status"] != "RUNNING" or time.monotonic() > deadline:
            return status
        time.sleep(0.1)  # the job runs in another thread and reports only there: poll


def _read_all(reader, count: int) -> list[tuple[str | None, bytes, pulsar.MessageId]]:
    """``count`` messages (each awaited as long as a loaded machine takes), then none is
    left: the reader is at the end of what it can read."""
    out = []
    for _ in range(count):
        msg = reader.read_next(30_000)
        out.append((msg.partition_key(), msg.data(), msg.message_id()))
    assert not reader.has_message_available(), out
    return out


@pytest.mark.usefixtures("jobs_in_process")
@pytest.mark.slow
def test_a_compacted_reader_reads_the_latest_value_of_each_key_then_new_messages(
    client, local_stack
):
    topic = f"persistent://public/default/compaction-{uuid.uuid4().hex[:8]}"
    producer = client.create_producer(topic, batching_enabled=False)
    sent = [
        producer.send(value, partition_key=key)
        for key, value in (
            ("k1", b"v1"),
            ("k2", b"v1"),
            ("k1", b"v2"),
            ("k3", b"v1"),
            ("k2", None),  # a tombstone: k2 is removed
        )
    ]
    producer.send(b"keyless")

    assert _compact(local_stack.url, topic) == {"status": "SUCCESS", "lastError": ""}
    producer.send(b"v3", partition_key="k2")
    compacted = client.create_reader(topic, pulsar.MessageId.earliest, is_read_compacted=True)
    got = _read_all(compacted, 3)
    assert [(k, v) for k, v, _ in got] == [("k1", b"v2"), ("k3", b"v1"), ("k2", b"v3")]
    assert [str(i) for _, _, i in got[:2]] == [str(sent[2]), str(sent[3])]

    everything = client.create_reader(topic, pulsar.MessageId.earliest)
    assert [v for _, v, _ in _read_all(everything, 7)] == [
        b"v1", b"v1", b"v2", b"v1", b"", b"keyless", b"v3",
    ]  # fmt: skip
    producer.close()


def test_a_compacted_consumer_is_refused_on_a_shared_subscription(client):
    topic = f"persistent://public/default/compaction-{uuid.uuid4().hex[:8]}"
    with pytest.raises(pulsar.NotAllowedError, match="Read compacted"):
        client.subscribe(
            topic, "s", consumer_type=pulsar.ConsumerType.Shared, is_read_compacted=True
        )
