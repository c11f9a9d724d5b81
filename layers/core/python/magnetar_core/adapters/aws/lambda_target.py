"""Lambda target: one synchronous ``Invoke`` (RequestResponse) per batch.

The batch JSON is the payload; a function error (``FunctionError`` set: it raised or timed
out) or a failed call raises TargetFailed; otherwise the function's returned JSON is the
answer (status 200), which may carry ``batchItemFailures``.
"""

from __future__ import annotations

from collections.abc import Callable

from botocore.exceptions import BotoCoreError, ClientError

from magnetar_core.adapters.aws.clients import BotoClient
from magnetar_core.domain.triggers.records import TargetAnswer, TargetFailed
from magnetar_core.domain.triggers.spec import Target


class LambdaTarget:
    """Invokes Lambda functions through a client made on first use by ``make_client``."""

    def __init__(self, make_client: Callable[[], BotoClient]) -> None:
        self._make_client = make_client
        self._client: BotoClient | None = None

    def invoke(self, target: Target, body: bytes, timestamp_ms: int) -> TargetAnswer:
        """Invoke ``target.function`` with the batch; raises TargetFailed."""
        if self._client is None:
            self._client = self._make_client()
        try:
            answer = self._client.invoke(
                FunctionName=target.function, InvocationType="RequestResponse", Payload=body
            )
        except (BotoCoreError, ClientError) as error:
            raise TargetFailed(f"Invoking {target.function} failed: {error}") from error
        payload = answer["Payload"].read()
        if answer.get("FunctionError"):
            raise TargetFailed(f"{target.function} failed ({answer['FunctionError']}): {payload[:500]!r}")  # fmt: skip
        return TargetAnswer(200, payload)
