"""Local Pulsar Functions: a created or updated function wakes its inputs' triggers.

The trigger driver (``magnetar_local.triggers``) learns which topics have triggers from the
trigger routes it sees; a function's triggers are made by ``POST`` (register) or ``PUT``
(create or replace) ``/admin/v3/functions/...`` instead, so ``FunctionWatcher`` (a gateway
observer) reads the function's inputs after a successful one and tells the driver as if each trigger had been PUT. The functions
themselves run in a runner process without AWS credentials (``function_sandbox``).
"""

from __future__ import annotations

import logging

from magnetar_local.routes import RouteMatch
from magnetar_local.template import RouteSpec
from magnetar_local.triggers import TRIGGER, TriggerDriver
from magnetar_wire.names import TopicName

log = logging.getLogger(__name__)
FUNCTION = "/admin/v3/functions/{tenant}/{namespace}/{name}"
WRITES = {("POST", FUNCTION), ("PUT", FUNCTION)}


class FunctionWatcher:
    """Tells ``driver`` about the inputs of each function registered or PUT through the
    gateway."""

    def __init__(self, driver: TriggerDriver) -> None:
        self.driver = driver

    def observe(self, match: RouteMatch, status: int) -> None:
        """A gateway observer: after a successful function POST or PUT, each input's trigger
        PUT."""
        route, params = match.route, match.path_parameters
        if (route.method, route.path) not in WRITES or not 200 <= status < 300:
            return
        try:
            config = self.driver.engine.functions.get(
                params["tenant"], params["namespace"], params["name"]
            )
        except Exception:  # deleted meanwhile, or the emulator stopping: nothing to wake
            log.exception("reading function %s/%s/%s", params["tenant"], params["namespace"], params["name"])  # fmt: skip
            return
        for text in config.inputs:
            topic = TopicName.parse(text)
            trigger = RouteSpec("PUT", TRIGGER, route.function)
            parameters = {"domain": topic.domain, "tenant": topic.tenant,
                          "namespace": topic.namespace, "topic": topic.local,
                          "name": config.trigger_name}  # fmt: skip
            self.driver.observe(RouteMatch(trigger, parameters), status)
