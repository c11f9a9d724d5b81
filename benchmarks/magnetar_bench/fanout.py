"""``magnetar perf fanout``: a topic with N subscriptions on Magnetar against SNS + SQS
fan-out (one SNS topic, one SQS queue per subscription), per million messages published.

Magnetar's side is measured: the rows of ``magnetar perf cost --subscriptions 1,2,5 --json``
(``--from-cost FILE``; every subscription's consumer receives and acknowledges each
message), so the cost of one more subscription is the difference between rows. SNS + SQS is
priced from its list prices (shared/PRICES.md):

* one SNS publish per ``batch`` messages (PublishBatch takes 10), billed per started 64 KB
  of the request's payload;
* SNS's delivery to an SQS queue is free, and the queue's enqueue is SNS's own send, not
  billed to the subscriber (``enqueue_billed``: price it as an SQS request anyway, the upper
  bound);
* per queue, one ReceiveMessage and one DeleteMessage(Batch) per ``batch`` messages (10 at
  most), the receive billed per started 64 KB of what it returns;
* empty long-poll receives (20 s waits) only while a queue is idle: $0.05 a month per
  consumer, beside Magnetar's idle consumer ($0.036 a month, docs/benchmarks.md), not in the
  per-million figures.

Not a test: a calculation on measured rows whose output goes to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from magnetar_bench.anchors import SNS_PUBLISH_PER_MILLION, SQS_PER_MILLION_REQUESTS

CHUNK_BYTES = 64 * 1024
SQS_BATCH = 10
WORKLOAD_SHAPES = {  # perf cost's workloads: (message bytes, messages per request)
    "unbatched": (100, 1),
    "pipelined": (100, 1),
    "batched": (1024, SQS_BATCH),
    "batched-large": (1024, SQS_BATCH),
}


def chunks(size_bytes: int, batch: int = 1) -> int:
    """64 KB chunks billed for a request carrying ``batch`` messages of ``size_bytes``."""
    return max(1, math.ceil(size_bytes * batch / CHUNK_BYTES))


def sns_sqs_fanout_usd(subscriptions: int, size_bytes: int = 100, batch: int = 1,
                       enqueue_billed: bool = False) -> float:  # fmt: skip
    """Dollars per million messages published to an SNS topic and received + deleted from
    each of ``subscriptions`` SQS queues, ``batch`` messages per request (at most 10)."""
    if subscriptions < 1 or size_bytes < 1 or batch < 1:
        raise ValueError("subscriptions, size_bytes and batch: at least 1")
    batch = min(batch, SQS_BATCH)
    requests = 1e6 / batch
    publish = requests * chunks(size_bytes, batch) * SNS_PUBLISH_PER_MILLION / 1e6
    per_queue = requests * (chunks(size_bytes, batch) + 1)  # receive + delete
    if enqueue_billed:
        per_queue += 1e6 * chunks(size_bytes)  # SNS delivers each message on its own
    return publish + subscriptions * per_queue * SQS_PER_MILLION_REQUESTS / 1e6


def magnetar_by_subscriptions(rows: list[dict], workload: str) -> dict[int, dict[str, float]]:
    """Dollars per million published messages by subscription count, by service, from
    ``perf cost --json`` rows of ``workload`` (the first row of each count)."""
    found: dict[int, dict[str, float]] = {}
    for row in rows:
        if row.get("workload") == workload:
            found.setdefault(row.get("subscriptions", 1), row["usd"])
    if not found:
        raise LookupError(f"no {workload!r} rows in the report")
    return found


def per_subscription(by_count: dict[int, dict[str, float]], key: str = "total") -> float | None:
    """What one more subscription costs: the slope between the fewest and the most
    subscriptions measured (None with one count only)."""
    low, high = min(by_count), max(by_count)
    if low == high:
        return None
    return (by_count[high][key] - by_count[low][key]) / (high - low)


def table(rows: list[dict], workloads: list[str]) -> str:
    """Magnetar (measured) against SNS + SQS per subscription count, as Markdown."""
    head = ["workload", "subscriptions", "Magnetar $/M", "of which Lambda duration",
            "Magnetar without Lambda duration", "SNS + SQS $/M", "SNS + SQS, enqueue billed",
            "SQS alone (producer sends to each queue)"]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for workload in workloads:
        size, batch = WORKLOAD_SHAPES[workload]
        by_count = magnetar_by_subscriptions(rows, workload)
        for count, usd in sorted(by_count.items()):
            duration = usd.get("lambda_duration", 0.0)
            cells = [workload, str(count), f"{usd['total']:.2f}", f"{duration:.2f}",
                     f"{usd['total'] - duration:.2f}",
                     f"{sns_sqs_fanout_usd(count, size, batch):.2f}",
                     f"{sns_sqs_fanout_usd(count, size, batch, enqueue_billed=True):.2f}",
                     f"{count * (2 + 1) * SQS_PER_MILLION_REQUESTS / batch:.2f}"]  # fmt: skip
            lines.append("| " + " | ".join(cells) + " |")
        extra, extra_dynamo = per_subscription(by_count), None
        if extra is not None:
            extra_dynamo = sum(per_subscription(by_count, k) or 0.0
                               for k in ("dynamodb_writes", "dynamodb_reads"))  # fmt: skip
            sns_extra = sns_sqs_fanout_usd(2, size, batch) - sns_sqs_fanout_usd(1, size, batch)
            lines.append(f"| {workload}: one more subscription | +1 | +{extra:.2f} "
                         f"(DynamoDB +{extra_dynamo:.2f}) | | | +{sns_extra:.2f} | | |")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """CLI entry: ``magnetar perf fanout --from-cost FILE [--workloads unbatched,...]``."""
    parser = argparse.ArgumentParser(prog="magnetar perf fanout", description=__doc__.splitlines()[0])  # fmt: skip
    parser.add_argument("--from-cost", type=Path, required=True,
                        help="a `perf cost --subscriptions 1,2,5 --json` report")  # fmt: skip
    parser.add_argument("--workloads", default="unbatched",
                        help=f"comma-separated, of {', '.join(WORKLOAD_SHAPES)}")  # fmt: skip
    args = parser.parse_args(argv)
    workloads = [w for w in args.workloads.split(",") if w]
    unknown = [w for w in workloads if w not in WORKLOAD_SHAPES]
    if unknown or not workloads:
        parser.error(f"--workloads: unknown workload {unknown[0] if unknown else '(none)'}")
    try:
        print(table(json.loads(args.from_cost.read_text()), workloads))
    except (OSError, ValueError, LookupError, KeyError) as error:
        parser.error(f"--from-cost: {error}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
