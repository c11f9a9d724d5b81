"""Lambda target: one synchronous ``Invoke`` (RequestResponse) per batch.

The batch JSON is the payload; a function error (``FunctionError`` set: it raised or timed
out) or a failed call raises TargetFailed; otherwise the function's returned JSON is the
answer (status 200), which may carry ``batchItemFailures``. ``check`` asks Lambda whether a
function exists (``GetFunction``), as CreateEventSourceMapping refuses a missing one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from botocore.exceptions import BotoCoreError, ClientError

from magnetar_core.adapters.aws.clients import BotoClient
from magnetar_core.domain.errors import InvalidMessage, NotFound
from magnetar_core.domain.triggers.records import TargetAnswer, TargetFailed
from magnetar_core.domain.triggers.spec import Target

log = logging.getLogger(__name__)
DENIED = frozenset({"AccessDeniedException", "AccessDenied"})


class LambdaTarget:
    """Invokes Lambda functions through a client made on first use by ``make_client``."""

    def __init__(self, make_client: Callable[[], BotoClient]) -> None:
        self._make_client = make_client
        self._client: BotoClient | None = None

    def _lambda(self) -> BotoClient:
        if self._client is None:
            self._client = self._make_client()
        return self._client

    def check(self, target: Target) -> None:
        """Raise NotFound when Lambda has no function ``target.function``, InvalidMessage
        when this service's role may not read it (nor, then, invoke it); anything else
        (throttling, a network error) is logged and passes."""
        name = target.function
        try:
            self._lambda().get_function(FunctionName=name)
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "")
            if code == "ResourceNotFoundException":
                raise NotFound(f"Function {name} does not exist in Lambda") from None
            if code in DENIED:
                raise InvalidMessage(
                    f"'target.function': this service may not call Lambda function {name} "
                    "(its role may get and invoke the stack's own functions only)"
                ) from None
            log.warning("Could not check Lambda function %s (%s): stored unchecked", name, code)
        except BotoCoreError as error:
            log.warning("Could not check Lambda function %s (%s): stored unchecked", name, error)

    def invoke(self, target: Target, body: bytes, timestamp_ms: int) -> TargetAnswer:
        """Invoke ``target.function`` with the batch; raises TargetFailed."""
        try:
            answer = self._lambda().invoke(
                FunctionName=target.function, InvocationType="RequestResponse", Payload=body
            )
        except (BotoCoreError, ClientError) as error:
            raise TargetFailed(f"Invoking {target.function} failed: {error}") from error
        payload = answer["Payload"].read()
        if answer.get("FunctionError"):
            raise TargetFailed(f"{target.function} failed ({answer['FunctionError']}): {payload[:500]!r}")  # fmt: skip
        return TargetAnswer(200, payload)
