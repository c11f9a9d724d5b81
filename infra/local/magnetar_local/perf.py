"""``magnetar perf produce|consume``: throughput and AWS requests per message on the embedded stack.

The stack runs in this process, so every AWS request the handlers make is counted (botocore
``before-call`` events, ``magnetar_core.storage.aws.REQUESTS``). Costs use the list prices in
``shared/PRICES.md`` (us-east-1). Not a test: a measurement tool whose output goes to
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass

PRICE_PER_REQUEST = {  # dollars per request
    "s3.PutObject": 0.005 / 1000,
    "s3.GetObject": 0.0004 / 1000,
    "dynamodb.PutItem": 0.625 / 1e6,
    "dynamodb.DeleteItem": 0.625 / 1e6,
    "dynamodb.UpdateItem": 0.625 / 1e6,
    "dynamodb.GetItem": 0.125 / 1e6,
    "dynamodb.Query": 0.125 / 1e6,
    "dynamodb.BatchGetItem": 0.125 / 1e6,
}
API_GATEWAY_PER_REQUEST = 1.00 / 1e6
LAMBDA_PER_REQUEST = 0.20 / 1e6
LAMBDA_ARM_PER_GB_S = 0.0000133334
LAMBDA_MEMORY_GB = 0.25


@dataclass
class Measurement:
    """What one run measured."""

    path: str
    messages: int
    seconds: float
    aws: Counter
    http_calls: int
    handler_seconds: float

    def report(self) -> dict:
        per_k = {op: round(n * 1000 / self.messages, 2) for op, n in sorted(self.aws.items())}
        aws_cost = sum(PRICE_PER_REQUEST.get(op, 0.0) * n for op, n in self.aws.items())
        edge_cost = self.http_calls * (API_GATEWAY_PER_REQUEST + LAMBDA_PER_REQUEST)
        duration_cost = self.handler_seconds * LAMBDA_MEMORY_GB * LAMBDA_ARM_PER_GB_S
        million = 1e6 / self.messages
        return {
            "path": self.path,
            "messages": self.messages,
            "messages_per_second": round(self.messages / self.seconds, 1),
            "aws_requests_per_1000_messages": per_k,
            "aws_requests_per_1000_messages_total": round(
                sum(self.aws.values()) * 1000 / self.messages, 2
            ),
            "http_calls_per_1000_messages": round(self.http_calls * 1000 / self.messages, 2),
            "usd_per_million_messages": {
                "storage_requests": round(aws_cost * million, 4),
                "api_gateway_and_lambda_requests": round(edge_cost * million, 4),
                "lambda_duration_arm64_256MB": round(duration_cost * million, 4),
                "total": round((aws_cost + edge_cost + duration_cost) * million, 4),
            },
        }


class _CallMeter:
    """Counts gateway calls and the time spent in handlers (the Lambda duration proxy)."""

    def __init__(self, gateway) -> None:
        self.calls = 0
        self.seconds = 0.0
        self._lock = threading.Lock()
        self._invoke = gateway.invoke
        gateway.invoke = self._timed

    def _timed(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return self._invoke(*args, **kwargs)
        finally:
            with self._lock:
                self.calls += 1
                self.seconds += time.perf_counter() - start

    def snapshot(self) -> tuple[int, float]:
        with self._lock:
            return self.calls, self.seconds


def _produce(client, topic: str, count: int, size: int, batch: int) -> None:
    producer = client.create_producer(
        topic,
        batching_enabled=batch > 1,
        batching_max_messages=max(batch, 1),
        batching_max_publish_delay_ms=10,
        block_if_queue_full=True,
        max_pending_messages=max(batch * 4, 100),
    )
    payload = b"x" * size
    done = threading.Semaphore(0)
    for _ in range(count):
        producer.send_async(payload, lambda _res, _mid: done.release())
    producer.flush()
    for _ in range(count):
        done.acquire()
    producer.close()


def _consume(client, pulsar, topic: str, count: int, consumers: int) -> None:
    received = Counter()
    lock = threading.Lock()
    finished = threading.Event()

    def listener(consumer, msg) -> None:
        consumer.acknowledge(msg)
        with lock:
            received["n"] += 1
            if received["n"] >= count:
                finished.set()

    subs = [
        client.subscribe(
            topic,
            "perf",
            consumer_type=pulsar.ConsumerType.Shared,
            initial_position=pulsar.InitialPosition.Earliest,
            message_listener=listener,
        )
        for _ in range(consumers)
    ]
    if not finished.wait(timeout=600):
        raise RuntimeError(f"only {received['n']} of {count} messages arrived within 600 s")
    for consumer in subs:
        consumer.close()


def _idle(client, pulsar, topic: str, seconds: float) -> None:
    consumer = client.subscribe(topic, "idle", consumer_type=pulsar.ConsumerType.Shared)
    quiet = threading.Event()
    quiet.wait(seconds)  # the measurement *is* the idle time: nothing to await
    consumer.close()


def idle_report(seconds: float, aws: Counter, http_calls: int, handler_seconds: float) -> dict:
    """Cost of one consumer waiting with nothing to receive, scaled to one hour."""
    scale = 3600 / seconds
    aws_cost = sum(PRICE_PER_REQUEST.get(op, 0.0) * n for op, n in aws.items()) * scale
    edge_cost = http_calls * (API_GATEWAY_PER_REQUEST + LAMBDA_PER_REQUEST) * scale
    gb_s = handler_seconds * LAMBDA_MEMORY_GB * scale
    return {
        "path": "idle",
        "measured_seconds": seconds,
        "aws_requests_per_hour": {op: round(n * scale) for op, n in sorted(aws.items())},
        "http_calls_per_hour": round(http_calls * scale),
        "lambda_gb_seconds_per_hour": round(gb_s, 1),
        "usd_per_hour": round(aws_cost + edge_cost + gb_s * LAMBDA_ARM_PER_GB_S, 5),
    }


def run_benchmark(
    path: str, messages: int, size: int, batch: int, consumers: int, idle_seconds: float = 30.0
) -> dict:
    """Start a stack, run one path, return the report (see Measurement.report)."""
    import magnetar as pulsar
    from magnetar_core.storage.aws import REQUESTS

    from .stack import LocalStack

    with LocalStack().start() as stack:
        meter = _CallMeter(stack.gateway)
        client = pulsar.Client(stack.url)
        topic = f"persistent://public/default/perf-{uuid.uuid4().hex[:8]}"
        if path == "consume":
            _produce(client, topic, messages, size, batch)
        before, (calls0, secs0) = REQUESTS.snapshot(), meter.snapshot()
        start = time.perf_counter()
        if path == "produce":
            _produce(client, topic, messages, size, batch)
        elif path == "idle":
            _idle(client, pulsar, topic, idle_seconds)
        else:
            _consume(client, pulsar, topic, messages, consumers)
        elapsed = time.perf_counter() - start
        calls1, secs1 = meter.snapshot()
        aws = REQUESTS.snapshot() - before
        client.close()
    if path == "idle":
        return idle_report(elapsed, aws, calls1 - calls0, secs1 - secs0)
    result = Measurement(path, messages, elapsed, aws, calls1 - calls0, secs1 - secs0).report()
    result.update(
        {
            "payload_bytes": size,
            "batch_size": batch,
            "consumers": consumers if path == "consume" else 0,
        }
    )
    return result


def main(argv: list[str] | None = None) -> int:
    """CLI entry: ``magnetar perf produce|consume [-n N] [--size B] [--batch K] [--consumers C]``."""
    parser = argparse.ArgumentParser(prog="magnetar perf", description=__doc__.splitlines()[0])
    parser.add_argument("path", choices=["produce", "consume", "idle"])
    parser.add_argument("-n", "--messages", type=int, default=10_000)
    parser.add_argument("--size", type=int, default=100, help="payload bytes")
    parser.add_argument(
        "--batch", type=int, default=100, help="messages per batch (1: batching off)"
    )
    parser.add_argument("--consumers", type=int, default=1, help="Shared consumers (consume path)")
    parser.add_argument("--seconds", type=float, default=30.0, help="idle path: how long to wait")
    args = parser.parse_args(argv)
    with contextlib.redirect_stdout(sys.stderr):  # handler logs must not mix with the report
        report = run_benchmark(
            args.path, args.messages, args.size, args.batch, args.consumers, args.seconds
        )
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
