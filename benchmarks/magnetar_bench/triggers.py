"""``magnetar perf triggers``: push delivery through a trigger, beside SQS -> Lambda.

For each batch size (``--batch-sizes``, default 1,10,100) a fresh topic gets a trigger whose
target is a local function (in-process, as ``magnetar local --function``); one batched
producer then sends ``--messages`` messages and the run waits until the function has seen
each. Reported per batch size:

- messages/s delivered, from the first send to the last invocation (the producer sends
  far faster than a trigger delivers, so delivery bounds it; its own time is reported);
- delivery latency p50/p99/max (ms): the handler's clock at invocation minus each record's
  ``publishTime`` (the producer's clock when it sent; one process, one clock), so it
  includes the producer's 10 ms batching delay and the produce request;
- the delivery's AWS requests: those made by the trigger driver's threads only
  (``DRIVER_THREADS``), by operation, per 1,000 messages, with the
  steps it took and their time (the fan-out Lambda's duration on AWS);
- dollars per million delivered: those requests, the target's Lambda requests (one per
  batch), the fan-out's invocations and duration (``push_costs``: one invocation per
  stream batch of up to 100 committed entries), and the produce apart;
- the SQS -> Lambda event source mapping for the same batch size and payload
  (``push_costs.sqs_esm_per_million``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import threading
import time
import urllib.request
import uuid
from collections import Counter
from dataclasses import dataclass

from magnetar_bench import push_costs
from magnetar_bench.costs import LAMBDA_PER_REQUEST, PRICE_PER_REQUEST
from magnetar_bench.stats import percentile
from magnetar_bench.trigger_meters import Seen, StepMeter, driver_requests


@dataclass(frozen=True)
class TriggerOptions:
    """One run: messages per batch size, payload bytes, the trigger's concurrency."""

    messages: int = 2_000
    batch_sizes: tuple[int, ...] = (1, 10, 100)
    size: int = 100
    concurrency: int = 1
    rate: float = 0.0
    """Messages per second the producer sends at (0: as fast as it can, a burst)."""
    timeout_s: float = 900.0


def _admin(url: str, method: str, path: str, body: object = None) -> None:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"{url}/admin/v2/{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(request, timeout=60) as response:
        response.read()


def _wait(condition, timeout_s: float, what: str) -> None:
    """Poll ``condition`` every 20 ms; raises RuntimeError naming ``what`` after the timeout."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(0.02)


def _produce(client, topic: str, messages: int, size: int, rate: float) -> None:
    """One producer, batches of up to 100 messages cut by a 10 ms publish delay; message
    ``i`` is sent ``i / rate`` seconds after the first (``rate`` 0: all at once)."""
    producer = client.create_producer(
        topic, batching_enabled=True, batching_max_messages=100,
        batching_max_publish_delay_ms=10, block_if_queue_full=True, max_pending_messages=400,
    )  # fmt: skip
    done = threading.Semaphore(0)
    start = time.monotonic()
    for i in range(messages):
        if rate > 0 and (ahead_s := start + i / rate - time.monotonic()) > 0:
            time.sleep(ahead_s)  # pacing the sends is the point, not waiting for a condition
        producer.send_async(b"x" * size, lambda _res, _mid: done.release())
    producer.flush()
    for _ in range(messages):
        done.acquire()
    producer.close()


def run_batch_size(stack, client, batch_size: int, options: TriggerOptions) -> dict:
    """One topic, one trigger of ``batch_size``: produce, wait for every delivery, report."""
    from magnetar_core.adapters.aws.clients import REQUESTS

    driver = stack.triggers
    name = f"perf-trig-{batch_size}-{uuid.uuid4().hex[:6]}"
    seen = Seen()
    stack.functions.register(name, seen.handler)
    path = f"persistent/public/default/{name}"
    _admin(stack.url, "PUT", path)
    body = {"target": {"type": "lambda", "function": name}, "batchSize": batch_size,
            "maximumConcurrency": options.concurrency, "initialPosition": "Earliest"}  # fmt: skip
    _admin(stack.url, "PUT", f"{path}/triggers/push", body)
    _wait(driver.idle, 60, "the new trigger's first step")
    steps = StepMeter()
    topic = f"persistent://public/default/{name}"
    try:
        with steps.attached(driver), driver_requests() as delivery:
            before = REQUESTS.snapshot()
            start_ms = time.time() * 1000
            _produce(client, topic, options.messages, options.size, options.rate)
            produced_s = time.time() - start_ms / 1000
            _wait(lambda: seen.count() >= options.messages, options.timeout_s, "every delivery")
            _wait(driver.idle, 60, "the driver to go idle")
            everything = REQUESTS.snapshot() - before
    finally:
        stack.functions.unregister(name)
    produce = everything - delivery
    entries = len({mid.rsplit(":", 1)[0] for mid in seen.ids})  # ledger:entry:partition
    return _report(batch_size, options, seen, steps, delivery, produce, entries,
                   (seen.last_ms - start_ms) / 1000, produced_s)  # fmt: skip


def _per_k(counts: Counter[str], messages: int) -> dict[str, float]:
    return {op: round(n * 1000 / messages, 2) for op, n in sorted(counts.items())}


def _usd(counts: Counter[str]) -> float:
    unpriced = set(counts) - set(PRICE_PER_REQUEST)
    if unpriced:
        raise ValueError(f"no price for {sorted(unpriced)}: add it to costs.PRICE_PER_REQUEST")
    return sum(PRICE_PER_REQUEST[op] * n for op, n in counts.items())


def _report(
    batch_size: int, options: TriggerOptions, seen: Seen, steps: StepMeter,
    delivery: Counter[str], produce: Counter[str], entries: int, seconds: float,
    produced_s: float,
) -> dict:  # fmt: skip
    n = options.messages
    million = 1e6 / n
    fanouts = push_costs.fanout_invocations(entries, steps.wakes, seconds)
    usd = {
        "delivery_requests": _usd(delivery) * million,
        "target_lambda_requests": seen.invocations * LAMBDA_PER_REQUEST * million,
        "fanout_lambda_requests": fanouts * LAMBDA_PER_REQUEST * million,
        "fanout_lambda_duration_arm64_256MB": push_costs.lambda_duration_usd(steps.seconds)
        * million,
    }
    return {
        "batch_size": batch_size,
        "messages": n,
        "messages_per_second": round(n / seconds, 1),
        "produce_seconds": round(produced_s, 2),
        "latency_ms": {
            "p50": round(percentile(seen.latencies_ms, 0.50)),
            "p99": round(percentile(seen.latencies_ms, 0.99)),
            "max": round(max(seen.latencies_ms)),
        },
        "target_invocations": seen.invocations,
        "duplicates": seen.duplicates,
        "entries_committed": entries,
        "driver": {
            "wakes": steps.wakes,
            "steps": steps.steps,
            "steps_without_progress": steps.idle_steps,
            "seconds": round(steps.seconds, 2),
        },  # fmt: skip
        "delivery_aws_requests_per_1000_messages": _per_k(delivery, n),
        "delivery_aws_requests_per_1000_messages_total": round(
            sum(delivery.values()) * 1000 / n, 2
        ),  # fmt: skip
        "fanout_invocations_modelled": fanouts,
        "fanout_invocations_bounds": [push_costs.fanout_invocations(entries, 0, 0), entries],
        "usd_per_million_delivered": {
            **{k: round(v, 4) for k, v in usd.items()},
            "total": round(sum(usd.values()), 4),
        },
        "produce_apart": {
            "aws_requests_per_1000_messages": _per_k(produce, n),
            "aws_requests_per_1000_messages_total": round(sum(produce.values()) * 1000 / n, 2),
            "usd_per_million_messages": round(_usd(produce) * million, 4),
        },
        "sqs_lambda_esm_per_million": push_costs.sqs_esm_per_million(batch_size, options.size),
        "sqs_lambda_esm_per_million_one_message_a_request": push_costs.sqs_esm_per_million(
            batch_size, options.size, sparse=True
        ),
    }


def run_triggers(options: TriggerOptions) -> dict:
    """Start a stack, run each batch size, return the report."""
    import magnetar as pulsar
    from magnetar_local.stack import LocalStack

    with LocalStack().start() as stack:
        client = pulsar.Client(stack.url)
        try:
            runs = [run_batch_size(stack, client, b, options) for b in options.batch_sizes]
        finally:
            client.close()
    return {
        "path": "triggers",
        "payload_bytes": options.size,
        "maximum_concurrency": options.concurrency,
        "rate_messages_per_second": options.rate or "burst",
        "runs": runs,
        "idle_usd_per_month": {
            "magnetar_trigger": 0.0,
            "sqs_lambda_esm": push_costs.sqs_esm_idle_usd_per_month(),
        },
    }


def main(argv: list[str] | None = None) -> int:
    """CLI entry: ``magnetar perf triggers [-n N] [--batch-sizes 1,10,100] [--size B]``."""
    parser = argparse.ArgumentParser(
        prog="magnetar perf triggers", description=__doc__.splitlines()[0]
    )
    parser.add_argument("-n", "--messages", type=int, default=2_000, help="per batch size")
    parser.add_argument("--batch-sizes", default="1,10,100", help="comma-separated")
    parser.add_argument("--size", type=int, default=100, help="payload bytes")
    parser.add_argument("--concurrency", type=int, default=1, help="maximumConcurrency")
    parser.add_argument("--rate", type=float, default=0.0,
                        help="messages/s the producer sends at (0: a burst)")  # fmt: skip
    parser.add_argument("--timeout-seconds", type=float, default=900.0)
    args = parser.parse_args(argv)
    sizes = tuple(int(b) for b in args.batch_sizes.split(","))
    options = TriggerOptions(args.messages, sizes, args.size, args.concurrency, args.rate,
                             args.timeout_seconds)  # fmt: skip
    with contextlib.redirect_stdout(sys.stderr):  # handler logs must not mix with the report
        report = run_triggers(options)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
