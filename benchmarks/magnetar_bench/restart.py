"""``magnetar perf restart``: how long the embedded stack takes to come back with a full
data directory.

Starts a durable LocalStack on a fresh data directory, creates a subscription, produces
``-n`` messages with the SDK (not batched: one entry each, the most records per message),
stops the stack (its journal is then what a SIGKILL leaves: nothing is written on stop),
starts it again on the same directory and reports the time until it is healthy, the
emulator's own restore time (snapshot + journal replay), what the directory holds, and the
subscription's backlog after the restart (every message must still be there).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from magnetar_bench.machine import machine_report
from magnetar_local.journal import DataDir
from magnetar_local.stack import LocalStack

TOPIC = "persistent://public/default/restart"
SUB = "backlog"
_RESTORED = re.compile(r"restored .*: (\d+) journal records in ([0-9.]+) s")


def _produce(url: str, messages: int) -> float:
    import magnetar as pulsar

    client = pulsar.Client(url, operation_timeout_seconds=60)
    try:
        client.subscribe(TOPIC, SUB).close()
        producer = client.create_producer(
            TOPIC, batching_enabled=False, block_if_queue_full=True, max_pending_messages=500
        )
        began = time.monotonic()
        for n in range(messages):
            producer.send_async(b"m-%d" % n, None)
        producer.flush()
        return time.monotonic() - began
    finally:
        client.close()


def _backlog(stack: LocalStack) -> int:
    import urllib.request

    path = "/admin/v2/persistent/public/default/restart/stats"
    with urllib.request.urlopen(stack.url + path, timeout=60) as response:
        return int(json.loads(response.read())["subscriptions"][SUB]["msgBacklog"])


def _restored(stack: LocalStack) -> tuple[int, float] | None:
    log = stack.emulator.log_path if stack.emulator is not None else None
    found = _RESTORED.search(log.read_text()) if log is not None else None
    return (int(found.group(1)), float(found.group(2))) if found else None


def run(messages: int, data_dir: Path) -> dict[str, Any]:
    stack = LocalStack(data_dir=data_dir).start()
    try:
        produce_s = _produce(stack.url, messages)
    finally:
        stack.stop()
    data = DataDir(data_dir)
    held = {
        "bytes": sum(p.stat().st_size for p in data_dir.iterdir()),
        "snapshots": data.snapshots(),
        "segments": data.segments(),
    }
    began = time.monotonic()
    stack = LocalStack(data_dir=data_dir).start()
    try:
        healthy_s = time.monotonic() - began
        restored = _restored(stack)
        backlog = _backlog(stack)
    finally:
        stack.stop()
    return {
        "messages": messages,
        "produce_s": round(produce_s, 1),
        "data_dir": held,
        "restart_healthy_s": round(healthy_s, 2),
        "emulator_restore": {"journal_records": restored[0], "seconds": restored[1]}
        if restored
        else None,
        "backlog_after_restart": backlog,
        "machine": machine_report(),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="magnetar perf restart", description=__doc__)
    parser.add_argument("-n", "--messages", type=int, default=100_000)
    parser.add_argument("--data-dir", type=Path, help="default: a fresh temporary directory")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="magnetar-restart-") as scratch:
        report = run(args.messages, args.data_dir or Path(scratch) / "data")
    json.dump(report, sys.stdout, indent=2)
    print()
    return 0 if report["backlog_after_restart"] == args.messages else 1
