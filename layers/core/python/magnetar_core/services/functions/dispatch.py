"""The trusted side of Pulsar Functions: where a function's batch goes and with what rights.

``FunctionDispatcher`` (a ``ports.TriggerTarget`` for ``{"type": "function"}`` targets, in
the process that delivers triggers' batches) reads the function's definition and code, mints
a short-lived token for the function's role (``FunctionCredentials``) and hands the batch to
a ``ports.FunctionSandbox``. User code never runs with the dispatcher's rights: on AWS it runs
in the function runner Lambda (``LambdaSandbox``), whose role may only write logs, and
reaches counters, state and topics only through the HTTP API with that token; locally in a
subprocess with no AWS credentials (``magnetar_local.function_sandbox``). ``InProcessSandbox``
runs it here, on the engine's stores: the in-memory service and unit tests only (no
isolation). Other targets pass through to ``others``.

The dispatcher also keeps each function's status and stats (``stats.FunctionStats``) from
the runner's answers, and logs (``magnetar.functions``) a batch that could not run, with
why: a function whose code does not load is a system exception in ``functions status``,
its batch retried as the trigger's retry and dead letter settings say. Only
``batchItemFailures`` of the answer goes back to the trigger; the results of messages
``functions trigger`` produced are kept for it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from magnetar_core.domain.functions.config import FunctionConfig
from magnetar_core.domain.triggers.records import TargetAnswer, TargetFailed
from magnetar_core.domain.triggers.spec import Target
from magnetar_core.ports import (
    FunctionOutputs,
    FunctionSandbox,
    FunctionStateAccess,
    FunctionStore,
    TriggerTarget,
)
from magnetar_core.services.functions.credentials import FunctionCredentials
from magnetar_core.services.functions.runtime import FunctionRuntime, batch_event
from magnetar_core.services.functions.stats import BatchReport, FunctionStats
from magnetar_core.services.produce import Producer
from magnetar_core.services.topics import Topics
from magnetar_wire.names import TopicName
from magnetar_wire.routing import JAVA_STRING_HASH

log = logging.getLogger("magnetar.functions")


class LambdaSandbox:
    """Batches run by the function runner Lambda ``function_name``, invoked through
    ``lambdas`` (a target that invokes Lambda functions)."""

    def __init__(self, lambdas: TriggerTarget, function_name: str) -> None:
        self._lambdas = lambdas
        self._target = Target("lambda", function=function_name)

    def run(self, event: Mapping[str, object]) -> TargetAnswer:
        return self._lambdas.invoke(self._target, json.dumps(event).encode(), 0)


class ProducerOutputs:
    """Outputs committed by this process's producer (``InProcessSandbox``)."""

    def __init__(self, producer: Producer, topics: Topics) -> None:
        self._producer, self._topics = producer, topics

    def publish(self, topic: TopicName, entry: bytes, route_by: str | None) -> None:
        if route_by is not None:
            topic = self._topics.route(topic, route_by, JAVA_STRING_HASH)
        self._producer.publish(topic, entry, deduplicate=True)


class InProcessSandbox:
    """Batches run in this process on ``state`` and ``outputs`` (the engine's own: no
    isolation; the in-memory service and tests)."""

    def __init__(
        self, runtime: FunctionRuntime, state: FunctionStateAccess, outputs: FunctionOutputs
    ) -> None:
        self._runtime, self._state, self._outputs = runtime, state, outputs

    def run(self, event: Mapping[str, object]) -> TargetAnswer:
        answer = self._runtime.run(event, self._state, self._outputs)
        return TargetAnswer(200, json.dumps(answer).encode())


class FunctionDispatcher:
    """Sends function targets' batches to ``sandbox`` (see the module); every other target
    to ``others``."""

    def __init__(
        self,
        store: FunctionStore,
        sandbox: FunctionSandbox,
        credentials: FunctionCredentials,
        others: TriggerTarget,
        stats: FunctionStats | None = None,
    ) -> None:
        self._store = store
        self._sandbox = sandbox
        self._credentials = credentials
        self._others = others
        self._stats = stats

    def invoke(self, target: Target, body: bytes, timestamp_ms: int) -> TargetAnswer:
        """Send the batch to its target; raises TargetFailed."""
        if target.type != "function":
            return self._others.invoke(target, body, timestamp_ms)
        config = self._config(target.function or "")
        records = list(json.loads(body).get("records") or [])
        event = batch_event(config, records, self._credentials.token_for(config))
        try:
            answer = self._sandbox.run(event)
        except TargetFailed as error:
            log.warning("function %s: its batch of %d message(s) did not run: %s",
                        config.fqfn, len(records), error)  # fmt: skip
            if self._stats is not None:
                try:
                    self._stats.record_system_exception(config.fqfn, len(records), str(error))
                except Exception:  # stats are diagnostics: the batch's own failure is raised
                    log.exception("function %s: its failure was not counted", config.fqfn)
            raise
        ids = [str(r.get("messageId")) for r in records if isinstance(r, dict)]
        return self._counted(config, ids, answer)

    def _counted(self, config: FunctionConfig, ids: list[str], answer: TargetAnswer) -> TargetAnswer:  # fmt: skip
        """Record the batch's stats and triggered results (a failure there is logged: the
        batch ran); the answer the trigger gets, ``batchItemFailures`` alone."""
        try:
            document = json.loads(answer.body)
        except ValueError:
            return answer
        if not isinstance(document, dict):
            return answer
        report = BatchReport.of(document, ids)
        for text, message_id in report.user_exceptions:
            log.warning("function %s raised on message %s: %s", config.fqfn, message_id, text)
        if self._stats is not None:
            try:
                self._stats.record_batch(config.fqfn, len(ids), report)
            except Exception:  # stats are diagnostics: never fail a batch that ran
                log.exception("function %s: its batch's stats were not recorded", config.fqfn)
        failures = {"batchItemFailures": document.get("batchItemFailures") or []}
        return TargetAnswer(answer.status, json.dumps(failures).encode())

    def handle(self, fqfn: str, event: Mapping[str, Any]) -> dict[str, Any]:
        """Run function ``fqfn`` on ``event`` (``{"records": [...]}``) as a trigger would;
        returns its ``{"batchItemFailures": [...]}``. Raises TargetFailed."""
        target = Target("function", function=fqfn)
        answer = self.invoke(target, json.dumps({"records": event.get("records") or []}).encode(), 0)  # fmt: skip
        return dict(json.loads(answer.body))

    def _config(self, fqfn: str) -> FunctionConfig:
        parts = fqfn.split("/")
        config = self._store.get(*parts) if len(parts) == 3 else None
        if config is None:
            raise TargetFailed(f"There is no function {fqfn}")
        return config
