"""Step Functions adapter for delay timers: start one execution per due bucket, idempotently."""

from __future__ import annotations

from collections.abc import Callable

from botocore.exceptions import ClientError

from magnetar_core.adapters.aws.clients import BotoClient, error_code, translated
from magnetar_core.domain.timers import TimerKinds, execution_input, execution_name


class TimerStarter:
    """Starts the timer workflow of one cursor's bucket: the Standard one
    (``TIMER_STATE_MACHINE_ARN``), or the Express one (``TIMER_EXPRESS_STATE_MACHINE_ARN``,
    when given) for a wait ``kinds`` gives to Express, by the clock ``now_ms``."""

    def __init__(
        self,
        stepfunctions: BotoClient,
        state_machine_arn: str,
        express_arn: str | None = None,
        now_ms: Callable[[], int] | None = None,
        kinds: TimerKinds | None = None,
    ) -> None:
        self._sfn = stepfunctions
        self._arn = state_machine_arn
        self._express_arn = express_arn
        self._now_ms = now_ms
        self._kinds = kinds or TimerKinds()

    def start(self, pk: str, subscription: str, timer_id: str, bucket_ms: int) -> bool:
        """Start the execution that releases ``bucket_ms`` (epoch ms) on cursor
        ``(pk, subscription)``; True if started now, False if it already existed (a retried
        start of a Standard timer: the deterministic name makes it idempotent; a retried
        Express one may run twice, and a release is idempotent). Raises TooManyRequests,
        StorageFault."""
        name = execution_name(pk, subscription, timer_id, bucket_ms)
        with translated(f"starting timer {name} of {subscription} on {pk}"):
            try:
                self._sfn.start_execution(
                    stateMachineArn=self._arn_for(bucket_ms),
                    name=name,
                    input=execution_input(pk, subscription, bucket_ms),
                )
            except ClientError as exc:
                if error_code(exc) == "ExecutionAlreadyExists":
                    return False
                raise
        return True

    def _arn_for(self, bucket_ms: int) -> str:
        if self._express_arn is None or self._now_ms is None:
            return self._arn
        return self._express_arn if self._kinds.express(bucket_ms, self._now_ms()) else self._arn
