"""Trigger targets (the ``TriggerTarget`` port): webhooks over HTTP(S), Python functions
registered in-process (the local stack's ``--function``), and Lambda functions
(``adapters.aws.lambda_target``), chosen by the target's type; a ``lambda`` target whose
function is registered locally runs the local one."""

from __future__ import annotations

from typing import Protocol

from magnetar_core.adapters.targets.local import LocalFunctions
from magnetar_core.adapters.targets.webhook import WebhookTarget
from magnetar_core.domain.errors import NotFound
from magnetar_core.domain.triggers.records import TargetAnswer, TargetFailed
from magnetar_core.domain.triggers.spec import Target
from magnetar_core.ports import TargetDirectory, TriggerTarget

__all__ = ["LocalFunctions", "Targets", "WebhookTarget"]


class LambdaFunctions(TriggerTarget, TargetDirectory, Protocol):
    """Lambda: invokes functions and tells whether one exists (``aws.lambda_target``)."""


class Targets:
    """Routes each batch to the adapter of its target's type."""

    def __init__(
        self,
        webhook: TriggerTarget | None = None,
        functions: LocalFunctions | None = None,
        lambdas: LambdaFunctions | None = None,
    ) -> None:
        self.webhook = webhook or WebhookTarget()
        self.functions = functions or LocalFunctions()
        self.lambdas = lambdas

    def check(self, target: Target) -> None:
        """Raise NotFound for a Lambda target that is neither a local function nor a
        function of Lambda (see ``ports.TargetDirectory``)."""
        name = target.function
        if target.type != "lambda" or name is None or name in self.functions:
            return
        if self.lambdas is None:
            raise NotFound(
                f"Function {name} does not exist: no function of that name is registered "
                f"here (magnetar local --function {name}=path/file.py:handler)"
            )
        self.lambdas.check(target)

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
