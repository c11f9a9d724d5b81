"""``magnetar perf expire-cost``: what one expire run costs, full pass against incremental,
counted on the embedded stack and extrapolated to 1 GB, 1 TB and 10 TB retained.

    magnetar perf expire-cost [--partitions 4] [--retained 2000] [--expiring 250] [--new 250]
        [--entries-per-object 100] [--message-bytes 1024]

One stack holds P partitions of ``--retained`` 1 KB entries each (members of segment
objects, as compact-segments leaves them; every one acknowledged, kept by a 7-day retention),
of which the oldest ``--expiring`` leave the retention window 15 minutes later. Runs, each
through a ``RecordingProxy`` that counts every AWS request of the driver and the executors:
a full pass and an incremental run with nothing new (``quiet``), then, after ``--new``
inline entries per partition (15 minutes of traffic) and 15 minutes, an incremental run; a
second stack with the same data measures the full pass of that moment (``traffic``).

The extrapolation prices what scales: a full pass reads every retained index item twice
(the dead-ledger Scan, eventually consistent, and the per-ledger Query) and lists every
object; an incremental run reads per partition its cursors and a few items, plus the items
it expires. Request units per item come from the measured runs; Glue time is an assumption
stated in the report. Not a test: its output goes to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
import uuid

from magnetar_bench.aws_recorder import Recorder, RecordingProxy, key_of
from magnetar_bench.capacity import item_size_bytes
from magnetar_bench.expire_model import Measured, extrapolate

DAY_MS = 86_400_000
QUARTER_MS = 900_000


def _put_index(stack, items: list[dict]) -> None:
    ddb, table = stack.client("dynamodb"), stack.name("LogTable")
    for i in range(0, len(items), 25):
        request = {table: [{"PutRequest": {"Item": it}} for it in items[i : i + 25]]}
        while request:
            request = ddb.batch_write_item(RequestItems=request).get("UnprocessedItems")


def load(stack, namespace: str, partitions: int, opts: argparse.Namespace, t0_ms: int) -> list:
    """Topics, segment objects, index items and one durable cursor per partition at head."""
    from magnetar_core.adapters.aws.cursors import CursorStore
    from magnetar_core.adapters.aws.producers import ProducerStateStore
    from magnetar_core.domain.cursor.state import SHARED, CursorState
    from magnetar_core.domain.log import IndexEntry, log_key
    from magnetar_core.domain.producers import DedupSnapshot
    from magnetar_wire import EntryMessage, encode_entry
    from magnetar_wire.names import TopicName

    s3, ddb = stack.client("s3"), stack.client("dynamodb")
    cursors = CursorStore(ddb, stack.name("CursorsTable"))
    producers = ProducerStateStore(ddb, stack.name("CursorsTable"))
    entry = encode_entry(
        [EntryMessage(b"x" * opts.message_bytes, sequence_id=0)], producer_name="perf"
    )
    keys = []
    for p in range(partitions):
        topic = TopicName.parse(f"persistent://public/{namespace}/t{p}")
        pk = log_key(str(topic), 1)
        ddb.put_item(TableName=stack.name("TopicsTable"), Item={
            "pk": {"S": topic.namespace_name}, "name": {"S": topic.local},
            "ledger": {"N": "1"}, "parts": {"N": "0"}, "state": {"S": "active"},
            "ver": {"N": "1"}, "created": {"N": "1"}})  # fmt: skip
        items = []
        per = opts.entries_per_object
        for first in range(0, opts.retained, per):
            last = min(first + per, opts.retained) - 1
            key = f"segments/persistent/public/{namespace}/t{p}/1/{first}-{last}"
            s3.put_object(Bucket=stack.name("EntriesBucket"), Key=key,
                          Body=entry * (last - first + 1))  # fmt: skip
            for eid in range(first, last + 1):
                # the oldest --expiring leave the 7-day window within the next 15 minutes
                pt = t0_ms - 7 * DAY_MS + 60_000 if eid < opts.expiring else t0_ms - 3_600_000
                e = IndexEntry(eid, key, (eid - first) * len(entry), len(entry), 1, False,
                               pt, pt, "perf", eid, eid)  # fmt: skip
                items.append(e.to_item(pk))
        _put_index(stack, items)
        state = CursorState.new("s", SHARED, -1, True)
        state.mark_delete = opts.retained - 1
        state.read_position = opts.retained
        cursors.put(pk, state)
        # steady state: earlier runs' dedup snapshot covers the retained entries, so a run
        # replays only the entries that arrived since (not the whole ledger, once)
        producers.put_snapshot(pk, DedupSnapshot(opts.retained - 1, {"perf": opts.retained - 1}))
        keys.append(pk)
    return keys


def traffic(stack, keys: list[str], opts: argparse.Namespace, t_ms: int) -> None:
    """``--new`` inline entries per partition, all acknowledged."""
    from magnetar_core.adapters.aws.cursors import CursorStore
    from magnetar_core.domain.log import IndexEntry
    from magnetar_wire import EntryMessage, encode_entry

    cursors = CursorStore(stack.client("dynamodb"), stack.name("CursorsTable"))
    data = encode_entry(
        [EntryMessage(b"y" * opts.message_bytes, sequence_id=1)], producer_name="perf"
    )
    for pk in keys:
        items = [
            IndexEntry(
                eid, "", 0, len(data), 1, False, t_ms, t_ms, "perf", eid, eid, data=data
            ).to_item(pk)  # fmt: skip
            for eid in range(opts.retained, opts.retained + opts.new)
        ]
        _put_index(stack, items)
        state = next(c for c in cursors.list(pk) if c.subscription == "s")
        state.mark_delete = opts.retained + opts.new - 1
        state.read_position = state.mark_delete + 1
        cursors.put(pk, state)


def stored_sizes(stack) -> dict:
    """``(table, key) -> bytes`` of every item of the log and cursors tables (uncounted)."""
    ddb, sizes = stack.client("dynamodb"), {}
    for logical, range_key in (("LogTable", "eid"), ("CursorsTable", "sub")):
        table = stack.name(logical)
        for page in ddb.get_paginator("scan").paginate(TableName=table):
            for item in page["Items"]:
                key = key_of({"pk": item["pk"], range_key: item[range_key]})
                sizes[(table, key)] = item_size_bytes(item)
    return sizes


def run_job(stack, proxy: RecordingProxy, now_ms: int, full: bool, sizes: dict) -> dict:
    import expire

    proxy.recorder.reset(sizes)
    argv = ["--bucket", stack.name("EntriesBucket"), "--endpoint-url", proxy.url,
            "--topics-table", stack.name("TopicsTable"), "--log-table", stack.name("LogTable"),
            "--cursors-table", stack.name("CursorsTable"), "--region", stack.region,
            "--now-ms", str(now_ms), "--full-pass", "true" if full else "false",
            "--consumer-lease-ms", str(DAY_MS), "--grace-ms", "0"]  # fmt: skip
    started = time.perf_counter()
    summary = expire.main(argv)
    return {
        "seconds": round(time.perf_counter() - started, 1),
        "entries_deleted": summary.entries_deleted,
        "index_items_read": summary.details.get("index_items_read", 0),
        **proxy.recorder.snapshot(),
    }


def measure(opts: argparse.Namespace) -> dict:
    from magnetar_local.stack import LocalStack

    t0 = 1_780_000_000_000
    out: dict = {}
    for phase in ("incremental", "full"):
        with (
            LocalStack().start() as stack,
            RecordingProxy(stack.aws_endpoint_url, Recorder()) as proxy,
        ):
            namespace = f"cost{uuid.uuid4().hex[:6]}"
            stack.create_namespaces(f"public/{namespace}")
            stack_engine(stack).namespaces.set_retention(
                "public", namespace, {"retentionTimeInMinutes": 7 * 1440, "retentionSizeInMB": -1}
            )
            keys = load(stack, namespace, opts.partitions, opts, t0)
            log = [v for (t, _), v in stored_sizes(stack).items() if t == stack.name("LogTable")]
            out["item_bytes"] = sum(log) / max(1, len(log))
            if phase == "incremental":
                out["quiet_full"] = run_job(stack, proxy, t0, True, stored_sizes(stack))
                out["quiet_incremental"] = run_job(stack, proxy, t0, False, stored_sizes(stack))
            traffic(stack, keys, opts, t0 + QUARTER_MS - 60_000)
            out[f"traffic_{phase}"] = run_job(
                stack, proxy, t0 + QUARTER_MS, phase == "full", stored_sizes(stack)
            )
    return out


def stack_engine(stack):
    from magnetar_core.engine import Engine
    from magnetar_core.settings import Settings

    return Engine.build(Settings.from_env(stack.environment))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="magnetar perf expire-cost",
                                     description=__doc__.splitlines()[0])  # fmt: skip
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--retained", type=int, default=2000, help="entries per partition")
    parser.add_argument("--expiring", type=int, default=250, help="of those, leaving retention")
    parser.add_argument("--new", type=int, default=250, help="new entries per partition")
    parser.add_argument("--entries-per-object", type=int, default=100)
    parser.add_argument("--message-bytes", type=int, default=1024)
    parser.add_argument("--from-json", help="re-price the runs of an earlier report (no stack)")
    opts = parser.parse_args(argv)
    if opts.from_json:
        with open(opts.from_json) as saved:
            earlier = json.load(saved)
        setup = argparse.Namespace(**earlier["setup"])
        measured = Measured.of(earlier["runs"], setup, earlier["item_bytes"])
        print(json.dumps({**earlier, "per_run": extrapolate(measured)}, indent=2))
        return 0
    from magnetar_local.launcher import DEFAULT_SCRIPTS_DIR

    scripts = str(DEFAULT_SCRIPTS_DIR)
    sys.path.insert(0, scripts)
    core = str(DEFAULT_SCRIPTS_DIR.parent / "layers/core/python")
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (scripts, core, os.environ.get("PYTHONPATH", "")) if p
    )
    with contextlib.redirect_stdout(sys.stderr):  # job progress must not mix with the report
        runs = measure(opts)
    item_bytes = runs.pop("item_bytes")
    measured = Measured.of(runs, opts, item_bytes)
    report = {
        "setup": vars(opts),
        "load_average": round(os.getloadavg()[0], 1),
        "item_bytes": round(item_bytes, 1),
        "runs": runs,
        "per_run": extrapolate(measured),
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
