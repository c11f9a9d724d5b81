"""What one cost run used on the embedded stack (HTTP requests, handler seconds, AWS
requests, DynamoDB request units, timers), metered while it runs, and its dollars by AWS
service (prices: ``magnetar_bench.costs``)."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from magnetar_bench.capacity import CapacityMeter
from magnetar_bench.costs import (
    API_GATEWAY_PER_REQUEST,
    DYNAMODB_PER_RRU,
    DYNAMODB_PER_WRU,
    LAMBDA_ARM_PER_GB_S,
    LAMBDA_MEMORY_GB,
    LAMBDA_PER_REQUEST,
    S3_PER_REQUEST,
)
from magnetar_bench.meter import CallMeter
from magnetar_bench.timer_usage import TimerUsage, timer_usage


@dataclass
class Usage:
    """What one run used: requests, handler seconds, request units, transitions."""

    http_calls: int
    handler_seconds: float
    aws: Counter
    write_units: float
    read_units: float
    timers: TimerUsage
    units_by_table: Counter = field(default_factory=Counter)

    def usd(self, front_door: str) -> dict[str, float]:
        """Dollars by AWS service (``api_gateway`` is 0 behind a function URL)."""
        s3 = sum(S3_PER_REQUEST.get(op.split(".", 1)[1], 0.0) * n for op, n in self.aws.items()
                 if op.startswith("s3."))  # fmt: skip
        return {
            "api_gateway": self.http_calls * API_GATEWAY_PER_REQUEST * (front_door == "http-api"),
            "lambda_requests": self.http_calls * LAMBDA_PER_REQUEST,
            "lambda_duration": self.handler_seconds * LAMBDA_MEMORY_GB * LAMBDA_ARM_PER_GB_S,
            "dynamodb_writes": self.write_units * DYNAMODB_PER_WRU,
            "dynamodb_reads": self.read_units * DYNAMODB_PER_RRU,
            "s3": s3,
            "step_functions": self.timers.usd(),
        }


class Meters:
    """The gateway's calls and handler time, AWS requests, DynamoDB units of one stack."""

    def __init__(self, stack) -> None:
        from magnetar_core.adapters.aws.clients import REQUESTS

        self.requests, self.stack = REQUESTS, stack
        self.calls = CallMeter(stack.gateway)
        self.capacity = CapacityMeter(stack.client("dynamodb"))
        self.capacity.install()
        stack.gateway.loader.forget()  # new containers: their clients are metered

    def mark(self) -> tuple:
        return (self.calls.snapshot(), self.requests.snapshot(), self.capacity.snapshot(),
                self.capacity.by_table(), time.time())  # fmt: skip

    def since(self, mark: tuple) -> Usage:
        (calls0, secs0), aws0, (wru0, rru0), tables0, started = mark
        (calls1, secs1), (wru1, rru1) = self.calls.snapshot(), self.capacity.snapshot()
        timers = timer_usage(self.stack.client("stepfunctions"), self.stack.environment, started)
        aws = self.requests.snapshot() - aws0
        tables = self.capacity.by_table() - tables0
        return Usage(calls1 - calls0, secs1 - secs0, aws, wru1 - wru0, rru1 - rru0, timers, tables)  # fmt: skip
