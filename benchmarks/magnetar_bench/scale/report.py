"""A scenario's figures: rate, client-visible failures, AWS requests per message, dollars
per million messages (``magnetar_bench.costs``' list prices on the model's counts),
latency percentiles and fairness across consumers."""

from __future__ import annotations

from typing import Any

from magnetar_bench.costs import (
    API_GATEWAY_PER_REQUEST,
    DYNAMODB_PER_RRU,
    DYNAMODB_PER_WRU,
    LAMBDA_ARM_PER_GB_S,
    LAMBDA_MEMORY_GB,
    LAMBDA_PER_REQUEST,
    S3_PER_REQUEST,
)
from magnetar_bench.scale.world import World


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


def fairness(world: World, consumers: int) -> dict[str, Any] | None:
    """Each consumer's share of what was received against a fair share (1.0): the least
    and the most; None without consumers."""
    if consumers == 0:
        return None
    total = sum(world.tally.shares.values())
    if total == 0:
        return {"min_share": 0.0, "max_share": 0.0}
    fair = total / consumers
    shares = [world.tally.shares.get(f"c{i}", 0) / fair for i in range(consumers)]
    return {"min_share": round(min(shares), 3), "max_share": round(max(shares), 3)}


def cost(world: World, messages: int) -> dict[str, float] | None:
    """Dollars per million messages of the window's requests, units and Lambda time."""
    if messages == 0:
        return None
    meter, lambdas = world.aws.meter, world.lambdas
    dynamodb = meter.write_units * DYNAMODB_PER_WRU + meter.read_units * DYNAMODB_PER_RRU
    s3 = sum(n * S3_PER_REQUEST.get(op.split(".", 1)[1], 0.0)
             for op, n in meter.requests.items() if op.startswith("s3."))  # fmt: skip
    invocations = sum(lambdas.invocations.values())
    edge = invocations * (API_GATEWAY_PER_REQUEST + LAMBDA_PER_REQUEST)
    duration = lambdas.billed_ms / 1000 * LAMBDA_MEMORY_GB * LAMBDA_ARM_PER_GB_S
    million = 1e6 / messages
    return {
        "dynamodb": round(dynamodb * million, 3),
        "s3": round(s3 * million, 3),
        "api_gateway_and_lambda_requests": round(edge * million, 3),
        "lambda_duration_arm64_256MB": round(duration * million, 3),
        "total": round((dynamodb + s3 + edge + duration) * million, 3),
    }


def figures(world: World, duration_s: float, consumers: int) -> dict[str, Any]:
    tally, meter, lambdas = world.tally, world.aws.meter, world.lambdas
    done = tally.done
    per_message = (
        {op: round(n / done, 3) for op, n in sorted(meter.requests.items())} if done else {}
    )
    return {
        "messages": done,
        "msg_per_s": round(done / duration_s, 1),
        "client_errors": dict(sorted(tally.errors.items())),
        "client_errors_total": sum(tally.errors.values()),
        "aws_requests_per_message": per_message,
        "aws_throttled_attempts": dict(sorted(meter.throttled.items())),
        "http_requests_per_message": round(sum(lambdas.invocations.values()) / done, 3)
        if done
        else None,
        "usd_per_million": cost(world, done),
        "send_ms": {"p50": percentile(tally.send_ms, 0.5), "p99": percentile(tally.send_ms, 0.99)},
        "publish_to_receive_ms": {
            "p50": percentile(tally.publish_to_receive_ms, 0.5),
            "p99": percentile(tally.publish_to_receive_ms, 0.99),
        },
        "fairness": fairness(world, consumers),
        "lambda": {
            "containers": lambdas.containers,
            "cold_starts": lambdas.cold_starts,
            "throttled": lambdas.throttles,
        },  # fmt: skip
    }
