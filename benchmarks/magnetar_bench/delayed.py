"""``magnetar perf delayed``: what delayed delivery costs in Step Functions, and how late it is.

Produces ``--messages`` messages with ``deliver_at`` spread evenly over ``--spread-seconds``,
starting ``--lead-seconds`` after the run starts (long enough for production to finish), to a
Shared subscription whose consumer acknowledges everything. Reports the timer executions and
state transitions the run caused (read back from the emulator's execution histories: they
must scale with due buckets, not messages), delivery lateness against each message's
``deliver_at`` (p50 / p99 / max, negative = early, allowed up to one tick by default), the AWS
requests per message and the dollars per million delayed messages at list prices
(``shared/PRICES.md``: Standard workflows bill $0.025 per 1,000 state transitions).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import threading
import time
import uuid
from dataclasses import dataclass

from magnetar_bench.costs import Measurement
from magnetar_bench.meter import CallMeter
from magnetar_bench.stats import percentile
from magnetar_bench.timer_usage import timer_usage


@dataclass(frozen=True)
class DelayedOptions:
    """One run: counts, and times in seconds."""

    messages: int = 10_000
    spread_seconds: float = 10.0
    lead_seconds: float = 45.0
    producers: int = 8


def _produce(client, topic: str, due_ms: list[int], producers: int) -> list[float]:
    """Send message ``i`` with ``deliver_at=due_ms[i]`` from ``producers`` parallel producers
    (delayed messages are never batched: one entry each); returns when each was stored
    (epoch ms). Raises RuntimeError when a send failed."""
    import magnetar as pulsar

    failures: list = []
    stored_ms = [0.0] * len(due_ms)

    def worker(k: int) -> None:
        producer = client.create_producer(
            topic, batching_enabled=False, send_timeout_millis=0, block_if_queue_full=True
        )
        done = threading.Semaphore(0)
        mine = range(k, len(due_ms), producers)

        def sent_one(i: int):
            def sent(result, _msg_id) -> None:
                stored_ms[i] = time.time() * 1000
                if result != pulsar.Result.Ok:
                    failures.append(result)
                done.release()

            return sent

        for i in mine:
            producer.send_async(str(i).encode(), sent_one(i), deliver_at=due_ms[i])
        for _ in mine:
            done.acquire()
        producer.close()

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(producers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise RuntimeError(f"{len(failures)} sends failed, e.g. {failures[0]}")
    return stored_ms


def run_delayed(options: DelayedOptions) -> dict:
    """Start a stack, run the delayed-delivery path, return the report."""
    import magnetar as pulsar
    from magnetar_core.adapters.aws.clients import REQUESTS
    from magnetar_local.stack import LocalStack

    with LocalStack().start() as stack:
        meter = CallMeter(stack.gateway)
        client = pulsar.Client(stack.url)
        topic = f"persistent://public/default/perf-delayed-{uuid.uuid4().hex[:8]}"
        arrivals: list[float] = []
        arrived_ms = [0.0] * options.messages
        lock = threading.Lock()
        finished = threading.Event()
        due_ms: list[int] = []

        def listener(consumer, msg) -> None:
            arrived = time.time() * 1000
            consumer.acknowledge(msg)
            with lock:
                arrived_ms[int(msg.data())] = arrived
                arrivals.append(arrived)
                if len(arrivals) >= options.messages:
                    finished.set()

        consumer = client.subscribe(
            topic, "perf", consumer_type=pulsar.ConsumerType.Shared, message_listener=listener
        )
        started = time.time()
        first_due = int((started + options.lead_seconds) * 1000)
        step = options.spread_seconds * 1000 / max(options.messages, 1)
        due_ms.extend(first_due + int(i * step) for i in range(options.messages))
        before, (calls0, secs0) = REQUESTS.snapshot(), meter.snapshot()
        stored_ms = _produce(client, topic, due_ms, options.producers)
        produced_after = time.time() - started
        wait_s = options.lead_seconds + options.spread_seconds + 120
        if not finished.wait(timeout=wait_s):
            raise RuntimeError(f"only {len(arrivals)} of {options.messages} delayed messages came")
        elapsed = time.time() - started
        calls1, secs1 = meter.snapshot()
        aws = REQUESTS.snapshot() - before
        consumer.close()
        client.close()
        timers = timer_usage(stack.client("stepfunctions"), stack.environment, started)
    # lateness of the messages stored before they were due (the others go out at once)
    on_time = [i for i in range(options.messages) if stored_ms[i] < due_ms[i]]
    lateness = [arrived_ms[i] - due_ms[i] for i in on_time] or [0.0]
    report = Measurement(
        "delayed", options.messages, elapsed, aws, calls1 - calls0, secs1 - secs0
    ).report()
    sfn_usd = timers.usd() * 1e6 / options.messages
    costs = report["usd_per_million_messages"]
    costs["step_functions"] = round(sfn_usd, 4)
    costs["total"] = round(costs["total"] + sfn_usd, 4)
    report.pop("messages_per_second")
    report.update(
        {
            "spread_seconds": options.spread_seconds,
            "due_buckets_spanned": int(options.spread_seconds) + 1,
            "timer_executions": timers.executions,
            "timer_express_executions": timers.express_executions,
            "timer_state_transitions": timers.transitions,
            "production_seconds": round(produced_after, 1),
            "messages_stored_before_due": len(on_time),
            "lateness_ms": {
                "p50": round(percentile(lateness, 0.50)),
                "p99": round(percentile(lateness, 0.99)),
                "max": round(max(lateness)),
                "min": round(min(lateness)),
            },
        }
    )
    return report


def main(argv: list[str] | None = None) -> int:
    """CLI entry: ``magnetar perf delayed [-n N] [--spread-seconds S] [--lead-seconds L]``."""
    parser = argparse.ArgumentParser(
        prog="magnetar perf delayed", description=__doc__.splitlines()[0]
    )
    parser.add_argument("-n", "--messages", type=int, default=10_000)
    parser.add_argument("--spread-seconds", type=float, default=10.0)
    parser.add_argument("--lead-seconds", type=float, default=45.0)
    parser.add_argument("--producers", type=int, default=8)
    args = parser.parse_args(argv)
    options = DelayedOptions(args.messages, args.spread_seconds, args.lead_seconds, args.producers)
    with contextlib.redirect_stdout(sys.stderr):  # handler logs must not mix with the report
        report = run_delayed(options)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
