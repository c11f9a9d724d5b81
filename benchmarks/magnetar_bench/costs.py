"""The cost model of ``magnetar perf``: AWS list prices (us-east-1, shared/PRICES.md) applied
to counted requests and measured handler time."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

S3_WRITE_PER_REQUEST = 0.005 / 1000
"""S3 Standard PUT / COPY / POST / LIST, dollars per request."""
S3_READ_PER_REQUEST = 0.0004 / 1000
"""S3 Standard GET / HEAD, dollars per request."""
DYNAMODB_PER_WRU = 0.625 / 1e6
"""DynamoDB on-demand write request unit (<= 1 KB), dollars."""
DYNAMODB_PER_RRU = 0.125 / 1e6
"""DynamoDB on-demand read request unit (<= 4 KB strongly consistent), dollars."""
S3_PER_REQUEST = {
    "PutObject": S3_WRITE_PER_REQUEST,
    "CopyObject": S3_WRITE_PER_REQUEST,
    "ListObjectsV2": S3_WRITE_PER_REQUEST,
    "GetObject": S3_READ_PER_REQUEST,
    "HeadObject": S3_READ_PER_REQUEST,
}
PRICE_PER_REQUEST = {  # dollars per request, items taken as <= 1 KB written, <= 4 KB read
    "s3.PutObject": S3_WRITE_PER_REQUEST,
    "s3.GetObject": S3_READ_PER_REQUEST,
    "dynamodb.PutItem": DYNAMODB_PER_WRU,
    "dynamodb.DeleteItem": DYNAMODB_PER_WRU,
    "dynamodb.UpdateItem": DYNAMODB_PER_WRU,
    "dynamodb.GetItem": DYNAMODB_PER_RRU,
    "dynamodb.Query": DYNAMODB_PER_RRU,
    "dynamodb.BatchGetItem": DYNAMODB_PER_RRU,
}
API_GATEWAY_PER_REQUEST = 1.00 / 1e6
LAMBDA_PER_REQUEST = 0.20 / 1e6
LAMBDA_ARM_PER_GB_S = 0.0000133334
LAMBDA_MEMORY_GB = 0.25
SFN_PER_TRANSITION = 0.025 / 1000
"""Step Functions Standard, dollars per state transition."""
SFN_EXPRESS_PER_REQUEST = 1.00 / 1e6
"""Step Functions Express, dollars per execution started."""
SFN_EXPRESS_PER_GB_S = 0.00001667
"""Step Functions Express duration, dollars per GB-second (billed in 100 ms steps)."""
SFN_EXPRESS_MEMORY_GB = 64 / 1024
"""The memory an Express execution is billed for at least (64 MB)."""


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
