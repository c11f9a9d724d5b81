"""``magnetar perf shares``: Shared consumers splitting batched messages on the embedded
stack.

``--consumers`` Shared consumers (receiver queues of ``--receiver-queue``) subscribe to a new
topic before one producer sends ``-n`` messages with ``send_async`` in SDK batches of at most
``--batch`` messages, then flushes; each consumer is a thread that receives and acknowledges
until every message was received. The report gives, per run, how many messages each
consumer got, its share of an equal split, and whether every message came exactly once.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import uuid
from typing import Any

from magnetar_bench.machine import machine_report
from magnetar_local.stack import LocalStack


def one_run(url: str, consumers: int, messages: int, batch: int, queue: int) -> dict[str, Any]:
    """One topic: subscribe, produce, drain; each consumer's count and share."""
    import magnetar as pulsar

    topic = f"persistent://public/default/shares-{uuid.uuid4().hex[:8]}"
    client = pulsar.Client(url)
    try:
        subscribed = [client.subscribe(topic, "work", consumer_type=pulsar.ConsumerType.Shared,
                                       receiver_queue_size=queue) for _ in range(consumers)]  # fmt: skip
        producer = client.create_producer(topic, batching_enabled=True, batching_max_messages=batch)
        sent = [b"m%06d" % i for i in range(messages)]
        started = time.monotonic()
        for payload in sent:
            producer.send_async(payload, lambda res, mid: None)
        producer.flush()
        got: list[list[bytes]] = [[] for _ in subscribed]
        lock, total = threading.Lock(), [0]

        def drain(i: int) -> None:
            while True:
                with lock:
                    if total[0] >= messages or time.monotonic() - started > 300:
                        return
                try:
                    msg = subscribed[i].receive(2000)
                except pulsar.Timeout:
                    continue
                subscribed[i].acknowledge(msg)
                with lock:
                    got[i].append(msg.data())
                    total[0] += 1

        threads = [threading.Thread(target=drain, args=(i,)) for i in range(consumers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        seconds = time.monotonic() - started
        counts = [len(g) for g in got]
        fair = messages / consumers
        return {
            "received": counts,
            "shares": [round(n / fair, 2) for n in counts],
            "every_consumer_got_some": all(counts),
            "exactly_once": sorted(p for g in got for p in g) == sent,
            "seconds": round(seconds, 1),
        }
    finally:
        client.close()


def main(argv: list[str] | None = None) -> int:
    """CLI entry: ``magnetar perf shares [--runs R] [--consumers C] [-n N] [--batch B]``."""
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(
        prog="magnetar perf shares", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--runs", type=int, default=3, help="topics, one after another")
    parser.add_argument("--consumers", type=int, default=3, help="Shared consumers")
    parser.add_argument("-n", type=int, default=1000, help="messages per run")
    parser.add_argument("--batch", type=int, default=50, help="batching_max_messages")
    parser.add_argument("--receiver-queue", type=int, default=50, help="receiver_queue_size")
    args = parser.parse_args(argv)
    if min(args.runs, args.consumers, args.n, args.batch, args.receiver_queue) < 1:
        parser.error("every count must be positive")
    machine = machine_report()
    stack = LocalStack().start()
    try:
        runs = [one_run(stack.url, args.consumers, args.n, args.batch, args.receiver_queue)
                for _ in range(args.runs)]  # fmt: skip
    finally:
        stack.stop()
    report = {"path": "shares", "consumers": args.consumers, "messages": args.n,
              "batch": args.batch, "receiver_queue": args.receiver_queue, "runs": runs,
              "machine": machine}  # fmt: skip
    print(json.dumps(report, indent=2))
    return 0 if all(r["exactly_once"] for r in runs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
