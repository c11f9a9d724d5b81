"""Trigger targets (the ``TriggerTarget`` port): webhooks over HTTP(S), Python functions
registered in-process (the local stack's ``--function``), and Lambda functions
(``adapters.aws.lambda_target``), chosen by the target's type; a ``lambda`` target whose
function is registered locally runs the local one."""

from __future__ import annotations

from magnetar_core.adapters.targets.local import LocalFunctions
from magnetar_core.adapters.targets.webhook import WebhookTarget
from magnetar_core.domain.triggers.records import TargetAnswer, TargetFailed
from magnetar_core.domain.triggers.spec import Target
from magnetar_core.ports import TriggerTarget

__all__ = ["LocalFunctions", "Targets", "WebhookTarget"]


class Targets:
    """Routes each batch to the adapter of its target's type."""

    def __init__(
        self,
        webhook: TriggerTarget | None = None,
        functions: LocalFunctions | None = None,
        lambdas: TriggerTarget | None = None,
    ) -> None:
        self.webhook = webhook or WebhookTarget()
        self.functions = functions or LocalFunctions()
        self.lambdas = lambdas

    def invoke(self, target: Target, body: bytes, timestamp_ms: int) -> TargetAnswer:
        """Send the batch to its target (see ``ports.TriggerTarget``); raises TargetFailed,
        also for a Lambda target when neither a local function nor Lambda is available."""
        if target.type == "webhook":
            return self.webhook.invoke(target, body, timestamp_ms)
        if target.function is not None and target.function in self.functions:
            return self.functions.invoke(target, body, timestamp_ms)
        if self.lambdas is None:
            raise TargetFailed(f"No Lambda client and no local function {target.function!r}")
        return self.lambdas.invoke(target, body, timestamp_ms)
