"""``magnetar perf restart``: how long the embedded stack takes to come back with a full
data directory.

1. A durable LocalStack on a fresh data directory; the SDK creates a subscription and
   produces ``--sdk`` messages (not batched: one entry each, the most records per message).
2. The rest of the ``-n`` messages are appended to the topic's ledger as its commits do
   (``_append_directly``: sequencer blocks, one conditional put per entry, items built by the
   engine's ``IndexEntry``), on moto in-process restored from the directory and journaling
   into it with the emulator's own wrappers (``durable.Recorder``; a snapshot every
   ``SNAPSHOT_EVERY`` records, as the emulator's thread takes them): the same items, journal
   records and snapshots as commits through the HTTP API, without the engine's reads and the
   two HTTP hops per message (through the SDK a loaded 2-CPU machine stored about 20
   messages a second, and timed-out sends left holes).
3. The stack is started again on the directory: the report gives the time until it is
   healthy, the emulator's own restore time (snapshot + journal replay), what the directory
   held, and the ledger's entries after the restart (the exit status is 1 unless ``-n``).
   ``--again --data-dir DIR`` repeats only this step on a directory filled before.

Stopping the stack writes nothing (no snapshot on stop), so the directory is what a SIGKILL
would have left.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from magnetar_bench.machine import machine_report
from magnetar_local.durable import SNAPSHOT_EVERY, Recorder
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


def _log_key(stack: LocalStack) -> str:
    """The topic's log key (``topic|ledger``), from its metadata: ledger ids are clock-based
    (epoch ms x 1000 + a counter), so only the topics table knows the one it got."""
    from magnetar_core.engine import Engine
    from magnetar_core.settings import Settings
    from magnetar_wire.names import TopicName

    engine = Engine.build(Settings.from_env(stack.environment))
    return engine.topics.resolve(TopicName.parse(TOPIC), create=False).key


def _entries(stack: LocalStack) -> int:
    """The ledger's index items that hold messages, counted on the emulator (the admin
    stats' backlog walks the whole ledger through the engine: over a minute on moto at
    100,000 entries on a loaded machine)."""
    from botocore.config import Config

    dynamodb = stack.client(
        "dynamodb", config=Config(read_timeout=600, retries={"max_attempts": 1})
    )
    pages = dynamodb.get_paginator("query").paginate(
        TableName=stack.name("LogTable"),
        KeyConditionExpression="pk = :pk",
        FilterExpression="attribute_not_exists(hole)",
        ExpressionAttributeValues={":pk": {"S": _log_key(stack)}},
        Select="COUNT",
    )
    return sum(page["Count"] for page in pages)


def _restored(stack: LocalStack) -> tuple[int, float] | None:
    log = stack.emulator.log_path if stack.emulator is not None else None
    found = _RESTORED.search(log.read_text()) if log is not None else None
    return (int(found.group(1)), float(found.group(2))) if found else None


BLOCK = 16
"""Entry ids a producer takes from its ledger's sequencer at a time (as the engine does)."""


def _append_directly(data_dir: Path, env: dict[str, str], pk: str, count: int) -> float:
    """Append ``count`` one-message entries to the topic's ledger (log key ``pk``), as its
    commits do (an ``ADD nxt`` on the sequencer per ``BLOCK`` ids, a conditional put of each
    index item, built by the engine's ``IndexEntry``), straight into moto's backend in this
    process, restored from ``data_dir`` and journaled into it by the emulator's own
    wrappers; returns the seconds taken."""
    from moto import mock_aws
    from moto.backends import get_backend

    from magnetar_core.domain.log import IndexEntry
    from magnetar_wire import EntryMessage, encode_entry

    log_table, cursors_table = env["LOG_TABLE"], env["CURSORS_TABLE"]
    with mock_aws():
        recorder = Recorder(DataDir(data_dir, fsync=False), threading.RLock())
        recorder.install()
        recorder.restore()
        dynamodb = get_backend("dynamodb")["123456789012"]["us-east-1"]  # moto's default
        key = {"pk": {"S": pk}, "sub": {"S": "$seq"}}
        sequencer = dynamodb.get_item(cursors_table, key)
        if sequencer is None:
            raise RuntimeError(f"{TOPIC} has no sequencer: the SDK produced nothing")
        first = int(sequencer.attrs["nxt"].value)
        began = time.monotonic()
        for n in range(first, first + count):
            now = int(time.time() * 1000)
            if (n - first) % BLOCK == 0:
                dynamodb.update_item(
                    cursors_table,
                    key,
                    update_expression="ADD nxt :n SET #at = :at",
                    expression_attribute_names={"#at": "at"},
                    expression_attribute_values={":n": {"N": str(BLOCK)}, ":at": {"N": str(now)}},
                    attribute_updates=None,
                    expected=None,
                    condition_expression="attribute_exists(nxt)",
                )
            data = encode_entry([EntryMessage(payload=b"m-%d" % n, sequence_id=n,
                                              publish_time_ms=now)], producer_name="restart-fill")  # fmt: skip
            entry = IndexEntry(n, "", 0, len(data), 1, False, now, now, "restart-fill", n, n,
                               data=data, allocated_ms=now)  # fmt: skip
            item = entry.to_item(pk)
            dynamodb.put_item(
                log_table, item, None, "attribute_not_exists(eid)", {}, {}, False, None
            )
            if recorder.since_snapshot >= SNAPSHOT_EVERY:
                recorder.snapshot()  # as the emulator's thread does
        if recorder.journal is not None:
            recorder.journal.close()
        return time.monotonic() - began


def restart(data_dir: Path) -> dict[str, Any]:
    """Start the stack on ``data_dir``: time to healthy, the emulator's restore, entries."""
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
        counted = time.monotonic()
        entries = _entries(stack)
        counted_s = time.monotonic() - counted
    finally:
        stack.stop()
    return {
        "data_dir": held,
        "restart_healthy_s": round(healthy_s, 2),
        "emulator_restore": {"journal_records": restored[0], "seconds": restored[1]}
        if restored
        else None,
        "entries_after_restart": entries,
        "entries_counted_in_s": round(counted_s, 1),
    }


def run(messages: int, sdk_messages: int, data_dir: Path) -> dict[str, Any]:
    sdk_messages = min(sdk_messages, messages)
    stack = LocalStack(data_dir=data_dir).start()
    try:
        produce_s = _produce(stack.url, sdk_messages)
        env, pk = dict(stack.environment), _log_key(stack)
    finally:
        stack.stop()
    append_s = _append_directly(data_dir, env, pk, messages - sdk_messages)
    return {
        "messages": messages,
        "sdk_produce": {"messages": sdk_messages, "seconds": round(produce_s, 1)},
        "appended": {"messages": messages - sdk_messages, "seconds": round(append_s, 1)},
        **restart(data_dir),
        "machine": machine_report(),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="magnetar perf restart", description=__doc__)
    parser.add_argument("-n", "--messages", type=int, default=100_000)
    parser.add_argument("--sdk", type=int, default=1000, help="of them, produced with the SDK")
    parser.add_argument("--data-dir", type=Path, help="default: a fresh temporary directory")
    parser.add_argument(
        "--again", action="store_true", help="only restart on --data-dir (filled by a run before)"
    )
    args = parser.parse_args(argv)
    if args.again:
        if args.data_dir is None:
            parser.error("--again needs --data-dir")
        report = {**restart(args.data_dir), "machine": machine_report()}
    else:
        with tempfile.TemporaryDirectory(prefix="magnetar-restart-") as scratch:
            report = run(args.messages, args.sdk, args.data_dir or Path(scratch) / "data")
    json.dump(report, sys.stdout, indent=2)
    print()
    return 0 if report["entries_after_restart"] == args.messages else 1
