"""``magnetar perf provisioned``: where DynamoDB provisioned capacity with auto scaling beats
on-demand, for a few workloads (``magnetar_bench.provisioned``'s model).

The units per message and table come from a ``magnetar perf cost --json`` run
(``--from-cost FILE``: its row for ``--workload``, ``dynamodb_units_by_table`` divided by a
million); without one, from the run recorded in ``MEASURED`` (docs/benchmarks.md). Not a
test: a calculation whose output goes to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from magnetar_bench.provisioned import (
    AutoScaling,
    Comparison,
    break_even_rate,
    break_even_utilization,
    compare,
    daily,
    spiky,
    steady,
)

TABLES = ("topics", "log", "cursors", "notify")
MEASURED = {
    "log": {"write": 1.000, "read": 1.220},
    "cursors": {"write": 1.777, "read": 1.537},
    "topics": {"write": 0.003, "read": 0.047},
    "notify": {"write": 0.0, "read": 0.0},
}
"""Units per message by table of `magnetar perf cost --workloads unbatched --front-doors
function-url -n 300 --subscriptions 1` (2026-11-28 04:23 UTC: one message per produce
request, one Shared consumer acknowledging each): the log table's write is the commit, the
cursors table's are the sequencer, the receive's lease and the acks."""
WORKLOADS = {
    "steady 1 msg/s": steady(1),
    "steady 10 msg/s": steady(10),
    "steady 100 msg/s": steady(100),
    "steady 1,000 msg/s": steady(1000),
    "daily wave 100 msg/s, peak 2x": daily(100, 2.0),
    "hourly swings 100 msg/s, 1.4x for 20 min": spiky(100, 1.4, 20),
    "hourly bursts 100 msg/s, 10x for 5 min": spiky(100, 10, 5),
    "hourly bursts 100 msg/s, 50x for 1 min": spiky(100, 50, 1),
    "hourly bursts 1,000 msg/s, 10x for 5 min": spiky(1000, 10, 5),
}


def units_from_cost(rows: list[dict], workload: str, subscriptions: int = 1) -> dict[str, dict[str, float]]:  # fmt: skip
    """Units per message by table and dimension from ``perf cost --json`` rows (the first row
    of ``workload`` with ``subscriptions``); table names are matched by their suffix."""
    for row in rows:
        if row.get("workload") == workload and row.get("subscriptions", 1) == subscriptions:
            units: dict[str, dict[str, float]] = {t: {"write": 0.0, "read": 0.0} for t in TABLES}
            for key, value in row["dynamodb_units_by_table"].items():
                table, kind = key.rsplit(" ", 1)
                short = next((t for t in TABLES if table.endswith(t)), table)
                dimension = "write" if kind == "WRU" else "read"
                units.setdefault(short, {"write": 0.0, "read": 0.0})[dimension] = value / 1e6
            return units
    raise LookupError(f"no {workload!r} row with {subscriptions} subscription(s) in the report")


def row_of(name: str, rates: list[float], comparison: Comparison) -> str:
    mean, peak = sum(rates) / len(rates), max(rates)
    saving = 1 - comparison.provisioned_total / comparison.on_demand
    if comparison.throttled_minutes:
        verdict = f"on-demand (auto scaling throttles; {abs(saving):.0%} {'less' if saving > 0 else 'more'})"
    else:
        verdict = (
            f"provisioned, {saving:.0%} less" if saving > 0 else f"on-demand, {-saving:.0%} less"
        )
    cells = [name, f"{mean:,.0f}", f"{peak / mean:.1f}", f"{comparison.on_demand:,.2f}",
             f"{comparison.provisioned:,.2f} + {comparison.alarms:.2f}",
             f"{comparison.utilization['write']:.0%} / {comparison.utilization['read']:.0%}",
             str(comparison.throttled_minutes), f"{comparison.longest_wait_minutes:.1f}",
             str(comparison.decreases_per_day), f"{comparison.for_the_peak:,.2f}", verdict]  # fmt: skip
    return "| " + " | ".join(cells) + " |"


def table(units: dict[str, dict[str, float]], scaling: AutoScaling) -> str:
    head = ["workload", "mean msg/s", "peak / mean", "on-demand $/month",
            "auto scaling $/month (+ alarms)", "utilization W / R", "minutes throttled / day",
            "largest backlog (min of capacity)", "decreases / day", "fixed at the peak $/month",
            "choose"]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += [row_of(name, rates, compare(rates, units, scaling)) for name, rates in WORKLOADS.items()]  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """CLI entry: ``magnetar perf provisioned [--from-cost FILE] [--target 70] [--min 1]``."""
    parser = argparse.ArgumentParser(prog="magnetar perf provisioned",
                                     description=__doc__.splitlines()[0])  # fmt: skip
    parser.add_argument("--from-cost", type=Path, help="a `perf cost --json` report")
    parser.add_argument("--workload", default="unbatched", help="its row to take units from")
    parser.add_argument("--target", type=float, default=70.0, help="target utilization, %%")
    parser.add_argument("--min", type=float, default=1.0, help="minimum units per table")
    parser.add_argument("--max", type=float, default=40_000.0, help="maximum units per table")
    parser.add_argument("--provisioning-minutes", type=int, default=3,
                        help="minutes from a scale-out decision to the capacity")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="JSON instead of a table")
    args = parser.parse_args(argv)
    if not 20 <= args.target <= 90 or not 1 <= args.min <= args.max:
        parser.error("--target: 20 to 90 (%); --min: at least 1 and at most --max")
    units = MEASURED
    if args.from_cost:
        try:
            units = units_from_cost(json.loads(args.from_cost.read_text()), args.workload)
        except (OSError, ValueError, LookupError) as error:
            parser.error(f"--from-cost: {error}")
    scaling = AutoScaling(target=args.target / 100, minimum=args.min, maximum=args.max,
                          provisioning_minutes=args.provisioning_minutes)  # fmt: skip
    if args.json:
        out = {name: vars(compare(rates, units, scaling)) for name, rates in WORKLOADS.items()}
        print(json.dumps({"break_even_utilization": round(break_even_utilization(), 4),
                          "break_even_rate": round(break_even_rate(units, scaling), 3),
                          "units_per_message": units, "workloads": out}, indent=2))  # fmt: skip
    else:
        print(f"break-even utilization: {break_even_utilization():.1%} (writes and reads); "
              f"steady break-even rate: {break_even_rate(units, scaling):.2f} msg/s\n")  # fmt: skip
        print(table(units, scaling))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
