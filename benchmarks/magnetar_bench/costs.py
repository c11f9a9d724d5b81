"""The cost model of ``magnetar perf``: AWS list prices (us-east-1, shared/PRICES.md) applied
to counted requests and measured handler time."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

PRICE_PER_REQUEST = {  # dollars per request
    "s3.PutObject": 0.005 / 1000,
    "s3.GetObject": 0.0004 / 1000,
    "dynamodb.PutItem": 0.625 / 1e6,
    "dynamodb.DeleteItem": 0.625 / 1e6,
    "dynamodb.UpdateItem": 0.625 / 1e6,
    "dynamodb.GetItem": 0.125 / 1e6,
    "dynamodb.Query": 0.125 / 1e6,
    "dynamodb.BatchGetItem": 0.125 / 1e6,
}
API_GATEWAY_PER_REQUEST = 1.00 / 1e6
LAMBDA_PER_REQUEST = 0.20 / 1e6
LAMBDA_ARM_PER_GB_S = 0.0000133334
LAMBDA_MEMORY_GB = 0.25


@dataclass
class Measurement:
    """What one run measured."""

    path: str
    messages: int
    seconds: float
    aws: Counter
    http_calls: int
    handler_seconds: float

    def report(self) -> dict:
        per_k = {op: round(n * 1000 / self.messages, 2) for op, n in sorted(self.aws.items())}
        aws_cost = sum(PRICE_PER_REQUEST.get(op, 0.0) * n for op, n in self.aws.items())
        edge_cost = self.http_calls * (API_GATEWAY_PER_REQUEST + LAMBDA_PER_REQUEST)
        duration_cost = self.handler_seconds * LAMBDA_MEMORY_GB * LAMBDA_ARM_PER_GB_S
        million = 1e6 / self.messages
        return {
            "path": self.path,
            "messages": self.messages,
            "messages_per_second": round(self.messages / self.seconds, 1),
            "aws_requests_per_1000_messages": per_k,
            "aws_requests_per_1000_messages_total": round(
                sum(self.aws.values()) * 1000 / self.messages, 2
            ),
            "http_calls_per_1000_messages": round(self.http_calls * 1000 / self.messages, 2),
            "usd_per_million_messages": {
                "storage_requests": round(aws_cost * million, 4),
                "api_gateway_and_lambda_requests": round(edge_cost * million, 4),
                "lambda_duration_arm64_256MB": round(duration_cost * million, 4),
                "total": round((aws_cost + edge_cost + duration_cost) * million, 4),
            },
        }


def idle_report(seconds: float, aws: Counter, http_calls: int, handler_seconds: float) -> dict:
    """Cost of one consumer waiting with nothing to receive, scaled to one hour."""
    scale = 3600 / seconds
    aws_cost = sum(PRICE_PER_REQUEST.get(op, 0.0) * n for op, n in aws.items()) * scale
    edge_cost = http_calls * (API_GATEWAY_PER_REQUEST + LAMBDA_PER_REQUEST) * scale
    gb_s = handler_seconds * LAMBDA_MEMORY_GB * scale
    return {
        "path": "idle",
        "measured_seconds": seconds,
        "aws_requests_per_hour": {op: round(n * scale) for op, n in sorted(aws.items())},
        "http_calls_per_hour": round(http_calls * scale),
        "lambda_gb_seconds_per_hour": round(gb_s, 1),
        "usd_per_hour": round(aws_cost + edge_cost + gb_s * LAMBDA_ARM_PER_GB_S, 5),
    }
