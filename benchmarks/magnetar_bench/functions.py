"""``magnetar perf functions``: what running Pulsar Functions isolated costs, per batch and per
call.

* **batch**: a one-record batch of a function that publishes nothing, run by the runner's code
  in this process (``function_runner.handle``: what the in-process runtime cost) and in a
  forked child (``function_runner.run_isolated``: what the runner Lambda and the local runner
  process do for every batch), ``--batches`` times each;
* **calls**: ``context.incr_counter``, ``context.get_state`` and an output's publish through
  the HTTP API (``adapters/http/function_api``) on the in-memory service behind the real
  handlers, ``--calls`` times each: what the in-process runtime did with one store request.

On AWS each call is also one HTTP API request ($1.00 per million) and one handler invocation
(its Lambda request and duration), where the in-process runtime made one DynamoDB request;
the token is minted once per batch (an HS256 signature, microseconds).
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import time
from collections.abc import Callable

from magnetar_bench.machine import machine_report
from magnetar_bench.stats import percentile

CODE = "import magnetar as pulsar\nclass Job(pulsar.Function):\n    def process(self, i, c):\n        return None\n"  # fmt: skip


def _summary(call: Callable[[], object], times: int) -> dict[str, float]:
    call()  # warm: the class loaded, the connection made
    samples = []
    for _ in range(times):
        start = time.perf_counter()
        call()
        samples.append((time.perf_counter() - start) * 1000)
    return {
        "p50_ms": round(percentile(samples, 0.5), 3),
        "p99_ms": round(percentile(samples, 0.99), 3),
    }


def batch_event(code: str = CODE) -> dict:
    """A one-record batch of function ``public/default/job`` running ``code``."""
    record: dict[str, object] = {
        "messageId": "1:0:-1:-1", "topic": "persistent://public/default/in", "key": None,
        "payload": base64.b64encode(b"a").decode(), "properties": {}, "eventTime": 0,
    }  # fmt: skip
    config = {"className": "job.Job", "code": code, "inputs": ["in"]}
    return {"function": "public/default/job", "config": config, "version": 1,
            "records": [record], "token": None}  # fmt: skip


def run_functions(batches: int, calls: int) -> dict:
    """The report (see the module)."""
    from magnetar_core.adapters.http.function_api import FunctionApi
    from magnetar_core.api import function_runner
    from magnetar_local.memory_service import MemoryService
    from magnetar_wire import EntryMessage, encode_entry
    from magnetar_wire.names import TopicName

    settings = function_runner.RunnerSettings("http://127.0.0.1:9")
    event = batch_event()
    report: dict = {"machine": machine_report()}
    report["batch"] = {
        "in_process": _summary(lambda: function_runner.handle(event, settings), batches),
        "forked_child": _summary(lambda: function_runner.run_isolated(event, settings), batches),
    }
    with MemoryService() as svc:
        api = FunctionApi(svc.url, "public/default/job", None)
        sequence = iter(range(1, 10**9))

        def publish() -> None:
            message = EntryMessage(payload=b"o", sequence_id=next(sequence), publish_time_ms=1)
            entry = encode_entry([message], producer_name="public/default/job@in")
            api.publish(TopicName.parse("out"), entry, None)

        report["calls"] = {
            "incr_counter": _summary(lambda: api.incr_counter("", "k", 1), calls),
            "get_state": _summary(lambda: api.get_state("", "k"), calls),
            "publish": _summary(publish, calls),
        }
    return report


def main(argv: list[str] | None = None) -> int:
    """``magnetar perf functions [--batches N] [--calls N]``; prints the JSON report."""
    parser = argparse.ArgumentParser(
        prog="magnetar perf functions",
        description="Pulsar Functions' isolation: a batch in a forked child, calls through the API.",  # fmt: skip
    )
    parser.add_argument("--batches", type=int, default=200, help="batches per case (default 200)")
    parser.add_argument("--calls", type=int, default=500, help="calls per kind (default 500)")
    args = parser.parse_args(argv)
    if args.batches < 1 or args.calls < 1:
        print("magnetar perf functions: --batches and --calls must be at least 1", file=sys.stderr)
        return 2
    print(json.dumps(run_functions(args.batches, args.calls), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
