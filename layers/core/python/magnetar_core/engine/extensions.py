"""The extensions' wiring: triggers (their delivery and the stream's fan-out) and Pulsar
Functions (the resource and the runtime that runs their batches), on the messaging core."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from magnetar_core import ports
from magnetar_core.adapters.targets import Targets, WebhookTarget
from magnetar_core.domain.runtime import Runtime
from magnetar_core.engine.messaging import Messaging
from magnetar_core.ports import Stores
from magnetar_core.services.functions import Functions
from magnetar_core.services.functions.credentials import FunctionCredentials, signing_key_of
from magnetar_core.services.functions.dispatch import (
    FunctionDispatcher,
    InProcessSandbox,
    LambdaSandbox,
    ProducerOutputs,
)
from magnetar_core.services.functions.runtime import FunctionRuntime
from magnetar_core.services.functions.stats import FunctionStats
from magnetar_core.services.triggers import Triggers
from magnetar_core.services.triggers.delivery import Delivery
from magnetar_core.services.triggers.fanout import FanOut
from magnetar_core.settings import Settings
from magnetar_wire.tokens import VerificationKeys


@dataclass(frozen=True)
class FunctionHosting:
    """Where functions' batches run (``sandbox``; None: the settings' runner Lambda, else
    this process) and the keys their tokens are signed with (``keys()``: its secret key),
    needed when ``authentication`` is on."""

    sandbox: ports.FunctionSandbox | None
    keys: Callable[[], VerificationKeys | None]
    authentication: bool


@dataclass(frozen=True)
class Extensions:
    """Triggers and Pulsar Functions, wired on the messaging core."""

    triggers: Triggers
    delivery: Delivery
    fanout: FanOut
    functions: Functions
    function_dispatcher: FunctionDispatcher


def extensions(
    settings: Settings,
    stores: Stores,
    core: Messaging,
    runtime: Runtime,
    targets: ports.TriggerTarget | None,
    wakes: ports.TriggerWakes | None,
    hosting: FunctionHosting,
) -> Extensions:
    """Triggers deliver to ``targets`` (None: webhooks and local functions only) and are
    woken later through ``wakes`` (None: commits alone wake them); Pulsar Functions'
    batches run where ``hosting`` says, with their role's token."""
    topics, subscriptions = core.topics, core.subscriptions
    others = targets or Targets(WebhookTarget(allow_private=settings.trigger_private_webhooks))
    triggers = Triggers(
        stores.triggers,
        topics,
        subscriptions,
        runtime,
        settings.commit_max_attempts,
        allow_private_webhooks=settings.trigger_private_webhooks,
        wakes=wakes,
        # Lambda targets are looked up when stored, where the targets can say (not fakes)
        directory=others if isinstance(others, ports.TargetDirectory) else None,
    )
    sandbox = hosting.sandbox
    if sandbox is None and settings.function_runner:
        sandbox = LambdaSandbox(others, settings.function_runner)
    if sandbox is None:
        outputs = ProducerOutputs(core.producer, topics)
        sandbox = InProcessSandbox(FunctionRuntime(runtime.now_ms), stores.function_state, outputs)
    credentials = FunctionCredentials(
        hosting.authentication,
        lambda: signing_key_of(hosting.keys()),
        lambda: runtime.now_ms() // 1000,
    )
    stats = FunctionStats(stores.function_state, runtime.now_ms)
    function_targets = FunctionDispatcher(stores.functions, sandbox, credentials, others, stats)
    delivery = Delivery(subscriptions, topics, function_targets, runtime)
    functions = Functions(
        stores.functions,
        stores.function_state,
        triggers,
        topics,
        runtime,
        settings.commit_max_attempts,
        core.producer,
    )
    return Extensions(
        triggers, delivery, FanOut(triggers, delivery, runtime, wakes), functions, function_targets
    )
