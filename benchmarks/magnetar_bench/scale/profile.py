"""What the model assumes of AWS: latency distributions per request kind, DynamoDB's
per-partition-key throughput, botocore's retries, Lambda's concurrency and start-up.

Every figure and its source is listed in docs/benchmarks.md ("Scale on an AWS-shaped
model"); where no public figure exists the value is an assumption and says so there.
Latencies are log-normal, given by their median and 99th percentile (a service's latency
has a long right tail; a log-normal is the usual two-parameter fit).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field, replace

Z99 = 2.3263478740408408
"""The standard normal's 99th percentile."""


@dataclass(frozen=True)
class Latency:
    """A log-normal latency with this median and 99th percentile (ms)."""

    median_ms: float
    p99_ms: float

    def sample_ms(self, rng: random.Random) -> float:
        if self.p99_ms <= self.median_ms:
            return self.median_ms
        sigma = math.log(self.p99_ms / self.median_ms) / Z99
        return self.median_ms * math.exp(rng.gauss(0.0, sigma))


def _default_latencies() -> dict[str, Latency]:
    return {
        # DynamoDB: "single-digit millisecond" (AWS); conditional writes cost no extra time
        "dynamodb.GetItem": Latency(4.0, 12.0),
        "dynamodb.Query": Latency(5.0, 15.0),
        "dynamodb.BatchGetItem": Latency(7.0, 20.0),
        "dynamodb.PutItem": Latency(6.0, 18.0),
        "dynamodb.UpdateItem": Latency(6.0, 18.0),
        "dynamodb.DeleteItem": Latency(6.0, 18.0),
        "dynamodb.BatchWriteItem": Latency(10.0, 30.0),
        "dynamodb.TransactWriteItems": Latency(12.0, 35.0),
        # S3: "100-200 ms" first-byte for small objects (S3 performance guidelines)
        "s3.PutObject": Latency(35.0, 150.0),
        "s3.GetObject": Latency(20.0, 100.0),
        "s3.DeleteObject": Latency(25.0, 100.0),
        "stepfunctions.StartExecution": Latency(25.0, 80.0),
    }


@dataclass(frozen=True)
class Profile:
    """The model's AWS: latencies by ``service.Operation`` (botocore's names), the edge
    (client -> API Gateway -> Lambda -> back, the handler's own CPU not included),
    the handler's CPU per request, Lambda's start-up and limits, DynamoDB's limits and
    botocore's retry configuration (``adapters.aws.clients``: standard mode, 4 attempts)."""

    latencies: dict[str, Latency] = field(default_factory=_default_latencies)
    edge: Latency = Latency(9.0, 30.0)
    handler_cpu_ms: float = 3.0
    cold_start: Latency = Latency(450.0, 1200.0)
    cold_starts: bool = True
    lambda_concurrency: int = 1000
    wcu_per_key_per_s: float = 1000.0
    rcu_per_key_per_s: float = 3000.0
    burst_s: float = 0.1
    """How much unused per-key capacity a key may spend at once (assumption: 100 ms)."""
    max_attempts: int = 4
    throttle_base_s: float = 1.0
    """botocore standard mode's backoff base for throttling errors (1 s; 25 ms otherwise
    for DynamoDB)."""
    retry_quota: int = 500
    throttle_retry_cost: int = 5

    def latency(self, operation: str) -> Latency:
        try:
            return self.latencies[operation]
        except KeyError:
            raise KeyError(
                f"the model has no latency for {operation}; add it to the profile"
            ) from None

    def with_changes(self, **changes: object) -> Profile:
        return replace(self, **changes)  # type: ignore[arg-type]
