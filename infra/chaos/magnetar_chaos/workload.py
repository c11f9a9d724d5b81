"""Producers and consumers through the SDK, recording into a ``Model``.

``Workload`` describes a run: messages, partitions, producers (each on one partition, with
a fixed name, explicit increasing sequence ids and deduplication on), subscriptions by type
with their consumers (each nacks ``nack_rate`` of what it gets, acks the rest).
``Running`` starts and stops the threads; ``swap`` closes one consumer of a subscription and
subscribes a new one (consumers leaving and joining).
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import magnetar as pulsar
from magnetar_chaos.model import Model, Position

TYPES = {
    "Shared": pulsar.ConsumerType.Shared,
    "Key_Shared": pulsar.ConsumerType.KeyShared,
    "Failover": pulsar.ConsumerType.Failover,
}


@dataclass(frozen=True)
class Workload:
    """One run's shape; ``subscriptions`` are types (the subscription is named after it)."""

    messages: int = 600
    partitions: int = 2
    producers: int = 2
    keys_per_producer: int = 8
    subscriptions: tuple[str, ...] = ("Shared", "Key_Shared", "Failover")
    consumers_per_subscription: int = 2
    nack_rate: float = 0.05
    nack_delay_ms: int = 100
    batching: bool = True
    batch_max_messages: int = 20
    work_s: float = 0.0
    seed: int = 1
    namespace: str = "chaos"
    topic: str = field(default_factory=lambda: f"chaos-{uuid.uuid4().hex[:8]}")

    @property
    def full_topic(self) -> str:
        return f"persistent://public/{self.namespace}/{self.topic}"

    @property
    def admin_path(self) -> str:
        return f"/admin/v2/persistent/public/{self.namespace}/{self.topic}"

    def subscription_types(self) -> dict[str, str]:
        return {f"sub-{t.lower()}": t for t in self.subscriptions}


def position_of(message_id: Any) -> Position:
    return (message_id.partition(), message_id.ledger_id(), message_id.entry_id(),
            message_id.batch_index())  # fmt: skip


class Running:
    """The threads of one workload on ``client``; ``start`` creates the topic first."""

    def __init__(self, client: pulsar.Client, workload: Workload, model: Model) -> None:
        self.client, self.w, self.model = client, workload, model
        self.rng = random.Random(workload.seed)
        self.lock = threading.Lock()
        self.stop_consuming = threading.Event()
        self.consumers: dict[str, list[tuple[Any, threading.Thread]]] = {}
        self.producer_threads: list[threading.Thread] = []
        self.errors: list[str] = []

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> Running:
        t = self.client._t  # the SDK's transport: admin calls the SDK has no API for
        if f"public/{self.w.namespace}" not in t.call("GET", "/admin/v2/namespaces/public"):
            t.call("PUT", f"/admin/v2/namespaces/public/{self.w.namespace}")
        t.call("POST", f"/admin/v2/namespaces/public/{self.w.namespace}/deduplication",
               json_body=True)  # fmt: skip
        if self.w.partitions > 0:
            t.call("PUT", self.w.admin_path + "/partitions", json_body=self.w.partitions)
        for sub, kind in self.w.subscription_types().items():
            self.consumers[sub] = [self._subscribe(sub, kind)
                                   for _ in range(self.w.consumers_per_subscription)]  # fmt: skip
        share = self.w.messages // self.w.producers
        for p in range(self.w.producers):
            count = share + (self.w.messages % self.w.producers if p == 0 else 0)
            thread = threading.Thread(target=self._produce, args=(p, count), daemon=True,
                                      name=f"chaos-producer-{p}")  # fmt: skip
            thread.start()
            self.producer_threads.append(thread)
        return self

    def producers_done(self, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        for thread in self.producer_threads:
            thread.join(max(deadline - time.monotonic(), 0.01))
        return not any(t.is_alive() for t in self.producer_threads)

    def swap(self, sub: str) -> None:
        """Close the oldest consumer of ``sub`` and subscribe a new one."""
        kind = self.w.subscription_types()[sub]
        with self.lock:
            consumer, thread = self.consumers[sub].pop(0)
        consumer.close()
        thread.join(10)
        with self.lock:
            self.consumers[sub].append(self._subscribe(sub, kind))

    def stop(self) -> None:
        self.stop_consuming.set()
        for running in self.consumers.values():
            for consumer, thread in running:
                thread.join(10)
                try:
                    consumer.close()
                except pulsar.PulsarException as error:
                    self.errors.append(f"close: {error!r}")

    # ------------------------------------------------------------------ producers
    def _partition_topic(self, p: int) -> str:
        if self.w.partitions <= 0:
            return self.w.full_topic
        return f"{self.w.full_topic}-partition-{p % self.w.partitions}"

    def _produce(self, p: int, count: int) -> None:
        name = f"{self.w.topic}-p{p}"
        pending = list(range(count))
        while pending:
            producer = self._create_producer(p, name)
            # With deduplication the service knows the last sequence id stored for this name:
            # anything at or below it is stored (or dropped for good); the rest is sent again.
            last = producer.last_sequence_id()
            failed: list[int] = []
            for seq in pending:
                if seq <= last:
                    self.model.send_failed(f"{p}:{seq}")
                    continue
                key = f"p{p}-k{seq % self.w.keys_per_producer}"
                payload = f"{p}:{seq}"
                producer.send_async(payload.encode(), self._on_sent(payload, key, failed),
                                    partition_key=key, sequence_id=seq)  # fmt: skip
            try:
                producer.flush()
                producer.close()
            except pulsar.PulsarException as error:
                self.errors.append(f"producer {name}: {error!r}")
            pending = sorted(failed)

    def _create_producer(self, p: int, name: str) -> Any:
        """Create the producer (again after a retryable failure, as an application does)."""
        for attempt in range(20):
            try:
                return self.client.create_producer(
                    self._partition_topic(p), producer_name=name,
                    batching_enabled=self.w.batching,
                    batching_max_messages=self.w.batch_max_messages,
                    # the send timeout counts from enqueue (as in Pulsar): a bounded queue
                    # keeps slow, faulted commits from timing out messages still queued
                    block_if_queue_full=True, max_pending_messages=100,
                    send_timeout_millis=30000,
                )  # fmt: skip
            except (pulsar.Timeout, pulsar.ServiceUnitNotReady, pulsar.TooManyRequests,
                    pulsar.UnknownError, pulsar.ConnectError,
                    pulsar.ProducerBusy) as error:  # fmt: skip
                self.errors.append(f"create producer {name} (retried): {error!r}"[:200])
                time.sleep(min(0.1 * 2**attempt, 2.0))
        raise RuntimeError(f"cannot create producer {name}: {self.errors[-1]}")

    def _on_sent(self, payload: str, key: str, failed: list[int]) -> Any:
        def done(result: Any, message_id: Any) -> None:
            if result == pulsar.Result.Ok and message_id is not None:
                self.model.sent(payload, key, position_of(message_id))
            else:
                with self.lock:
                    failed.append(int(payload.split(":")[1]))
                    self.model.send_results[str(result)] += 1

        return done

    # ------------------------------------------------------------------ consumers
    def _subscribe(self, sub: str, kind: str) -> tuple[Any, threading.Thread]:
        """Subscribe (again after a retryable failure, as an application does)."""
        for attempt in range(20):
            try:
                consumer = self.client.subscribe(
                    self.w.full_topic, sub, consumer_type=TYPES[kind],
                    negative_ack_redelivery_delay_ms=self.w.nack_delay_ms,
                    initial_position=pulsar.InitialPosition.Earliest,
                )  # fmt: skip
                break
            except (pulsar.Timeout, pulsar.ServiceUnitNotReady, pulsar.TooManyRequests,
                    pulsar.UnknownError, pulsar.ConnectError) as error:  # fmt: skip
                self.errors.append(f"subscribe {sub} (retried): {error!r}"[:200])
                time.sleep(min(0.1 * 2**attempt, 2.0))
        else:
            raise RuntimeError(f"cannot subscribe {sub}: {self.errors[-1]}")
        thread = threading.Thread(target=self._consume, args=(sub, consumer), daemon=True,
                                  name=f"chaos-consumer-{sub}")  # fmt: skip
        thread.start()
        return consumer, thread

    def _consume(self, sub: str, consumer: Any) -> None:
        while not self.stop_consuming.is_set():
            try:
                msg = consumer.receive(200)
            except pulsar.Timeout:
                continue
            except pulsar.AlreadyClosed:
                return
            payload = msg.data().decode()
            fresh = self.model.delivered(sub, payload, msg.partition_key(),
                                         position_of(msg.message_id()),
                                         msg.redelivery_count())  # fmt: skip
            if self.w.work_s:
                time.sleep(self.w.work_s)  # the application's work
            with self.lock:
                nack = fresh and self.rng.random() < self.w.nack_rate
            try:
                if nack:
                    consumer.negative_acknowledge(msg)
                    self.model.nacked()
                else:
                    consumer.acknowledge(msg)
                    self.model.ack_requested(sub, payload)
            except pulsar.AlreadyClosed:
                return
