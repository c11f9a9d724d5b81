"""The extensions' wiring: triggers (their delivery and the stream's fan-out) and Pulsar
Functions (the resource and the runtime that runs their batches), on the messaging core."""

from __future__ import annotations

from dataclasses import dataclass

from magnetar_core import ports
from magnetar_core.adapters.targets import Targets, WebhookTarget
from magnetar_core.domain.runtime import Runtime
from magnetar_core.engine.messaging import Messaging
from magnetar_core.ports import Stores
from magnetar_core.services.functions import Functions
from magnetar_core.services.functions.dispatch import FunctionTargets
from magnetar_core.services.functions.runtime import FunctionRuntime
from magnetar_core.services.triggers import Triggers
from magnetar_core.services.triggers.delivery import Delivery
from magnetar_core.services.triggers.fanout import FanOut
from magnetar_core.settings import Settings


@dataclass(frozen=True)
class Extensions:
    """Triggers and Pulsar Functions, wired on the messaging core."""

    triggers: Triggers
    delivery: Delivery
    fanout: FanOut
    functions: Functions
    function_runtime: FunctionRuntime


def extensions(
    settings: Settings,
    stores: Stores,
    core: Messaging,
    runtime: Runtime,
    targets: ports.TriggerTarget | None,
    wakes: ports.TriggerWakes | None,
) -> Extensions:
    """Triggers deliver to ``targets`` (None: webhooks and local functions only) and are
    woken later through ``wakes`` (None: commits alone wake them); Pulsar Functions'
    batches run in this process, or in ``settings.function_runner``'s Lambda."""
    topics, subscriptions = core.topics, core.subscriptions
    triggers = Triggers(
        stores.triggers,
        topics,
        subscriptions,
        runtime,
        settings.commit_max_attempts,
        allow_private_webhooks=settings.trigger_private_webhooks,
        wakes=wakes,
    )
    function_runtime = FunctionRuntime(
        stores.functions, stores.function_state, core.producer, topics, runtime
    )
    function_targets = FunctionTargets(
        function_runtime,
        targets or Targets(WebhookTarget(allow_private=settings.trigger_private_webhooks)),
        settings.function_runner,
    )
    delivery = Delivery(subscriptions, topics, function_targets, runtime)
    functions = Functions(
        stores.functions,
        stores.function_state,
        triggers,
        topics,
        runtime,
        settings.commit_max_attempts,
    )
    return Extensions(
        triggers, delivery, FanOut(triggers, delivery, runtime, wakes), functions, function_runtime
    )
