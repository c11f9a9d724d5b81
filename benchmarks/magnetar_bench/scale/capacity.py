"""DynamoDB's per-partition-key throughput (and S3's per-prefix request rates), and
botocore's retries of what they throttle.

Each capacity key (``table|partition key``; ``s3|prefix``) has a read and a write bucket
refilled continuously at the key's limit per second, holding at most ``burst_s`` of it. A
request is admitted while its bucket is positive and then debited with the units it
consumed (DynamoDB charges reads by what they read, so a bucket may go below zero);
a refused request is a throttling error (``ProvisionedThroughputExceededException``,
S3's ``SlowDown``), retried as botocore's standard mode retries it (``Retrier``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from botocore.exceptions import ClientError

from magnetar_bench.scale.profile import Profile

S3_PUTS_PER_PREFIX_PER_S = 3500.0
S3_GETS_PER_PREFIX_PER_S = 5500.0


@dataclass
class _Bucket:
    rate_per_s: float
    burst: float
    level: float
    at_ms: float

    def refill(self, now_ms: float) -> None:
        self.level = min(self.burst, self.level + (now_ms - self.at_ms) * self.rate_per_s / 1000)
        self.at_ms = now_ms


@dataclass
class Capacity:
    """Every key's buckets, created full on first use."""

    profile: Profile
    _buckets: dict[tuple[str, bool], _Bucket] = field(default_factory=dict)
    throttled: Counter[str] = field(default_factory=Counter)
    """Refused requests by capacity key."""

    def _bucket(self, key: str, write: bool, now_ms: float) -> _Bucket:
        bucket = self._buckets.get((key, write))
        if bucket is None:
            rate = self._rate(key, write)
            bucket = _Bucket(rate, rate * self.profile.burst_s, rate * self.profile.burst_s, now_ms)
            self._buckets[(key, write)] = bucket
        bucket.refill(now_ms)
        return bucket

    def _rate(self, key: str, write: bool) -> float:
        if key.startswith("s3|"):
            return S3_PUTS_PER_PREFIX_PER_S if write else S3_GETS_PER_PREFIX_PER_S
        return self.profile.wcu_per_key_per_s if write else self.profile.rcu_per_key_per_s

    def admits(self, key: str | None, write: bool, now_ms: float) -> bool:
        if key is None:
            return True
        if self._bucket(key, write, now_ms).level >= 1.0:
            return True
        self.throttled[key] += 1
        return False

    def debit(self, key: str | None, write_units: float, read_units: float, now_ms: float) -> None:
        if key is None:
            return
        if write_units:
            self._bucket(key, True, now_ms).level -= write_units
        if read_units:
            self._bucket(key, False, now_ms).level -= read_units


def throttling_error(operation: str) -> ClientError:
    """The ClientError botocore raises when the service throttled ``operation``."""
    service, name = operation.split(".", 1)
    code = "SlowDown" if service == "s3" else "ProvisionedThroughputExceededException"
    status = 503 if service == "s3" else 400
    response = {"Error": {"Code": code, "Message": "Rate exceeded"},
                "ResponseMetadata": {"HTTPStatusCode": status}}  # fmt: skip
    return ClientError(response, name)


@dataclass
class Retrier:
    """One boto3 client's retry state (botocore standard mode): ``max_attempts`` attempts,
    a throttled attempt waiting ``rand(0, 1) * min(base * 2**(attempt-1), 20 s)``, and the
    client's retry quota (500 tokens, 5 per throttled retry; a success after retries
    gives them back, one without retries gives 1)."""

    profile: Profile
    quota: int = -1

    def __post_init__(self) -> None:
        if self.quota < 0:
            self.quota = self.profile.retry_quota

    def backoff_ms(self, attempt: int, random_01: float) -> float | None:
        """The wait before attempt ``attempt + 1`` after ``attempt`` was throttled; None
        when botocore gives up (attempts or quota spent)."""
        if attempt >= self.profile.max_attempts or self.quota < self.profile.throttle_retry_cost:
            return None
        self.quota -= self.profile.throttle_retry_cost
        return random_01 * min(self.profile.throttle_base_s * 2 ** (attempt - 1), 20.0) * 1000

    def succeeded(self, retries: int) -> None:
        gain = retries * self.profile.throttle_retry_cost if retries else 1
        self.quota = min(self.profile.retry_quota, self.quota + gain)
