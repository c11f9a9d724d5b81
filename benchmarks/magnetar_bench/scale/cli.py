"""``magnetar perf scale``: the scale scenarios on the AWS-shaped model (virtual time).

Each scenario runs on a fresh model: a warm-up, the measured window of ``--duration``
virtual seconds, then the clients stop and what is left is drained so that the chaos
model's invariants are checked on the whole trace. Repeatable: the same ``--seed`` gives
the same figures.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import Any

from magnetar_bench.scale.profile import Profile
from magnetar_bench.scale.scenarios import SCENARIOS, TARGETS, run


def _table(results: list[dict[str, Any]]) -> str:
    lines = [f"{'scenario':34} {'msg/s':>9} {'errors':>7} {'p50 ms':>8} {'p99 ms':>8} "
             f"{'$/M':>8} {'fair min-max':>13} {'breaks':>6}  invariants"]  # fmt: skip
    for r in results:
        fair = r["fairness"]
        fair_text = f"{fair['min_share']:.2f}-{fair['max_share']:.2f}" if fair else "-"
        cost = r["usd_per_million"]["total"] if r["usd_per_million"] else float("nan")
        ok = "ok" if all(r["invariants"].values()) else "BROKEN: " + ", ".join(
            n for n, v in r["invariants"].items() if not v)  # fmt: skip
        latency = (
            r["publish_to_receive_ms"]
            if r["publish_to_receive_ms"]["p50"] is not None
            else r["send_ms"]
        )
        lines.append(
            f"{r['scenario']:34} {r['msg_per_s']:>9} {r['client_errors_total']:>7} "
            f"{latency['p50'] if latency['p50'] is not None else '-':>8} "
            f"{latency['p99'] if latency['p99'] is not None else '-':>8} {cost:>8.2f} "
            f"{fair_text:>13} {r['key_shared_order_breaks'] if r['key_shared_order_breaks'] is not None else '-':>6}  {ok}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """CLI entry: ``magnetar perf scale [--scenarios a,b] [--duration S] [--seed N] [--json]``."""
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(
        prog="magnetar perf scale", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--scenarios", default=",".join(SCENARIOS),
                        help="comma-separated scenario names (default: all; `targets`: those of the "
                        "scale targets): " + ", ".join(SCENARIOS))  # fmt: skip
    parser.add_argument("--duration", type=float, default=5.0, help="measured virtual seconds")
    parser.add_argument(
        "--warmup", type=float, default=1.0, help="virtual seconds before the window"
    )
    parser.add_argument("--seed", type=int, default=1, help="random seed (same seed, same figures)")
    parser.add_argument(
        "--concurrency", type=int, default=1000, help="Lambda's account concurrency"
    )
    parser.add_argument("--cold-starts", action=argparse.BooleanOptionalAction, default=True,
                        help="new containers take a cold start (default: on)")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the JSON report")
    args = parser.parse_args(argv)
    names = [
        m for n in args.scenarios.split(",") if n for m in (TARGETS if n == "targets" else [n])
    ]
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        parser.error(
            f"unknown scenario(s) {', '.join(unknown)}; choose from {', '.join(SCENARIOS)}"
        )
    if args.duration <= 0 or args.warmup < 0 or args.concurrency < 1:
        parser.error("--duration must be positive, --warmup not negative, --concurrency at least 1")
    profile = Profile(lambda_concurrency=args.concurrency, cold_starts=args.cold_starts)
    # the engine logs each failed commit as a fault; the report counts them instead (the
    # level is put back after the run: a caller in the same process keeps its logs)
    engine_log = logging.getLogger("magnetar_core")
    level = engine_log.level
    engine_log.setLevel(logging.CRITICAL)
    results = []
    try:
        for name in names:
            results.append(run(SCENARIOS[name], args.seed, args.duration, args.warmup, profile))
            if not args.json:
                print(
                    _table(results[-1:]).splitlines()[-1] if len(results) > 1 else _table(results),
                    flush=True,
                )
    finally:
        engine_log.setLevel(level)
    if args.json:
        print(json.dumps({"model": "aws-shaped (virtual time)", "seed": args.seed,
                          "results": results}, indent=2))  # fmt: skip
    return 0 if all(all(r["invariants"].values()) for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
