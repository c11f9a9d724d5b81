"""``magnetar chaos run|soak``: fault injection and soak runs on the embedded stack.

    magnetar chaos run [--messages 10000] [--seed 1] [--faults throttle,5xx,timeout,die]
                       [--rate 0.05] [--partitions 4] [--producers 4] [--consumers 2]
                       [--nack-rate 0.05] [--deadline-s 1800] [--service-url URL]
    magnetar chaos soak --minutes N [--rate 0.02] [--restart-every-s 120] ...

Without ``--service-url`` it starts its own local stack (moto + gateway + real handlers),
injects faults at the engine's AWS calls and watches the gateway's answers; with one it
runs the workload against that service (no injection: the service is not ours) and checks
the invariants the client can see. Prints the JSON report; exits 1 when an invariant was
violated or the run did not finish, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from magnetar_chaos.faults import KINDS, FaultPlan


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="magnetar chaos", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    for mode in ("run", "soak"):
        p = sub.add_parser(mode, help=f"a {mode} (see docs/reliability.md)")
        p.add_argument("--seed", type=int, default=1, help="seed of faults and nacks")
        p.add_argument("--faults", default=",".join(KINDS),
                       help="fault kinds, comma-separated, or none (default: all)")  # fmt: skip
        p.add_argument("--rate", type=float, default=0.05 if mode == "run" else 0.02,
                       help="probability that one AWS request attempt fails")  # fmt: skip
        p.add_argument("--partitions", type=int, default=4)
        p.add_argument("--producers", type=int, default=4)
        p.add_argument("--consumers", type=int, default=2, help="per subscription")
        p.add_argument("--nack-rate", type=float, default=0.05)
        p.add_argument("--service-url", help="run against this service (no injection)")
        p.add_argument("--quiet", action="store_true", help="print only the summary line")
        p.add_argument("--report", help="also write the JSON report to this file")
    run, soak = sub.choices["run"], sub.choices["soak"]
    run.add_argument("--messages", type=int, default=10_000)
    run.add_argument("--deadline-s", type=float, default=1800.0)
    soak.add_argument("--minutes", type=float, required=True)
    soak.add_argument("--restart-every-s", type=float, default=120.0,
                      help="restart the local service this often (0: never)")  # fmt: skip
    soak.add_argument("--churn-every-s", type=float, default=20.0,
                      help="a consumer leaves and another joins this often")  # fmt: skip
    soak.add_argument("--messages-per-round", type=int, default=2000)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry of ``magnetar chaos``; returns the exit status."""
    args = build_parser().parse_args(list(argv) if argv is not None else None)
    try:
        plan = FaultPlan.parse(args.faults, args.rate, args.seed)
    except ValueError as error:
        print(f"magnetar chaos: {error}", file=sys.stderr)
        return 2
    from magnetar_chaos.session import session

    with session(plan, args.service_url) as (client, stack, injector, observer):
        if args.mode == "run":
            from magnetar_chaos.run import chaos_run
            from magnetar_chaos.workload import Workload

            workload = Workload(messages=args.messages, partitions=args.partitions,
                                producers=args.producers, consumers_per_subscription=args.consumers,
                                nack_rate=args.nack_rate, seed=args.seed)  # fmt: skip
            report = chaos_run(client, workload, injector=injector, observer=observer,
                               deadline_s=args.deadline_s)  # fmt: skip
        else:
            from magnetar_chaos.soak import soak

            report = soak(client, stack, args, injector=injector, observer=observer)
    if args.report:
        with open(args.report, "w", encoding="utf-8") as out:
            json.dump(report, out, indent=1, default=str)
    _print(report, args.quiet)
    return 0 if report["ok"] else 1


def _print(report: dict[str, Any], quiet: bool) -> None:
    if not quiet:
        print(json.dumps(report, indent=1, sort_keys=False, default=str))
    failed = [name for name, r in report.get("invariants", {}).items() if not r["ok"]]
    print(f"chaos: {'OK' if report['ok'] else 'FAILED'}"
          + (f" (violated: {', '.join(failed)})" if failed else "")
          + (" (did not finish in time)" if report.get("timed_out") else ""))  # fmt: skip
