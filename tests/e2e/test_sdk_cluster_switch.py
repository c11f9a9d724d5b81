"""Cluster failover end to end (issue 15): a client on ``AutoClusterFailover`` moves from a
primary deployment that dies to the secondary, with its producer and consumer.

Two deployments that share no data: the primary is a ``MemoryService`` (the real handlers
on in-memory stores, killed like a crashed process: its open connections are reset), the
secondary is the session's embedded stack."""

from __future__ import annotations

import time
import uuid

import magnetar as pulsar
from magnetar_local.memory_service import MemoryService

CHECK_INTERVAL_MS = 100


def wait_until(condition, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for the condition"
        time.sleep(0.02)


def test_a_client_switches_to_the_secondary_when_the_primary_dies_and_keeps_what_it_holds(
    local_stack,
):
    topic = f"failover-{uuid.uuid4().hex[:8]}"
    primary_service = MemoryService().start()
    try:
        primary = pulsar.ServiceInfo(primary_service.url)
        secondary = pulsar.ServiceInfo(local_stack.url)
        provider = pulsar.AutoClusterFailover(primary, [secondary],
                                              check_interval_ms=CHECK_INTERVAL_MS)  # fmt: skip
        client = pulsar.Client(provider, operation_timeout_seconds=5)
        consumer = client.subscribe(topic, "orders", consumer_type=pulsar.ConsumerType.Shared,
                                    initial_position=pulsar.InitialPosition.Earliest)  # fmt: skip
        producer = client.create_producer(topic, producer_name="failover-producer")
        producer.send(b"on-primary")
        first = consumer.receive(5000)
        assert first.data() == b"on-primary"
        consumer.acknowledge(first)

        primary_service.gateway.kill()
        primary_service.stop()
        sent: list[pulsar.Result] = []
        for i in range(3):  # held by the producer while the primary is gone
            producer.send_async(f"held-{i}".encode(), lambda res, _id: sent.append(res))
        wait_until(lambda: client.get_service_info() == secondary)
        producer.flush()
        producer.send(b"on-secondary")

        got = [consumer.receive(5000) for _ in range(4)]
        assert sent == [pulsar.Result.Ok] * 3
        assert sorted(m.data() for m in got) == [b"held-0", b"held-1", b"held-2", b"on-secondary"]
        for msg in got:
            consumer.acknowledge(msg)
        on_secondary = pulsar.Client(local_stack.url)
        try:
            reader = on_secondary.create_reader(topic, pulsar.MessageId.earliest)
            assert [reader.read_next(5000).data() for _ in range(4)] == [
                b"held-0", b"held-1", b"held-2", b"on-secondary"]  # fmt: skip
            assert not reader.has_message_available()
        finally:
            on_secondary.close()
        client.close()
    finally:
        primary_service.stop()
