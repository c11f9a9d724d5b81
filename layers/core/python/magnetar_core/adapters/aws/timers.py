"""Step Functions adapter for delay timers: start one execution per due bucket, idempotently."""

from __future__ import annotations

from botocore.exceptions import ClientError

from magnetar_core.adapters.aws.clients import BotoClient, error_code, translated
from magnetar_core.domain.timers import execution_input, execution_name


class TimerStarter:
    """Starts the timer workflow (``TIMER_STATE_MACHINE_ARN``) of one cursor's bucket."""

    def __init__(self, stepfunctions: BotoClient, state_machine_arn: str) -> None:
        self._sfn = stepfunctions
        self._arn = state_machine_arn

    def start(self, pk: str, subscription: str, timer_id: str, bucket_ms: int) -> bool:
        """Start the execution that releases ``bucket_ms`` (epoch ms) on cursor
        ``(pk, subscription)``; True if started now, False if it already existed (a retried
        start: the deterministic name makes it idempotent). Raises TooManyRequests,
        StorageFault."""
        name = execution_name(pk, subscription, timer_id, bucket_ms)
        with translated(f"starting timer {name} of {subscription} on {pk}"):
            try:
                self._sfn.start_execution(
                    stateMachineArn=self._arn,
                    name=name,
                    input=execution_input(pk, subscription, bucket_ms),
                )
            except ClientError as exc:
                if error_code(exc) == "ExecutionAlreadyExists":
                    return False
                raise
        return True
