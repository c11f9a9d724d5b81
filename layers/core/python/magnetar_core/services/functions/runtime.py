"""Running a Pulsar Function on a trigger's batch (the target ``{"type": "function"}``).

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
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Mapping
from typing import Any

from magnetar_core.domain.functions.config import FunctionConfig
from magnetar_core.domain.functions.sequence import producer_name, sequence_id
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.triggers.records import TargetAnswer, TargetFailed
from magnetar_core.domain.triggers.spec import Target
from magnetar_core.ports import FunctionStateStore, FunctionStore
from magnetar_core.services.functions.context import FunctionContext
from magnetar_core.services.functions.loader import FunctionLoadError, Loader
from magnetar_core.services.produce import Producer
from magnetar_core.services.topics import Topics
from magnetar_wire import serde
from magnetar_wire.entry import encode_entry
from magnetar_wire.model import EntryMessage
from magnetar_wire.names import TopicName
from magnetar_wire.routing import JAVA_STRING_HASH

log = logging.getLogger("magnetar.functions")
INPUT_TOPIC = "__pfn_input_topic__"
"""Property of every output: the input message's topic (as Pulsar's effectively-once sink)."""
INPUT_MESSAGE_ID = "__pfn_input_msg_id__"
"""Property of every output: the input message's id, ``l:e:p:b``."""


class FunctionRuntime:
    """Runs stored functions in this process (see the module)."""

    def __init__(
        self,
        store: FunctionStore,
        state: FunctionStateStore,
        producer: Producer,
        topics: Topics,
        runtime: Runtime,
        loader: Loader | None = None,
    ) -> None:
        self._store = store
        self._state = state
        self._producer = producer
        self._topics = topics
        self._runtime = runtime
        self._loader = loader or Loader()

    def invoke(self, target: Target, body: bytes, timestamp_ms: int) -> TargetAnswer:
        """The ``ports.TriggerTarget`` of function targets: run ``target.function`` on the
        batch; raises TargetFailed (see ``handle``)."""
        answer = self.handle(target.function or "", json.loads(body))
        return TargetAnswer(200, json.dumps(answer).encode())

    def handle(self, fqfn: str, event: Mapping[str, Any]) -> dict[str, Any]:
        """Run function ``fqfn`` (``tenant/namespace/name``) on ``event`` (``{"records":
        [...]}``); returns ``{"batchItemFailures": [{"itemIdentifier": id}, ...]}``. Raises
        TargetFailed when the function does not exist or does not load."""
        config = self._config(fqfn)
        try:
            function = self._loader.instance(config)
        except FunctionLoadError as error:
            raise TargetFailed(str(error)) from error
        records = list(event.get("records") or [])
        failed: list[str] = []
        for i, record in enumerate(records):
            try:
                self._process(config, function, record)
            except Exception:  # the function's failure, whatever it is: this and later retried
                log.exception("function %s failed on message %s", fqfn, record.get("messageId"))
                failed = [str(r["messageId"]) for r in records[i:]]
                break
        return {"batchItemFailures": [{"itemIdentifier": i} for i in failed]}

    def _config(self, fqfn: str) -> FunctionConfig:
        parts = fqfn.split("/")
        config = self._store.get(*parts) if len(parts) == 3 else None
        if config is None:
            raise TargetFailed(f"There is no function {fqfn}")
        return config

    def _process(self, config: FunctionConfig, function: Any, record: Mapping[str, Any]) -> None:
        def publish(
            topic: str, payload: bytes, properties: Mapping[str, str] | None, index: int | None
        ) -> None:
            self._publish(config, record, topic, payload, properties, index)

        context = FunctionContext(config, record, self._state, publish, serde.serialize)
        result = function.process(serde.deserialize(base64.b64decode(record["payload"])), context)
        if result is not None and config.output is not None:
            publish(config.output, serde.serialize(result), None, None)

    def _publish(
        self,
        config: FunctionConfig,
        record: Mapping[str, Any],
        topic: str,
        payload: bytes,
        properties: Mapping[str, str] | None,
        index: int | None,
    ) -> None:
        """Publish one output of ``record`` (deduplicated; see the module)."""
        message_id, input_topic = str(record["messageId"]), str(record["topic"])
        key = record.get("key") if index is None else None
        message = EntryMessage(
            payload=payload,
            sequence_id=sequence_id(message_id),
            publish_time_ms=self._runtime.now_ms(),
            key=key,
            properties={
                **(properties or {}),
                INPUT_TOPIC: input_topic,
                INPUT_MESSAGE_ID: message_id,
            },
            event_time_ms=int(record.get("eventTime") or 0),
        )
        entry = encode_entry(
            [message], producer_name=producer_name(config.fqfn, input_topic, index)
        )
        name = TopicName.parse(topic)
        if key is None:  # a fixed partition for a keyless output, never round robin
            name = self._topics.route(name, message_id, JAVA_STRING_HASH)
        self._producer.publish(name, entry, deduplicate=True)
