"""``magnetar perf idle``: what one idle consumer costs per month, with and without the
notification channel, and how fast a produce wakes it.

With the channel (the default) the consumer goes to sleep on the local stack's WebSocket
after two empty long-polls; the run shortens the SDK's keepalive to ``keepalive_seconds``
so the measured window holds several keepalive cycles (each: one ``watch`` message, one
channel function invocation, its DynamoDB requests, one receive without waiting), and
scales one cycle to the real keepalive (``magnetar._transport.notify.KEEPALIVE_SECONDS``, 9 min).
Per month: those cycles, the WebSocket connection minutes (always connected) and a
reconnect every ``RECONNECT_SECONDS`` ($connect, $disconnect, a watch). ``--no-channel``
measures today's long-polling consumer instead. Prices: shared/PRICES.md and API Gateway's
WebSocket list prices (us-east-1): $1.00 per million messages, $0.25 per million
connection minutes.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from typing import Any

from magnetar_bench.anchors import SQS_IDLE_USD_PER_MONTH
from magnetar_bench.costs import (
    API_GATEWAY_PER_REQUEST,
    LAMBDA_ARM_PER_GB_S,
    LAMBDA_MEMORY_GB,
    LAMBDA_PER_REQUEST,
    PRICE_PER_REQUEST,
    idle_report,
)
from magnetar_bench.meter import CallMeter

WATCH_ITEMS = 2
"""Items of a watch's BatchWriteItem (the watch and its listing under the connection)."""
WS_PER_MESSAGE = 1.00 / 1e6
WS_PER_CONNECTION_MINUTE = 0.25 / 1e6
MONTH_S = 30 * 24 * 3600


def _await(condition, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} within {timeout_s} s")
        threading.Event().wait(0.02)


def _usd(aws: Counter, http_calls: int, http_s: float, invocations: int, channel_s: float,
         messages: int) -> float:  # fmt: skip
    prices = {**PRICE_PER_REQUEST,
              "dynamodb.BatchWriteItem": WATCH_ITEMS * PRICE_PER_REQUEST["dynamodb.PutItem"]}  # fmt: skip
    storage = sum(prices.get(op, 0.0) * n for op, n in aws.items())
    edge = http_calls * (API_GATEWAY_PER_REQUEST + LAMBDA_PER_REQUEST)
    lambdas = invocations * LAMBDA_PER_REQUEST
    duration = (http_s + channel_s) * LAMBDA_MEMORY_GB * LAMBDA_ARM_PER_GB_S
    return storage + edge + lambdas + duration + messages * WS_PER_MESSAGE


def run_idle(seconds: float, channel: bool = True, keepalive_s: float = 10.0) -> dict[str, Any]:
    """Start a stack, let one Shared consumer idle for ``seconds``, wake it with one
    produce; returns the report (see the module)."""
    import magnetar as pulsar
    from magnetar._transport import notify as _notify
    from magnetar_core.adapters.aws.clients import REQUESTS
    from magnetar_local.stack import LocalStack

    real_keepalive_s = _notify.KEEPALIVE_SECONDS
    _notify.KEEPALIVE_SECONDS = keepalive_s
    try:
        with LocalStack().start() as stack:
            meter, server = CallMeter(stack.gateway), stack.notify
            assert server is not None
            client = pulsar.Client(stack.url)
            topic = f"persistent://public/default/perf-idle-{uuid.uuid4().hex[:8]}"
            consumer = client.subscribe(topic, "idle", consumer_type=pulsar.ConsumerType.Shared)
            producer = client.create_producer(topic)
            core = consumer._core
            if channel:
                _await(lambda: core.subs[0].idle.asleep, 60, "the consumer did not sleep")
            else:
                core.channel = None
                threading.Event().wait(6)  # past subscribe: only long-polls from here
            before, (calls0, secs0) = REQUESTS.snapshot(), meter.snapshot()
            ws0 = (server.received, server.posted, server.invocations, server.handler_seconds)
            threading.Event().wait(seconds)  # the measurement *is* the idle time
            aws = REQUESTS.snapshot() - before
            calls1, secs1 = meter.snapshot()
            received, posted, invocations, channel_s = (
                server.received - ws0[0], server.posted - ws0[1],
                server.invocations - ws0[2], server.handler_seconds - ws0[3],
            )  # fmt: skip
            if channel:  # wait for the consumer's sleep, so the wake is measured from there
                _await(lambda: core.subs[0].idle.asleep, 60, "the consumer did not sleep again")
            sent = time.perf_counter()
            producer.send(b"wake")
            consumer.receive(timeout_millis=30_000)
            wake_ms = (time.perf_counter() - sent) * 1000
            client.close()
    finally:
        _notify.KEEPALIVE_SECONDS = real_keepalive_s
    if not channel:
        report = idle_report(seconds, aws, calls1 - calls0, secs1 - secs0)
        report["usd_per_month"] = round(report["usd_per_hour"] * 720, 4)
        report["wake_latency_ms"] = round(wake_ms, 1)
        return report
    cycles = max(received, 1)
    per_cycle = _usd(aws, calls1 - calls0, secs1 - secs0, invocations, channel_s,
                     received + posted) / cycles  # fmt: skip
    mean_invocation_s = channel_s / max(invocations, 1)
    reconnect = (
        2 * (LAMBDA_PER_REQUEST + WS_PER_MESSAGE)
        + 2 * PRICE_PER_REQUEST["dynamodb.PutItem"]
        + 2 * mean_invocation_s * LAMBDA_MEMORY_GB * LAMBDA_ARM_PER_GB_S
        + per_cycle
    )
    cycles_month = MONTH_S / real_keepalive_s
    reconnects_month = MONTH_S / _notify.RECONNECT_SECONDS
    minutes_usd = MONTH_S / 60 * WS_PER_CONNECTION_MINUTE
    return {
        "path": "idle",
        "channel": True,
        "measured_seconds": seconds,
        "measured_keepalive_seconds": keepalive_s,
        "keepalive_cycles_measured": received,
        "per_cycle": {
            "aws_requests": {op: round(n / cycles, 2) for op, n in sorted(aws.items())},
            "http_calls": round((calls1 - calls0) / cycles, 2),
            "channel_invocations": round(invocations / cycles, 2),
            "channel_handler_ms": round(channel_s * 1000 / cycles, 1),
            "usd": round(per_cycle, 9),
        },
        "usd_per_month": {
            "keepalive_cycles": round(per_cycle * cycles_month, 4),
            "connection_minutes": round(minutes_usd, 4),
            "reconnects": round(reconnect * reconnects_month, 4),
            "total": round(
                per_cycle * cycles_month + minutes_usd + reconnect * reconnects_month, 4
            ),
        },
        "wake_latency_ms": round(wake_ms, 1),
    }


def idle_month_row(seconds: float) -> dict:
    """The steady monthly cost of an idle consumer: ``perf idle``'s sleeping phase measured
    for ``seconds`` (its own stack, behind the HTTP API) and scaled to 30 days."""
    month = run_idle(seconds)["usd_per_month"]
    return {"workload": "idle-month", "front_door": "http-api", "per": "month",
            "usd": {"total": month["total"]}, "usd_parts": month,
            "sqs_usd": SQS_IDLE_USD_PER_MONTH, "sns_sqs_usd": SQS_IDLE_USD_PER_MONTH}  # fmt: skip
