"""``magnetar perf cost``: dollars per million messages per AWS service, for each front door,
with what SQS would charge for the same messages beside it.

Each workload runs on the embedded stack (the service in this process, so every AWS request
of the handlers is seen) once per front door (``magnetar local --front-door``): one producer
and one Shared consumer whose listener acknowledges every message (the SDK groups acks),
running together. Counted: HTTP requests (API Gateway requests, or function-URL invocations:
each one Lambda request either way), handler time (Lambda duration, arm64 at 256 MB), S3
requests, DynamoDB **request units from item sizes** (``capacity``: WRU per started KB
written, RRU per started 4 KB read, halved for eventually consistent reads) and Step Functions
state transitions (timers), priced with shared/PRICES.md. Long-polls wait as on Lambda
(``COMMIT_SIGNAL=poll``: no commit wakes them, they check the head at the adaptive interval),
so their reads and handler time are AWS's. Workloads (``--workloads``):

* ``unbatched``: 100 B messages, batching off, sent one at a time (``send``): exactly one
  message per produce request;
* ``pipelined``: 100 B messages, batching off, ``send_async`` as fast as the producer goes:
  the entries queued while a request is in flight share the next request;
* ``batched``: 1 KB messages in batches of up to 100 (10 ms publish delay);
* ``batched-large``: 1 KB messages in batches of up to 1,000 messages or 1 MiB (100 ms
  publish delay), what a producer of 10k msg/s that accepts 100 ms of delay would set;
* ``delayed``: 100 B unbatched messages delivered 2 s after they are sent, one per request;
* ``idle`` (``--idle-seconds`` > 0): one consumer with nothing to receive, two rows: the
  spell as measured (``idle-spell``: subscribe, the first long-polls, going to sleep on the
  channel: what one idle spell of that length costs, not scaled) and the steady monthly
  cost of a consumer that stays idle (``idle-month``: ``perf idle``'s sleeping phase,
  keepalive cycles, connection minutes and reconnects, scaled to 30 days).

Beside each row: SQS alone (a queue per subscription, the producer sending to each) and SNS +
SQS fan-out with one queue per subscription (the anchor for a topic with several
subscriptions). ``--subscriptions 1,2,5`` runs each workload once per count, one Shared
consumer per subscription: the dollars are per million messages published, every
subscription receiving and acknowledging each.

Not a test: a measurement whose output goes to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field

from magnetar_bench.anchors import (
    SNS_SQS_USD_PER_MILLION,
    SQS_USD_PER_MILLION,
    sns_sqs_usd_per_million,
)
from magnetar_bench.capacity import CapacityMeter
from magnetar_bench.costs import (
    API_GATEWAY_PER_REQUEST,
    DYNAMODB_PER_RRU,
    DYNAMODB_PER_WRU,
    LAMBDA_ARM_PER_GB_S,
    LAMBDA_MEMORY_GB,
    LAMBDA_PER_REQUEST,
    S3_PER_REQUEST,
)
from magnetar_bench.idle import idle_month_row
from magnetar_bench.meter import CallMeter
from magnetar_bench.timer_usage import TimerUsage, timer_usage

FRONT_DOORS = ("http-api", "function-url")
SECONDS_PER_MONTH = 30 * 24 * 3600


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
    "batched-large": Workload("batched-large", 20_000, 1024, batch=1000,
                              batch_max_bytes=1024 * 1024, publish_delay_ms=100),
    "delayed": Workload("delayed", 200, 100, delay_ms=2000, one_at_a_time=True),
    "delayed-pipelined": Workload("delayed-pipelined", 2000, 100, delay_ms=2000),
}


@dataclass
class Usage:
    """What one run used: requests, handler seconds, request units, transitions."""

    http_calls: int
    handler_seconds: float
    aws: Counter
    write_units: float
    read_units: float
    timers: TimerUsage
    units_by_table: Counter = field(default_factory=Counter)

    def usd(self, front_door: str) -> dict[str, float]:
        """Dollars by AWS service (``api_gateway`` is 0 behind a function URL)."""
        s3 = sum(S3_PER_REQUEST.get(op.split(".", 1)[1], 0.0) * n for op, n in self.aws.items()
                 if op.startswith("s3."))  # fmt: skip
        return {
            "api_gateway": self.http_calls * API_GATEWAY_PER_REQUEST * (front_door == "http-api"),
            "lambda_requests": self.http_calls * LAMBDA_PER_REQUEST,
            "lambda_duration": self.handler_seconds * LAMBDA_MEMORY_GB * LAMBDA_ARM_PER_GB_S,
            "dynamodb_writes": self.write_units * DYNAMODB_PER_WRU,
            "dynamodb_reads": self.read_units * DYNAMODB_PER_RRU,
            "s3": s3,
            "step_functions": self.timers.usd(),
        }


class Meters:
    """The gateway's calls and handler time, AWS requests, DynamoDB units of one stack."""

    def __init__(self, stack) -> None:
        from magnetar_core.adapters.aws.clients import REQUESTS

        self.requests, self.stack = REQUESTS, stack
        self.calls = CallMeter(stack.gateway)
        self.capacity = CapacityMeter(stack.client("dynamodb"))
        self.capacity.install()
        stack.gateway.loader.forget()  # new containers: their clients are metered

    def mark(self) -> tuple:
        return (self.calls.snapshot(), self.requests.snapshot(), self.capacity.snapshot(),
                self.capacity.by_table(), time.time())  # fmt: skip

    def since(self, mark: tuple) -> Usage:
        (calls0, secs0), aws0, (wru0, rru0), tables0, started = mark
        (calls1, secs1), (wru1, rru1) = self.calls.snapshot(), self.capacity.snapshot()
        timers = timer_usage(self.stack.client("stepfunctions"), self.stack.environment, started)
        aws = self.requests.snapshot() - aws0
        tables = self.capacity.by_table() - tables0
        return Usage(calls1 - calls0, secs1 - secs0, aws, wru1 - wru0, rru1 - rru0, timers, tables)  # fmt: skip


def _run(client, meters: Meters, workload: Workload, timeout_s: float = 600) -> Usage:
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


def _idle(client, meters: Meters, seconds: float) -> Usage:
    """One Shared consumer waiting ``seconds`` with nothing to receive."""
    import magnetar as pulsar

    mark = meters.mark()
    topic = f"persistent://public/default/cost-idle-{uuid.uuid4().hex[:8]}"
    consumer = client.subscribe(topic, "idle", consumer_type=pulsar.ConsumerType.Shared)
    threading.Event().wait(seconds)  # the measurement *is* the idle time: nothing to await
    consumer.close()
    return meters.since(mark)


def report_of(name: str, front_door: str, usage: Usage, scale: float, per: str,
              subscriptions: int = 1) -> dict:  # fmt: skip
    """One row: dollars ``per`` (million messages published, a month, an idle spell) by
    service, with SQS (one queue per subscription, the producer sending to each) and SNS +
    SQS fan-out to ``subscriptions`` queues beside (for an idle spell: none)."""
    digits = 4 if scale > 1 else 8
    usd = {k: round(v * scale, digits) for k, v in usage.usd(front_door).items()}
    sqs, sns_sqs = SQS_USD_PER_MILLION.get(name), SNS_SQS_USD_PER_MILLION.get(name)
    if sqs is not None and subscriptions > 1:
        batch = 10 if name.startswith("batched") else 1
        sqs, sns_sqs = round(sqs * subscriptions, 4), sns_sqs_usd_per_million(subscriptions, batch)
    return {"workload": name, "front_door": front_door, "per": per, "subscriptions": subscriptions,
            "usd": {**usd, "total": round(sum(usd.values()), digits)}, "sqs_usd": sqs,
            "sns_sqs_usd": sns_sqs,
            "http_calls": round(usage.http_calls * scale), "aws_requests": {
                op: round(n * scale) for op, n in sorted(usage.aws.items())},
            "dynamodb_wru": round(usage.write_units * scale), "dynamodb_rru": round(usage.read_units * scale),
            "step_functions_transitions": round(usage.timers.transitions * scale),
            "timer_executions": {"standard": round(usage.timers.standard_executions * scale),
                                 "express": round(usage.timers.express_executions * scale)},
            "dynamodb_units_by_table": {k: round(v * scale) for k, v in sorted(usage.units_by_table.items())}}  # fmt: skip


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
                    usage = _run(client, meters, workload)
                    rows.append(report_of(workload.name, front_door, usage,
                                          1e6 / workload.messages, "million messages",
                                          workload.subscriptions))  # fmt: skip
                if idle_seconds > 0:
                    usage = _idle(client, meters, idle_seconds)
                    rows.append(report_of("idle-spell", front_door, usage, 1.0,
                                          f"idle spell of {idle_seconds:g} s"))  # fmt: skip
            finally:
                client.close()
                meters.capacity.uninstall()
    if idle_seconds > 0:
        rows.append(idle_month_row(idle_seconds))
    return rows


COLUMNS = ("api_gateway", "lambda_requests", "lambda_duration", "dynamodb_writes",
           "dynamodb_reads", "s3", "step_functions", "total")  # fmt: skip


def table(rows: list[dict]) -> str:
    """The rows as a Markdown table (dollars), SQS and SNS + SQS in the last columns."""
    head = ["workload", "subscriptions", "front door", "per", *COLUMNS, "SQS", "SNS+SQS"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def money(value: float | None) -> str:
        small = value is not None and 0 < value < 1e-4  # an idle spell's micro-dollars
        return "-" if value is None else f"{value:.1e}" if small else f"{value:.4f}"

    for row in rows:
        cells = [row["workload"], str(row.get("subscriptions", 1)), row["front_door"], row["per"],
                 *(money(row["usd"].get(c)) for c in COLUMNS),
                 money(row["sqs_usd"]), money(row["sns_sqs_usd"])]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """CLI entry: ``magnetar perf cost [--workloads ...] [--front-doors ...] [-n N] [--json]``."""
    parser = argparse.ArgumentParser(prog="magnetar perf cost", description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default="unbatched,pipelined,batched,batched-large,delayed",
                        help=f"comma-separated, of {', '.join(WORKLOADS)}")  # fmt: skip
    parser.add_argument("--front-doors", default=",".join(FRONT_DOORS))
    parser.add_argument("-n", "--messages", type=int, default=0,
                        help="messages per workload (0: each workload's default)")  # fmt: skip
    parser.add_argument("--idle-seconds", type=float, default=0.0,
                        help="also measure an idle consumer this long (0: not)")  # fmt: skip
    parser.add_argument("--subscriptions", default="1",
                        help="comma-separated subscription counts: each workload runs once per "
                             "count, one Shared consumer per subscription (e.g. 1,2,5)")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="JSON rows instead of a table")
    args = parser.parse_args(argv)
    try:
        chosen = [WORKLOADS[name] for name in args.workloads.split(",") if name]
        doors = [d for d in args.front_doors.split(",") if d]
        unknown = [d for d in doors if d not in FRONT_DOORS]
        if unknown:
            raise KeyError(unknown[0])
    except KeyError as error:
        parser.error(f"unknown workload or front door {error}")
    if args.messages:
        chosen = [dataclasses.replace(w, messages=args.messages) for w in chosen]
    try:
        counts = [int(n) for n in args.subscriptions.split(",") if n]
    except ValueError:
        counts = []
    if not counts or min(counts) < 1:
        parser.error(f"--subscriptions: positive whole numbers, got {args.subscriptions!r}")
    chosen = [dataclasses.replace(w, subscriptions=n) for w in chosen for n in counts]
    with contextlib.redirect_stdout(sys.stderr):  # handler logs must not mix with the report
        rows = run_cost(doors, chosen, args.idle_seconds)
    print(json.dumps(rows, indent=2) if args.json else table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
