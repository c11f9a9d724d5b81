"""``magnetar perf <path> ...``: runs one benchmark harness and prints its JSON report.

magnetar perf produce|consume|idle [-n N] [--batch K] ...   (messages)
magnetar perf delayed [-n N] [--spread-seconds S] ...        (delayed)
magnetar perf segments [--entries N] ...                     (segments, needs pyspark)
magnetar perf expire [--entries N] ...                       (expiry, needs pyspark)
magnetar perf expire-cost [--partitions P] [--retained N] ...  (expire_cost, needs pyspark)
magnetar perf authorizer [--containers N] [--requests N] ... (authorizer)
magnetar perf triggers [-n N] [--batch-sizes 1,10,100] ...  (triggers)
magnetar perf quotas [--producers N] [--containers C] ...     (quotas)
magnetar perf cost [--workloads unbatched,batched,delayed] [--subscriptions 1,2,5] ... (cost: $ per service, both front doors)
magnetar perf provisioned [--from-cost FILE] [--target 70] ...  (provisioned: DynamoDB capacity modes)
magnetar perf fanout --from-cost FILE [--workloads unbatched]   (fanout: N subscriptions vs SNS + SQS)
magnetar perf latency [--rate R] [--seconds S] [--batch] ...  (latency)
magnetar perf scale [--scenarios a,b] [--duration S] [--seed N] [--json] (scale: AWS-shaped model)
magnetar perf functions [--batches N] [--calls N]             (functions: isolation's cost)
magnetar perf crowd [--producers N] [--each M]                (crowd: producers at once)
magnetar perf shares [--runs R] [--consumers C] [-n N]        (shares: Shared consumers' split)
magnetar perf restart [-n N]                                  (restart: durable local stack)
"""

from __future__ import annotations

import importlib
import sys

from magnetar_bench import messages

# path -> harness module; imported on use, so the Spark harnesses need pyspark only when run
HARNESSES = {
    "delayed": "magnetar_bench.delayed",
    "segments": "magnetar_bench.segments",
    "expire": "magnetar_bench.expiry",
    "expire-cost": "magnetar_bench.expire_cost",
    "authorizer": "magnetar_bench.authorizer",
    "triggers": "magnetar_bench.triggers",
    "quotas": "magnetar_bench.quotas",
    "cost": "magnetar_bench.cost",
    "provisioned": "magnetar_bench.provisioned_report",
    "fanout": "magnetar_bench.fanout",
    "latency": "magnetar_bench.latency",
    "scale": "magnetar_bench.scale.cli",
    "functions": "magnetar_bench.functions",
    "crowd": "magnetar_bench.crowd",
    "shares": "magnetar_bench.shares",
    "restart": "magnetar_bench.restart",
}


def main(argv: list[str] | None = None) -> int:
    """Entry of ``magnetar perf``; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] and argv[0] in HARNESSES:
        harness = importlib.import_module(HARNESSES[argv[0]])
        return harness.main(argv[1:])
    return messages.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
