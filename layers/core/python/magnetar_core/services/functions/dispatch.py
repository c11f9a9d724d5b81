"""Where function targets run: in this process (the local stack, the memory service), or in
the deployment's function runner Lambda (``FUNCTION_RUNNER``: on AWS, user code never runs
in the fan-out's process). Other targets pass through to ``others``."""

from __future__ import annotations

import json

from magnetar_core.domain.triggers.records import TargetAnswer
from magnetar_core.domain.triggers.spec import Target
from magnetar_core.ports import TriggerTarget
from magnetar_core.services.functions.runtime import FunctionRuntime


class FunctionTargets:
    """A ``ports.TriggerTarget`` that runs ``{"type": "function"}`` targets through
    ``runtime`` (``runner`` None) or invokes the Lambda ``runner`` with ``{"function":
    fqfn, "records": [...]}``, and sends every other target to ``others``."""

    def __init__(
        self, runtime: FunctionRuntime, others: TriggerTarget, runner: str | None = None
    ) -> None:
        self._runtime = runtime
        self._others = others
        self._runner = runner

    def invoke(self, target: Target, body: bytes, timestamp_ms: int) -> TargetAnswer:
        """Send the batch to its target; raises TargetFailed."""
        if target.type != "function":
            return self._others.invoke(target, body, timestamp_ms)
        if self._runner is None:
            return self._runtime.invoke(target, body, timestamp_ms)
        event = {"function": target.function, **json.loads(body)}
        runner = Target("lambda", function=self._runner)
        return self._others.invoke(runner, json.dumps(event).encode(), timestamp_ms)
