"""Running a Pulsar Function's batch, wherever it runs (the runner Lambda, a subprocess, this
process): the code and definition come in the batch's event (``dispatch`` reads them on the
trusted side), the counters, state and outputs go through the ports it is given
(``ports.FunctionStateAccess``, ``ports.FunctionOutputs``) — on the runner, the HTTP API as
the function's role; nothing here touches a store.

Each record of the batch, in order, goes to the function's ``process(input, context)``
(input through IdentitySerDe); a return value other than None is published to the
function's output topic. Outputs are published effectively once: deduplication forced on,
a producer per function, input partition and output (``domain.functions.sequence``), the
input message's position as sequence id, so a retried record's outputs are dropped as
duplicates. A partitioned output topic gets a keyless output on the partition the input
message id hashes to (never round robin: a retry must meet its first attempt's dedup state).

A record whose ``process`` raises (or whose output cannot be published) fails, and so does
every later record of the batch, unprocessed: the answer's ``batchItemFailures`` sends them
back in order (results keep the input's order, which increasing sequence ids need). A
function that does not exist or does not load raises TargetFailed: the whole batch is
retried.

The answer also tells the trusted side what to count (``stats``): ``processed`` (records
that succeeded), ``processMs`` (the time ``process`` took), ``userExceptions`` (what it
raised, Pulsar's ExceptionInformation) and ``results``: of each record produced by
``functions trigger`` (property ``TRIGGERED``), its return value as text or its exception.
"""

from __future__ import annotations

import base64
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from magnetar_core.domain.errors import MagnetarError
from magnetar_core.domain.functions.config import FunctionConfig
from magnetar_core.domain.functions.sequence import producer_name, sequence_id
from magnetar_core.domain.triggers.records import TargetFailed
from magnetar_core.ports import FunctionOutputs, FunctionStateAccess
from magnetar_core.services.functions.context import FunctionContext
from magnetar_core.services.functions.loader import FunctionLoadError, Loader
from magnetar_wire import serde
from magnetar_wire.entry import encode_entry
from magnetar_wire.model import EntryMessage
from magnetar_wire.names import TopicName

log = logging.getLogger("magnetar.functions")
INPUT_TOPIC = "__pfn_input_topic__"
"""Property of every output: the input message's topic (as Pulsar's effectively-once sink)."""
INPUT_MESSAGE_ID = "__pfn_input_msg_id__"
"""Property of every output: the input message's id, ``l:e:p:b``."""
TRIGGERED = "__magnetar_triggered__"
"""Property of a message ``functions trigger`` produced: its result goes in the answer."""
MAX_RESULT_CHARS = 64 * 1024


def batch_event(config: FunctionConfig, records: list[Any], token: str | None) -> dict[str, Any]:
    """The event a sandbox runs: the function (definition, code, version), the records and
    the token of the function's role (None: authentication is off)."""
    return {
        "function": config.fqfn,
        "config": config.stored_body(),
        "version": config.version,
        "records": records,
        "token": token,
    }


def config_of_event(event: Mapping[str, Any]) -> FunctionConfig:
    """The function an event (``batch_event``) carries; raises TargetFailed."""
    parts = str(event.get("function", "")).split("/")
    if len(parts) != 3 or not isinstance(event.get("config"), Mapping):
        raise TargetFailed("The batch names no function definition: the dispatcher sends one")
    tenant, namespace, name = parts
    try:
        config = FunctionConfig.parse(tenant, namespace, name, event["config"])
    except MagnetarError as error:
        raise TargetFailed(f"The batch's function definition is invalid: {error}") from error
    return config.with_version(int(event.get("version") or 0))


class FunctionRuntime:
    """Runs functions' batches in this process on the state and outputs it is given."""

    def __init__(self, now_ms: Callable[[], int], loader: Loader | None = None) -> None:
        self._now_ms = now_ms
        self._loader = loader or Loader()

    def run(
        self, event: Mapping[str, Any], state: FunctionStateAccess, outputs: FunctionOutputs
    ) -> dict[str, Any]:
        """Run the function of ``event`` (``batch_event``) on its records; returns
        ``{"batchItemFailures": [{"itemIdentifier": id}, ...]}``. Raises TargetFailed when
        the event is not a batch or the function does not load."""
        config = config_of_event(event)
        try:
            function = self._loader.instance(config)
        except FunctionLoadError as error:
            raise TargetFailed(str(error)) from error
        records = list(event.get("records") or [])
        failed: list[str] = []
        exceptions: list[dict[str, Any]] = []
        results: dict[str, dict[str, str]] = {}
        processed, process_s = 0, 0.0
        for i, record in enumerate(records):
            started = time.perf_counter()
            try:
                result = self._process(config, function, record, state, outputs)
            except Exception as error:  # the function's failure: this record and later ones retried
                log.exception("function %s failed on message %s", config.fqfn, record.get("messageId"))  # fmt: skip
                text = f"{type(error).__name__}: {error}"
                exceptions.append({"exceptionString": text, "timestampMs": self._now_ms(),
                                   "messageId": str(record.get("messageId"))})  # fmt: skip
                if _triggered(record):
                    results[str(record["messageId"])] = {"exception": text[:MAX_RESULT_CHARS]}
                failed = [str(r["messageId"]) for r in records[i:]]
                break
            finally:
                process_s += time.perf_counter() - started
            processed += 1
            if _triggered(record):
                results[str(record["messageId"])] = {"value": _text(result)}
        answer: dict[str, Any] = {
            "batchItemFailures": [{"itemIdentifier": i} for i in failed],
            "processed": processed,
            "processMs": round(process_s * 1000, 3),
            "userExceptions": exceptions,
        }
        if results:
            answer["results"] = results
        return answer

    def _process(
        self,
        config: FunctionConfig,
        function: Any,
        record: Mapping[str, Any],
        state: FunctionStateAccess,
        outputs: FunctionOutputs,
    ) -> Any:
        def publish(
            topic: str, payload: bytes, properties: Mapping[str, str] | None, index: int | None
        ) -> None:
            self._publish(config, record, topic, payload, properties, index, outputs)

        context = FunctionContext(config, record, state, publish, serde.serialize)
        result = function.process(serde.deserialize(base64.b64decode(record["payload"])), context)
        if result is not None and config.output is not None:
            publish(config.output, serde.serialize(result), None, None)
        return result

    def _publish(
        self,
        config: FunctionConfig,
        record: Mapping[str, Any],
        topic: str,
        payload: bytes,
        properties: Mapping[str, str] | None,
        index: int | None,
        outputs: FunctionOutputs,
    ) -> None:
        """Publish one output of ``record`` (deduplicated; see the module)."""
        message_id, input_topic = str(record["messageId"]), str(record["topic"])
        key = record.get("key") if index is None else None
        message = EntryMessage(
            payload=payload,
            sequence_id=sequence_id(message_id),
            publish_time_ms=self._now_ms(),
            key=key,
            properties={
                **(properties or {}),
                INPUT_TOPIC: input_topic,
                INPUT_MESSAGE_ID: message_id,
            },
            event_time_ms=int(record.get("eventTime") or 0),
        )
        entry = encode_entry(
            [message], producer_name=producer_name(config.fqfn, input_topic, message_id, index)
        )
        # a keyless output goes to the partition the input's id hashes to, never round robin
        outputs.publish(TopicName.parse(topic), entry, message_id if key is None else None)


def _triggered(record: Mapping[str, Any]) -> bool:
    return TRIGGERED in (record.get("properties") or {})


def _text(result: Any) -> str:
    """A return value as ``functions trigger`` prints it ("" for None)."""
    if result is None:
        return ""
    try:
        data = serde.serialize(result)
    except TypeError:
        return repr(result)[:MAX_RESULT_CHARS]
    return data.decode("utf-8", "replace")[:MAX_RESULT_CHARS]
