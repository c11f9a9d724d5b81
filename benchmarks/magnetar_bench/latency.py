"""``magnetar perf latency``: publish -> receive latency at a steady rate on the embedded stack.

One SDK producer sends ``--rate`` messages per second for ``--seconds`` (batching off, or the
SDK's default batching with ``--batch``); ``--consumers`` Shared consumers (listeners) ack
each message. Every payload carries the sender's ``perf_counter_ns`` at its ``send_async``
call (its scheduled time: a producer that falls behind is counted, not hidden), the listener
takes the clock again on arrival, both in this process. Prints p50/p90/p99/max in ms, the
rate reached and the AWS requests per message (counted as ``magnetar perf produce`` does).
``--signal poll`` runs the handlers as Lambda runs them (no commit wakes a long-poll; the
adaptive head check does), ``local`` (default) as the local stack serves them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import struct
import sys
import threading
import time
import uuid
from dataclasses import dataclass

from magnetar_bench.machine import machine_report
from magnetar_bench.meter import CallMeter
from magnetar_bench.stats import percentile

STAMP = struct.Struct(">qi")
"""Payload head: the send time (perf_counter ns) and the message's index (-1: warm-up)."""
WARM_UP_MESSAGES = 20


@dataclass(frozen=True)
class LatencyOptions:
    """One run: a rate in messages per second, a duration in seconds, sizes in bytes."""

    rate: float = 50.0
    seconds: float = 20.0
    batch: bool = False
    consumers: int = 1
    size: int = 100
    signal: str = "local"
    check_min_ms: int | None = None
    """``RECEIVE_CHECK_MIN_INTERVAL_MS`` of the handlers (None: the default, 20 ms; 100 with
    ``--signal poll``: the fixed 100 ms head check of before)."""


class Arrivals:
    """What the listeners saw: latency in ns per message index, counted to ``expected``."""

    def __init__(self, expected: int) -> None:
        self.latency_ns: dict[int, int] = {}
        self.warm = 0
        self._expected = expected
        self._lock = threading.Lock()
        self.done = threading.Event()
        self.warmed = threading.Event()

    def listener(self, consumer, msg) -> None:
        now = time.perf_counter_ns()
        sent_ns, index = STAMP.unpack_from(msg.data())
        consumer.acknowledge(msg)
        with self._lock:
            if index < 0:
                self.warm += 1
                if self.warm >= WARM_UP_MESSAGES:
                    self.warmed.set()
                return
            self.latency_ns.setdefault(index, now - sent_ns)
            if len(self.latency_ns) >= self._expected:
                self.done.set()


def percentiles_ms(latencies_ns: list[int]) -> dict[str, float]:
    """p50, p90, p99 (nearest rank) and max of ``latencies_ns``, in ms. Raises ValueError
    when there are none."""
    if not latencies_ns:
        raise ValueError("no message arrived: no latency to report")
    ranks = {"p50": 0.5, "p90": 0.9, "p99": 0.99, "max": 1.0}
    return {
        name: round(percentile(latencies_ns, fraction) / 1e6, 1) for name, fraction in ranks.items()
    }


def _send_steadily(producer, options: LatencyOptions, total: int) -> float:
    """Send ``total`` messages, the i-th at ``start + i / rate``; returns the seconds taken."""
    pause = threading.Event()  # never set: wait() is the pacing sleep
    filler = b"x" * max(options.size - STAMP.size, 0)
    start = time.perf_counter()
    for i in range(total):
        ahead = start + i / options.rate - time.perf_counter()
        if ahead > 0:
            pause.wait(ahead)
        producer.send_async(STAMP.pack(time.perf_counter_ns(), i) + filler, None)
    producer.flush()
    return time.perf_counter() - start


def run_latency(options: LatencyOptions) -> dict:
    """Start a stack, run the steady producer against the consumers, return the report."""
    import magnetar as pulsar
    from magnetar_core.adapters.aws.clients import REQUESTS
    from magnetar_local.stack import LocalStack

    total = max(1, round(options.rate * options.seconds))
    arrivals = Arrivals(total)
    if options.check_min_ms is not None:  # the template does not set it: ours stays
        os.environ["RECEIVE_CHECK_MIN_INTERVAL_MS"] = str(options.check_min_ms)
    with LocalStack(commit_signal=options.signal).start() as stack:
        meter = CallMeter(stack.gateway)
        client = pulsar.Client(stack.url)
        topic = f"persistent://public/default/latency-{uuid.uuid4().hex[:8]}"
        consumers = [
            client.subscribe(
                topic,
                "latency",
                consumer_type=pulsar.ConsumerType.Shared,
                message_listener=arrivals.listener,
            )  # fmt: skip
            for _ in range(options.consumers)
        ]
        producer = client.create_producer(
            topic,
            batching_enabled=options.batch,
            block_if_queue_full=True,
            max_pending_messages=max(1000, total),
        )
        for _ in range(WARM_UP_MESSAGES):  # containers loaded, caches filled: not counted
            producer.send(STAMP.pack(time.perf_counter_ns(), -1))
        if not arrivals.warmed.wait(timeout=120):
            raise RuntimeError("the warm-up messages did not arrive within 120 s")
        before, (calls0, _) = REQUESTS.snapshot(), meter.snapshot()
        sent_s = _send_steadily(producer, options, total)
        if not arrivals.done.wait(timeout=max(120.0, 4 * options.seconds)):
            missing = total - len(arrivals.latency_ns)
            raise RuntimeError(f"{missing} of {total} messages did not arrive")
        aws = REQUESTS.snapshot() - before
        calls = meter.snapshot()[0] - calls0
        for consumer in consumers:
            consumer.close()
        producer.close()
        client.close()
    by_op = {op: round(n / total, 3) for op, n in sorted(aws.items())}
    return {
        "path": "latency",
        "signal": options.signal,
        "check_min_interval_ms": options.check_min_ms or 20,
        "batching": "sdk default" if options.batch else "off",
        "consumers": options.consumers,
        "messages": total,
        "rate_asked": options.rate,
        "rate_sent": round(total / sent_s, 1),
        "latency_ms": percentiles_ms(list(arrivals.latency_ns.values())),
        "aws_requests_per_message": round(sum(aws.values()) / total, 3),
        "aws_requests_per_message_by_operation": by_op,
        "http_calls_per_message": round(calls / total, 3),
    }


def main(argv: list[str] | None = None) -> int:
    """CLI entry: ``magnetar perf latency [--rate R] [--seconds S] [--batch] [--consumers C]``."""
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(
        prog="magnetar perf latency", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--rate", type=float, default=50.0, help="messages per second")
    parser.add_argument("--seconds", type=float, default=20.0, help="how long to send")
    parser.add_argument(
        "--batch", action=argparse.BooleanOptionalAction, default=False,
        help="the SDK's default batching (default: off, one message per request)",
    )  # fmt: skip
    parser.add_argument("--consumers", type=int, default=1, help="Shared consumers")
    parser.add_argument("--size", type=int, default=100, help="payload bytes")
    parser.add_argument(
        "--signal", default="local", choices=["local", "poll"],
        help="local: commits wake long-polls; poll: as on Lambda (adaptive head checks)",
    )  # fmt: skip
    parser.add_argument(
        "--check-min-ms", type=int, default=None,
        help="RECEIVE_CHECK_MIN_INTERVAL_MS (100 with --signal poll: the fixed check of before)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.rate <= 0 or args.seconds <= 0 or args.consumers < 1:
        parser.error("--rate and --seconds must be positive, --consumers at least 1")
    options = LatencyOptions(
        args.rate,
        args.seconds,
        args.batch,
        args.consumers,
        args.size,
        args.signal,
        args.check_min_ms,
    )
    machine = machine_report()  # before the run: the load it starts under
    with contextlib.redirect_stdout(sys.stderr):  # handler logs must not mix with the report
        report = run_latency(options)
    print(json.dumps({**report, "machine": machine}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
