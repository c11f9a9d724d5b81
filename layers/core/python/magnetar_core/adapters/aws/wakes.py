"""Step Functions adapter for trigger wakes: start one wake workflow execution per (topic,
second), idempotently (``domain.triggers.wakes``)."""

from __future__ import annotations

from collections import OrderedDict

from botocore.exceptions import ClientError

from magnetar_core.adapters.aws.clients import BotoClient, error_code, translated
from magnetar_core.domain.triggers.wakes import wake_execution_input, wake_execution_name

REMEMBERED = 1024
"""Wakes this container remembers having started: a fan-out that sees the same due work
again (every commit while a retry waits) makes no second StartExecution request."""


class TriggerWakes:
    """Starts the trigger wake workflow (``TRIGGER_WAKE_STATE_MACHINE_ARN``)."""

    def __init__(self, stepfunctions: BotoClient, state_machine_arn: str) -> None:
        self._sfn = stepfunctions
        self._arn = state_machine_arn
        self._started: OrderedDict[str, None] = OrderedDict()

    def wake_at(self, topic: str, at_ms: int) -> None:
        """Start the execution that wakes ``topic``'s triggers at ``at_ms`` (epoch ms), unless
        this container started it before. A repeat elsewhere is harmless: Step Functions
        answers a running execution's name and input as started, and refuses a finished
        one (``ExecutionAlreadyExists``, taken as done). Raises TooManyRequests,
        StorageFault."""
        name = wake_execution_name(topic, at_ms)
        if name in self._started:
            return
        with translated(f"starting trigger wake {name} of {topic}"):
            try:
                self._sfn.start_execution(
                    stateMachineArn=self._arn, name=name, input=wake_execution_input(topic, at_ms)
                )
            except ClientError as exc:
                if error_code(exc) != "ExecutionAlreadyExists":
                    raise
        self._started[name] = None
        while len(self._started) > REMEMBERED:
            self._started.popitem(last=False)
