"""``magnetar perf produce|consume|idle``: throughput and AWS requests per message on the embedded stack.

The stack runs in this process, so every AWS request the handlers make is counted (botocore
``before-call`` events, ``magnetar_core.adapters.aws.clients.REQUESTS``). Costs use the list prices in
``shared/PRICES.md`` (us-east-1). Not a test: a measurement tool whose output goes to
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import sys
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass

from magnetar_bench.costs import Measurement
from magnetar_bench.machine import machine_report
from magnetar_bench.meter import CallMeter


@dataclass(frozen=True)
class PerfOptions:
    """One benchmark run: sizes in bytes, times in seconds."""

    path: str
    messages: int = 10_000
    size: int = 100
    batch: int = 100
    consumers: int = 1
    idle_seconds: float = 30.0
    compression: str = "NONE"
    payload: str = "bytes"
    chunked: bool = False
    subscription_type: str = "Shared"
    keys: int = 0
    channel: bool = True
    keepalive_seconds: float = 10.0
    producers: int = 1


def _payloads(options: PerfOptions) -> list[bytes]:
    """``bytes``: one repeated filler payload; ``json``: distinct JSON-like records of about
    ``size`` bytes (deterministic), which compress like real event data."""
    if options.payload == "bytes":
        return [b"x" * options.size]
    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "delta", "order", "user", "click", "view", "cart", "paid"]
    records = []
    for i in range(min(options.messages, 1000)):
        record = {
            "id": i,
            "user": f"user-{rng.randrange(10_000)}",
            "event": rng.choice(words),
            "ts": 1_763_700_000_000 + i * 37,
            "amount": round(rng.uniform(1, 500), 2),
            "tags": rng.sample(words, 3),
            "note": "",
        }
        text = json.dumps(record)
        note = ""
        while len(text) < options.size:
            note += " " + " ".join(rng.choice(words) for _ in range(8))
            record["note"] = note
            text = json.dumps(record)
        records.append(text[: max(options.size, 2)].encode())
    return records


def _produce(client, pulsar, topic: str, options: PerfOptions) -> None:
    """Send ``options.messages`` split over ``options.producers`` producers, each on its own
    thread sending asynchronously (its requests pipelined), and wait for every callback."""
    share, extra = divmod(options.messages, options.producers)
    counts = [share + (k < extra) for k in range(options.producers)]
    errors: list[BaseException] = []

    def run(count: int) -> None:
        try:
            _produce_some(client, pulsar, topic, options, count)
        except BaseException as e:  # re-raised below: a failed producer fails the run
            errors.append(e)

    threads = [threading.Thread(target=run, args=(n,)) for n in counts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


def _produce_some(client, pulsar, topic: str, options: PerfOptions, count: int) -> None:
    batch = options.batch if not options.chunked else 1
    producer = client.create_producer(
        topic,
        batching_enabled=batch > 1,
        batching_max_messages=max(batch, 1),
        batching_max_publish_delay_ms=10,
        block_if_queue_full=True,
        max_pending_messages=max(batch * 4, 100),
        compression_type=getattr(pulsar.CompressionType, options.compression),
        chunking_enabled=options.chunked,
    )
    payloads = _payloads(options)
    done = threading.Semaphore(0)
    for i in range(count):
        key = f"key-{i % options.keys}" if options.keys else None
        producer.send_async(
            payloads[i % len(payloads)], lambda _res, _mid: done.release(), partition_key=key
        )
    producer.flush()
    for _ in range(count):
        done.acquire()
    producer.close()


def _stored_bytes(stack, topic: str) -> int:
    """Bytes of entry objects under the topic's prefix (listed outside the measurement)."""
    s3 = stack.client("s3")
    prefix = "entries/" + topic.replace("://", "/") + "/"
    total = 0
    for page in s3.get_paginator("list_objects_v2").paginate(
        Bucket=stack.name("EntriesBucket"), Prefix=prefix
    ):
        total += sum(obj["Size"] for obj in page.get("Contents", []))
    return total


def _consume(client, pulsar, topic: str, count: int, consumers: int, sub_type: str) -> None:
    received: Counter[str] = Counter()
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
            consumer_type=getattr(pulsar.ConsumerType, sub_type),
            initial_position=pulsar.InitialPosition.Earliest,
            message_listener=listener,
        )
        for _ in range(consumers)
    ]
    if not finished.wait(timeout=600):
        raise RuntimeError(f"only {received['n']} of {count} messages arrived within 600 s")
    for consumer in subs:
        consumer.close()


def run_benchmark(options: PerfOptions) -> dict:
    """Start a stack, run one path, return the report (see Measurement.report; the idle
    path: ``magnetar_bench.idle``)."""
    if options.path == "idle":
        from magnetar_bench.idle import run_idle

        return run_idle(options.idle_seconds, options.channel, options.keepalive_seconds)
    import magnetar as pulsar
    from magnetar_core.adapters.aws.clients import REQUESTS
    from magnetar_local.stack import LocalStack

    with LocalStack().start() as stack:
        meter = CallMeter(stack.gateway)
        client = pulsar.Client(stack.url)
        topic = f"persistent://public/default/perf-{uuid.uuid4().hex[:8]}"
        if options.path == "consume":
            _produce(client, pulsar, topic, options)
        before, (calls0, secs0), uploads0 = REQUESTS.snapshot(), meter.snapshot(), meter.uploads
        start = time.perf_counter()
        if options.path == "produce":
            _produce(client, pulsar, topic, options)
        else:
            _consume(
                client,
                pulsar,
                topic,
                options.messages,
                options.consumers,
                options.subscription_type,
            )
        elapsed = time.perf_counter() - start
        calls1, secs1 = meter.snapshot()
        aws = REQUESTS.snapshot() - before
        if meter.uploads > uploads0:
            aws["s3.PutObject"] += meter.uploads - uploads0  # the clients' presigned PUTs
        stored = _stored_bytes(stack, topic)
        client.close()
    result = Measurement(
        options.path, options.messages, elapsed, aws, calls1 - calls0, secs1 - secs0
    ).report()
    result.update(
        {
            "payload_bytes": options.size,
            "payload_kind": options.payload,
            "batch_size": options.batch if not options.chunked else 1,
            "compression": options.compression,
            "chunked": options.chunked,
            "consumers": options.consumers if options.path == "consume" else 0,
            "subscription_type": options.subscription_type if options.path == "consume" else None,
            "keys": options.keys,
            "producers": options.producers if options.path != "idle" else 0,
            "megabytes_per_second": round(options.messages * options.size / elapsed / 1e6, 2),
            "stored_bytes_per_message": round(stored / options.messages, 1),
        }
    )
    return result


def main(argv: list[str] | None = None) -> int:
    """CLI entry: ``magnetar perf produce|consume|idle [-n N] [--size B] [--batch K]
    [--consumers C] [--producers P]``."""
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="magnetar perf", description=__doc__.splitlines()[0])
    parser.add_argument("path", choices=["produce", "consume", "idle"])
    parser.add_argument("-n", "--messages", type=int, default=10_000)
    parser.add_argument("--size", type=int, default=100, help="payload bytes")
    parser.add_argument(
        "--batch", type=int, default=100, help="messages per batch (1: batching off)"
    )
    parser.add_argument("--consumers", type=int, default=1, help="Shared consumers (consume path)")
    parser.add_argument("--seconds", type=float, default=30.0, help="idle path: how long to wait")
    parser.add_argument(
        "--compression", default="NONE", choices=["NONE", "LZ4", "ZLib", "ZSTD", "SNAPPY"]
    )
    parser.add_argument(
        "--payload",
        default="bytes",
        choices=["bytes", "json"],
        help="bytes: filler; json: distinct JSON-like records of --size bytes",
    )
    parser.add_argument("--chunked", action="store_true", help="chunking on (batching off)")
    parser.add_argument(
        "--type",
        default="Shared",
        choices=["Shared", "KeyShared", "Failover", "Exclusive"],
        help="consume path: subscription type",
    )
    parser.add_argument("--keys", type=int, default=0, help="distinct message keys (0: keyless)")
    parser.add_argument("--no-channel", action="store_true",
                        help="idle path: long-poll without the notification channel")  # fmt: skip
    parser.add_argument("--keepalive-seconds", type=float, default=10.0,
                        help="idle path: the keepalive measured (scaled to the SDK's 9 min)")  # fmt: skip
    parser.add_argument(
        "--producers", type=int, default=1, help="producers, each on its own thread (produce)"
    )
    args = parser.parse_args(argv)
    options = PerfOptions(
        args.path,
        args.messages,
        args.size,
        args.batch,
        args.consumers,
        args.seconds,
        args.compression,
        args.payload,
        args.chunked,
        args.type,
        args.keys,
        not args.no_channel,
        args.keepalive_seconds,
        max(args.producers, 1),
    )
    machine = machine_report()  # before the run: the load it starts under
    with contextlib.redirect_stdout(sys.stderr):  # handler logs must not mix with the report
        report = run_benchmark(options)
    print(json.dumps({**report, "machine": machine}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
