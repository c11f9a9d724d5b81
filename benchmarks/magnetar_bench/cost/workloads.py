"""The cost workloads (``--workloads``) and their runs: each workload's producer and Shared
consumers on a ``LocalStack`` per front door, polling as on Lambda, metered (``usage``)."""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass

from magnetar_bench.cost.report import report_of
from magnetar_bench.cost.usage import Meters, Usage
from magnetar_bench.idle import idle_month_row

FRONT_DOORS = ("http-api", "function-url")


@dataclass(frozen=True)
class Workload:
    """Messages of ``size_bytes``, ``batch`` per entry at most (and ``batch_max_bytes``,
    cut after ``publish_delay_ms``), delivered ``delay_ms`` late; ``one_at_a_time``: each
    send waits for its answer (one message per request)."""

    name: str
    messages: int
    size_bytes: int
    batch: int = 1
    delay_ms: int = 0
    one_at_a_time: bool = False
    batch_max_bytes: int = 128 * 1024
    publish_delay_ms: int = 10
    subscriptions: int = 1


WORKLOADS = {
    "unbatched": Workload("unbatched", 1000, 100, one_at_a_time=True),
    "pipelined": Workload("pipelined", 2000, 100),
    "batched": Workload("batched", 10_000, 1024, batch=100),
    "batched-large": Workload(
        "batched-large", 20_000, 1024, batch=1000, batch_max_bytes=1024 * 1024, publish_delay_ms=100
    ),
    "delayed": Workload("delayed", 200, 100, delay_ms=2000, one_at_a_time=True),
    "delayed-pipelined": Workload("delayed-pipelined", 2000, 100, delay_ms=2000),
}


def run_workload(client, meters: Meters, workload: Workload, timeout_s: float = 600) -> Usage:
    """Produce and consume ``workload`` concurrently (one Shared consumer on each of its
    subscriptions); the usage of both. Raises RuntimeError when a send fails or not every
    message arrives on every subscription within ``timeout_s``."""
    import magnetar as pulsar

    topic = f"persistent://public/default/cost-{workload.name}-{uuid.uuid4().hex[:8]}"
    received, failures, lock, done = [0], [], threading.Lock(), threading.Event()
    expected = workload.messages * workload.subscriptions

    def listener(consumer, message) -> None:
        consumer.acknowledge(message)
        with lock:
            received[0] += 1
            if received[0] >= expected:
                done.set()

    mark = meters.mark()
    consumers = [client.subscribe(topic, f"cost-{k}", consumer_type=pulsar.ConsumerType.Shared,
                                  message_listener=listener)
                 for k in range(workload.subscriptions)]  # fmt: skip
    producer = client.create_producer(
        topic, batching_enabled=workload.batch > 1, batching_max_messages=max(workload.batch, 1),
        batching_max_publish_delay_ms=workload.publish_delay_ms, block_if_queue_full=True,
        batching_max_allowed_size_in_bytes=workload.batch_max_bytes,
        max_pending_messages=max(4 * workload.batch, 100),
    )  # fmt: skip
    payload = b"x" * workload.size_bytes

    def sent(result, _message_id) -> None:
        if result != pulsar.Result.Ok:
            failures.append(result)
            done.set()  # a failed send never arrives: stop waiting for it

    for _ in range(workload.messages):
        deliver_at = int(time.time() * 1000) + workload.delay_ms if workload.delay_ms else None
        if workload.one_at_a_time:
            producer.send(payload, deliver_at=deliver_at)  # raises on failure
        else:
            producer.send_async(payload, sent, deliver_at=deliver_at)
    producer.flush()
    if not done.wait(timeout_s) or failures:
        raise RuntimeError(f"{workload.name}: {received[0]} of {expected} arrived, {len(failures)} sends failed {dict(Counter(map(str, failures)))}")  # fmt: skip
    producer.close()
    for consumer in consumers:
        consumer.close()
    return meters.since(mark)


def run_idle(client, meters: Meters, seconds: float) -> Usage:
    """One Shared consumer waiting ``seconds`` with nothing to receive."""
    import magnetar as pulsar

    mark = meters.mark()
    topic = f"persistent://public/default/cost-idle-{uuid.uuid4().hex[:8]}"
    consumer = client.subscribe(topic, "idle", consumer_type=pulsar.ConsumerType.Shared)
    threading.Event().wait(seconds)  # the measurement *is* the idle time: nothing to await
    consumer.close()
    return meters.since(mark)


def run_cost(front_doors: list[str], workloads: list[Workload], idle_seconds: float) -> list[dict]:
    """Run every workload on a stack per front door; one report row per (front door, workload)."""
    import magnetar as pulsar
    from magnetar_local.stack import LocalStack

    rows = []
    for front_door in front_doors:
        with LocalStack(front_door=front_door, commit_signal="poll").start() as stack:
            meters = Meters(stack)
            client = pulsar.Client(stack.url)
            try:
                for workload in workloads:
                    usage = run_workload(client, meters, workload)
                    rows.append(report_of(workload.name, front_door, usage,
                                          1e6 / workload.messages, "million messages",
                                          workload.subscriptions))  # fmt: skip
                if idle_seconds > 0:
                    usage = run_idle(client, meters, idle_seconds)
                    rows.append(report_of("idle-spell", front_door, usage, 1.0,
                                          f"idle spell of {idle_seconds:g} s"))  # fmt: skip
            finally:
                client.close()
                meters.capacity.uninstall()
    if idle_seconds > 0:
        rows.append(idle_month_row(idle_seconds))
    return rows
