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

Not a test: a measurement whose output goes to docs/benchmarks.md. Parts: ``workloads`` (what runs, and running it), ``usage`` (metering a run, its dollars),
``report`` (rows and the table).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys

from magnetar_bench.cost.report import table
from magnetar_bench.cost.workloads import FRONT_DOORS, WORKLOADS, run_cost


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
