"""pulsar-admin's ``functions status|stats|stop|start|restart|trigger`` on a function.

A function runs through a trigger on each of its inputs (``Functions``), so stopping it
pauses those triggers (``TriggerSpec.paused``): nothing is sent to it, and its
subscriptions keep the backlog, which it takes up when started again (the start wakes its
inputs). ``restart`` starts it and counts a restart: each batch already runs in a fresh
child process, so there is no instance to replace. Status and stats are ``stats``'s.

``trigger`` is Pulsar's: the value is produced to an input topic (the only one, or the one
named) with the property ``runtime.TRIGGERED``, and the call waits until the function has
run on it (the dispatcher keeps the result of such a message), answering its return value
as text. A stopped function is refused at once; no result within the wait is
ServiceUnitNotReady naming the message, which stays in the topic and is processed as any.
"""

from __future__ import annotations

from collections.abc import Callable

from magnetar_core.domain.errors import InvalidMessage, ServiceUnitNotReady
from magnetar_core.domain.functions.config import FunctionConfig
from magnetar_core.domain.runtime import Runtime
from magnetar_core.services.functions.runtime import TRIGGERED
from magnetar_core.services.functions.stats import FunctionStats
from magnetar_core.services.produce import Producer
from magnetar_core.services.topics import Topics
from magnetar_core.services.triggers import Triggers
from magnetar_wire.entry import encode_entry
from magnetar_wire.errors import InvalidTopicName
from magnetar_wire.model import EntryMessage
from magnetar_wire.names import TopicName
from magnetar_wire.routing import JAVA_STRING_HASH

TRIGGER_WAIT_MS = 20_000
"""How long ``trigger`` waits for the result (under API Gateway's 30 s)."""
MAX_TRIGGER_BYTES = 64 * 1024


class FunctionControl:
    """Status, stats, stop/start/restart and trigger of the functions ``get`` finds."""

    def __init__(
        self,
        get: Callable[[str, str, str], FunctionConfig],
        triggers: Triggers,
        topics: Topics,
        stats: FunctionStats,
        runtime: Runtime,
        producer: Producer | None = None,
        trigger_wait_ms: int = TRIGGER_WAIT_MS,
    ) -> None:
        self._get = get
        self._triggers = triggers
        self._topics = topics
        self._stats = stats
        self._runtime = runtime
        self._producer = producer
        self._wait_ms = trigger_wait_ms

    def running(self, config: FunctionConfig) -> bool:
        """Whether the function runs (no trigger of it is paused)."""
        for topic in config.inputs:
            trigger = next((t for t in self._triggers.of_topic(TopicName.parse(topic))
                            if t.name == config.trigger_name), None)  # fmt: skip
            if trigger is not None and trigger.spec.paused:
                return False
        return True

    def status(self, tenant: str, namespace: str, name: str) -> dict:
        """Pulsar's FunctionStatus; raises NotFound."""
        config = self._get(tenant, namespace, name)
        return self._stats.status(config.fqfn, self.running(config))

    def stats(self, tenant: str, namespace: str, name: str) -> dict:
        """Pulsar's FunctionStats; raises NotFound."""
        return self._stats.stats(self._get(tenant, namespace, name).fqfn)

    def stop(self, tenant: str, namespace: str, name: str) -> FunctionConfig:
        """Pause the function's triggers (a stopped one stays stopped); raises NotFound."""
        return self._set_running(self._get(tenant, namespace, name), False)

    def start(self, tenant: str, namespace: str, name: str) -> FunctionConfig:
        """Resume the function's triggers (and wake its inputs); raises NotFound."""
        return self._set_running(self._get(tenant, namespace, name), True)

    def restart(self, tenant: str, namespace: str, name: str) -> FunctionConfig:
        """Start the function and count a restart; raises NotFound."""
        config = self._set_running(self._get(tenant, namespace, name), True)
        self._stats.record_restart(config.fqfn)
        return config

    def _set_running(self, config: FunctionConfig, running: bool) -> FunctionConfig:
        for topic in config.inputs:
            self._triggers.put(TopicName.parse(topic), config.trigger_name, config.trigger_body(paused=not running))  # fmt: skip
        return config

    def trigger(self, tenant: str, namespace: str, name: str, value: str, topic: str | None = None) -> str:  # fmt: skip
        """Produce ``value`` to the function's input ``topic`` (None: its only input) and
        answer what the function returned on it (see the module). Raises NotFound,
        InvalidMessage (a topic that is not an input, a value too large, or the function
        raised on it), ServiceUnitNotReady (stopped, or no result in time)."""
        config = self._get(tenant, namespace, name)
        target = self._input(config, topic)
        if len(value.encode()) > MAX_TRIGGER_BYTES:
            raise InvalidMessage(f"A trigger value is at most {MAX_TRIGGER_BYTES} bytes")
        if not self.running(config):
            raise ServiceUnitNotReady(f"Function {config.fqfn} is stopped: start it to trigger it")  # fmt: skip
        if self._producer is None:
            raise ServiceUnitNotReady("Triggering functions is not available here")
        message = EntryMessage(payload=value.encode(), publish_time_ms=self._runtime.now_ms(),
                               properties={TRIGGERED: "1"})  # fmt: skip
        # a producer of its own per call: with deduplication on, a reused name and sequence
        # id would be dropped as a duplicate
        entry = encode_entry([message], producer_name=f"{config.fqfn}#trigger-{self._runtime.new_id()}")  # fmt: skip
        routed = self._topics.route(target, None, JAVA_STRING_HASH)
        message_id = self._producer.publish(routed, entry).message_ids[0]
        self._triggers.wake(target)  # locally nothing else sees this commit (AWS: its stream)
        return self._await(config, message_id)

    def _input(self, config: FunctionConfig, topic: str | None) -> TopicName:
        if topic is None:
            if len(config.inputs) != 1:
                raise InvalidMessage(f"Function {config.fqfn} has {len(config.inputs)} inputs: name the topic to trigger")  # fmt: skip
            return TopicName.parse(config.inputs[0])
        try:
            wanted = str(TopicName.parse(topic))
        except InvalidTopicName as error:
            raise InvalidMessage(f"Topic {topic!r} is not a valid topic name: {error.message}") from None  # fmt: skip
        if wanted not in config.inputs:
            raise InvalidMessage(f"Topic {wanted} is not an input of function {config.fqfn}")
        return TopicName.parse(wanted)

    def _await(self, config: FunctionConfig, message_id: str) -> str:
        deadline = self._runtime.monotonic_ms() + self._wait_ms
        delay_ms = 10.0
        while (result := self._stats.result(config.fqfn, message_id)) is None:
            if self._runtime.monotonic_ms() >= deadline:
                raise ServiceUnitNotReady(
                    f"Function {config.fqfn} gave no result for message {message_id} within "
                    f"{self._wait_ms // 1000} s; the message stays in its input and is processed as any"
                )  # fmt: skip
            self._runtime.sleep_ms(delay_ms)
            delay_ms = min(delay_ms * 2, 250.0)
        if "exception" in result:
            raise InvalidMessage(f"Function {config.fqfn} raised on the value: {result['exception']}")  # fmt: skip
        return str(result.get("value", ""))
