"""``magnetar perf crowd``: many producers at once on one topic of the embedded stack.

Each producer is a thread with an SDK client of its own (its own connections), created
before a barrier; then each sends its messages one at a time with ``send()``. The report
says how many sends were acknowledged and how each failed one failed, how long the run took,
what the SDK's HTTP requests met on the way (answers of 429 and 503, which the SDK retries
within its send timeout, and connection errors: a reset connection is one), and what the
topic's ledger holds afterwards: entries, holes, and the highest entry id (ids above the
entries and holes were taken by commits that never wrote: readers settle them).
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
from collections.abc import Iterator
from typing import Any

from magnetar_bench.machine import machine_report
from magnetar_core.engine import Engine
from magnetar_core.settings import Settings
from magnetar_local.stack import LocalStack
from magnetar_wire.names import TopicName


@contextlib.contextmanager
def counting_http(seen: Counter[str]) -> Iterator[None]:
    """Count the SDK's HTTP requests that were answered 429 or 503 (``answered <status>``)
    or failed to connect (``connection <error>``: a reset is ``ConnectionError``), while
    inside; requests made by the stack itself go through boto3, not ``requests``."""
    import requests

    original = requests.Session.request

    def request(self: requests.Session, *args: Any, **kwargs: Any) -> requests.Response:
        try:
            response = original(self, *args, **kwargs)
        except requests.exceptions.RequestException as exc:
            seen[f"connection {type(exc).__name__}"] += 1
            raise
        if response.status_code in (429, 503):
            seen[f"answered {response.status_code}"] += 1
        return response

    requests.Session.request = request  # type: ignore[method-assign]
    try:
        yield
    finally:
        requests.Session.request = original  # type: ignore[method-assign]


def run(producers: int, each: int, send_timeout_ms: int) -> dict[str, Any]:
    import magnetar as pulsar

    stack = LocalStack().start()
    http: Counter[str] = Counter()
    try:
        topic = f"persistent://public/default/crowd-{uuid.uuid4().hex[:8]}"
        failures: Counter[str] = Counter()
        acked = [0]
        lock = threading.Lock()
        barrier = threading.Barrier(producers)

        def produce(index: int) -> None:
            client = pulsar.Client(stack.url, operation_timeout_seconds=60)
            try:
                producer = client.create_producer(
                    topic, batching_enabled=False, send_timeout_millis=send_timeout_ms
                )
                barrier.wait(300)
                for n in range(each):
                    try:
                        producer.send(b"crowd-%d-%d" % (index, n))
                        with lock:
                            acked[0] += 1
                    except pulsar.PulsarException as exc:
                        with lock:
                            failures[type(exc).__name__] += 1
                producer.close()
            except Exception as exc:  # producer creation: counted, the run goes on
                with lock:
                    failures[f"setup {type(exc).__name__}"] += each
            finally:
                client.close()

        threads = [threading.Thread(target=produce, args=(i,)) for i in range(producers)]
        started = time.monotonic()
        with counting_http(http):
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        seconds = time.monotonic() - started
        return {
            "path": "crowd",
            "producers": producers,
            "messages": producers * each,
            "acknowledged": acked[0],
            "failed": dict(failures),
            "http_retried_or_failed": dict(sorted(http.items())),
            "seconds": round(seconds, 1),
            "acknowledged_per_second": round(acked[0] / seconds, 1),
            "ledger": _ledger(stack, topic),
        }
    finally:
        stack.stop()


def _ledger(stack: LocalStack, topic: str) -> dict[str, int]:
    """Entries, holes and the highest entry id of the topic's ledger, as stored (its id from
    the topic's metadata: ledger ids are clock-based)."""
    settings = Settings.from_env(stack.environment)
    ref = Engine.build(settings).topics.resolve(TopicName.parse(topic), create=False)
    ddb = stack.session.client("dynamodb", endpoint_url=stack.aws_endpoint_url)
    kwargs: dict[str, Any] = {
        "TableName": settings.log_table,
        "KeyConditionExpression": "pk = :pk",
        "ExpressionAttributeValues": {":pk": {"S": ref.key}},
        "ProjectionExpression": "eid, hole",
    }
    items: list[dict] = []
    while True:
        page = ddb.query(**kwargs)
        items += page["Items"]
        if "LastEvaluatedKey" not in page:
            break
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    holes = sum(1 for i in items if "hole" in i)
    top = max((int(i["eid"]["N"]) for i in items), default=-1)
    return {"entries": len(items) - holes, "holes": holes, "highest_entry_id": top}


def main(argv: list[str] | None = None) -> int:
    """CLI entry: ``magnetar perf crowd [--producers N] [--each M] [--send-timeout-ms T]``."""
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(
        prog="magnetar perf crowd", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--producers", type=int, default=100, help="producers at once")
    parser.add_argument("--each", type=int, default=10, help="messages per producer")
    parser.add_argument(
        "--send-timeout-ms", type=int, default=30_000, help="the SDK's send timeout"
    )
    args = parser.parse_args(argv)
    if args.producers < 1 or args.each < 1 or args.send_timeout_ms < 1:
        parser.error("--producers, --each and --send-timeout-ms must be positive")
    machine = machine_report()
    report = run(args.producers, args.each, args.send_timeout_ms)
    print(json.dumps({**report, "machine": machine}, indent=2))
    return 0
