"""What the delay timers of a run cost: Standard executions by state transitions, Express
ones by starts and duration, read back from the emulator."""

from __future__ import annotations

import math
from dataclasses import dataclass

from magnetar_bench.costs import (
    SFN_EXPRESS_MEMORY_GB,
    SFN_EXPRESS_PER_GB_S,
    SFN_EXPRESS_PER_REQUEST,
    SFN_PER_TRANSITION,
)


@dataclass(frozen=True)
class TimerUsage:
    """Timer executions of one run: Standard ones and their state transitions, Express ones
    and their billed seconds (each rounded up to 100 ms)."""

    standard_executions: int = 0
    transitions: int = 0
    express_executions: int = 0
    express_seconds: float = 0.0

    @property
    def executions(self) -> int:
        return self.standard_executions + self.express_executions

    def usd(self) -> float:
        """Dollars at list prices (costs.py)."""
        express_gb_s = self.express_seconds * SFN_EXPRESS_MEMORY_GB
        return (
            self.transitions * SFN_PER_TRANSITION
            + self.express_executions * SFN_EXPRESS_PER_REQUEST
            + express_gb_s * SFN_EXPRESS_PER_GB_S
        )


def _executions(sfn, arn: str, since: float) -> list[dict]:
    """The executions of ``arn`` started at or after ``since`` (epoch s, less 1 s)."""
    return [
        execution
        for page in sfn.get_paginator("list_executions").paginate(stateMachineArn=arn)
        for execution in page["executions"]
        if execution["startDate"].timestamp() >= since - 1
    ]


def timer_usage(sfn, environment: dict[str, str], since: float) -> TimerUsage:
    """The timers started at or after ``since`` (epoch s) on the stack whose handler
    ``environment`` names the workflows (``TIMER_STATE_MACHINE_ARN``, and
    ``TIMER_EXPRESS_STATE_MACHINE_ARN`` when set). Transitions count the states entered,
    which is what AWS bills for Standard."""
    standard = _executions(sfn, environment["TIMER_STATE_MACHINE_ARN"], since)
    transitions = sum(
        sum(e["type"].endswith("StateEntered") for e in history["events"])
        for history in (sfn.get_execution_history(executionArn=x["executionArn"]) for x in standard)
    )
    express_arn = environment.get("TIMER_EXPRESS_STATE_MACHINE_ARN")
    express = _executions(sfn, express_arn, since) if express_arn else []
    seconds = 0.0
    for execution in express:
        described = sfn.describe_execution(executionArn=execution["executionArn"])
        stop = described.get("stopDate") or described["startDate"]
        ran = (stop - described["startDate"]).total_seconds()
        seconds += math.ceil(max(ran, 0.0) * 10) / 10
    return TimerUsage(len(standard), transitions, len(express), seconds)
