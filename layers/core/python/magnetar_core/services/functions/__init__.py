"""Pulsar Functions (issue 13): the function resource (``Functions``: create or replace as the
caller's role, read, list, delete, each with a trigger on every input; its counters and
state for the routes its runner calls), the runtime that runs a function's batch wherever
it runs (``runtime.FunctionRuntime``), the trusted dispatcher that sends a batch to its
sandbox with a token of the function's role (``dispatch``, ``credentials``), and
pulsar-admin's status, stats, stop/start/restart and trigger (``control``, ``stats``)."""

from __future__ import annotations

import contextlib

from magnetar_core.domain.errors import (
    ConditionFailed,
    Conflict,
    InvalidMessage,
    NotFound,
    ServiceUnitNotReady,
    TopicNotFound,
)
from magnetar_core.domain.functions.config import FunctionConfig, check_function_name
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.triggers.spec import TriggerSpec
from magnetar_core.ports import FunctionStateStore, FunctionStore
from magnetar_core.services import optimistic
from magnetar_core.services.functions.context import check_key
from magnetar_core.services.functions.control import FunctionControl
from magnetar_core.services.functions.stats import FunctionStats
from magnetar_core.services.produce import Producer
from magnetar_core.services.topics import Topics
from magnetar_core.services.triggers import Triggers
from magnetar_wire.names import TopicName, check_namespace

MAX_STATE_BYTES = 256 * 1024
"""A state value (the memory and DynamoDB adapters hold it in one item of 400 KB)."""


class Functions:
    """Functions of a namespace. A function's trigger on each input (named
    ``tenant.namespace.name``) is made with it, changed with it and deleted with it; its
    counters, state and stats are deleted with it. ``control``: its status, stats,
    stop/start/restart and trigger."""

    def __init__(
        self,
        store: FunctionStore,
        state: FunctionStateStore,
        triggers: Triggers,
        topics: Topics,
        runtime: Runtime,
        max_attempts: int = 16,
        producer: Producer | None = None,
    ) -> None:
        self._store = store
        self._state = state
        self._triggers = triggers
        self._topics = topics
        self._runtime = runtime
        self._max_attempts = max_attempts
        self.stats = FunctionStats(state, runtime.now_ms)
        self.control = FunctionControl(self.get, triggers, topics, self.stats, runtime, producer)

    def put(self, tenant: str, namespace: str, name: str, body: object, role: str | None = None,
            *, replace: bool = True) -> tuple[FunctionConfig, bool]:  # fmt: skip
        """Create or replace function ``tenant/namespace/name`` from the request ``body``,
        run as ``role`` (the caller's; None: authentication is off); returns it and whether
        it is new. ``replace=False`` (Pulsar's register): an existing function is Conflict
        "Function ... already exists", unless it is this very definition and role (a
        retried or rerun register: answered as it is, nothing written). Input topics that
        do not exist are created
        (non-partitioned, as Pulsar's auto-creation). Raises InvalidMessage (naming the bad
        field; nothing stored), InvalidTopicName, TopicNotFound (the namespace does not
        exist), Conflict (an input has a subscription of the trigger's name that is not a
        trigger's), ServiceUnitNotReady (changed meanwhile)."""
        config = FunctionConfig.parse(tenant, namespace, name, body).with_role(role)
        TriggerSpec.parse(config.trigger_body())  # its triggers' bodies are valid too
        if not replace and (kept := self._registered(config)) is not None:
            return kept, False
        for topic in config.inputs:
            self._ensure_topic(TopicName.parse(topic))
        previous = self._store.get(tenant, namespace, name)
        paused = previous is not None and not self.control.running(previous)  # stays stopped
        stored, created = self._write(config, replace)
        try:
            for topic in config.inputs:
                self._triggers.put(TopicName.parse(topic), config.trigger_name, config.trigger_body(paused))  # fmt: skip
        except BaseException:
            if created:  # a new function whose triggers cannot be made is not kept
                for topic in config.inputs:
                    self._delete_trigger(topic, config.trigger_name)
                with contextlib.suppress(ConditionFailed):
                    self._store.delete(stored)
            raise
        if previous is not None:
            for gone in set(previous.inputs) - set(config.inputs):
                self._delete_trigger(gone, previous.trigger_name)
        return stored, created

    def _ensure_topic(self, topic: TopicName) -> None:
        try:
            self._topics.get(topic)
        except TopicNotFound:
            self._topics.resolve(topic, create=True)

    def _registered(self, config: FunctionConfig) -> FunctionConfig | None:
        """Of a register: the stored function when it is ``config`` (None when there is
        none); raises Conflict when another definition has the name."""
        current = self._store.get(config.tenant, config.namespace, config.name)
        if current is None:
            return None
        if current.with_version(0) != config.with_version(0):
            raise Conflict(f"Function {config.fqfn} already exists")
        return current

    def _write(self, config: FunctionConfig, replace: bool = True) -> tuple[FunctionConfig, bool]:
        def read() -> FunctionConfig | None:
            return self._store.get(config.tenant, config.namespace, config.name)

        def change(
            current: FunctionConfig | None,
        ) -> tuple[tuple[FunctionConfig, bool], FunctionConfig]:
            if current is not None and not replace:  # registered meanwhile
                raise Conflict(f"Function {config.fqfn} already exists")
            version = current.version if current else 0
            return (config.with_version(version + 1), current is None), config.with_version(version)

        outcome = optimistic.update(
            read, change, self._store.put, self._runtime, self._max_attempts
        )
        if isinstance(outcome, optimistic.Conflict):
            raise ServiceUnitNotReady(f"Function {config.fqfn} is being changed by others; retry")
        return outcome

    def get(self, tenant: str, namespace: str, name: str) -> FunctionConfig:
        """The function; raises NotFound, InvalidTopicName."""
        check_namespace(tenant, namespace)
        config = self._store.get(tenant, namespace, name)
        if config is None:
            raise NotFound(f"Function {tenant}/{namespace}/{name} does not exist")
        return config

    def names(self, tenant: str, namespace: str) -> list[str]:
        """The namespace's function names, sorted; raises InvalidTopicName."""
        check_namespace(tenant, namespace)
        return [c.name for c in self._store.list(tenant, namespace)]

    def delete(self, tenant: str, namespace: str, name: str) -> None:
        """Delete the function: its triggers (and their subscriptions), its definition, its
        counters and state. Raises NotFound, ServiceUnitNotReady (changed meanwhile)."""
        config = self.get(tenant, namespace, name)
        for topic in config.inputs:
            self._delete_trigger(topic, config.trigger_name)
        try:
            self._store.delete(config)
        except ConditionFailed:
            raise ServiceUnitNotReady(f"Function {config.fqfn} changed meanwhile; retry") from None
        self._state.delete_all(config.fqfn)
        self.stats.forget(config.fqfn)

    # -- counters and state (the routes a function's runner calls as the function's role) --

    def _fqfn(self, tenant: str, namespace: str, name: str, key: str) -> str:
        check_namespace(tenant, namespace)
        check_function_name(name)
        try:
            check_key(key)
        except ValueError as error:
            raise InvalidMessage(str(error)) from None
        return f"{tenant}/{namespace}/{name}"

    def get_state(self, tenant: str, namespace: str, name: str, key: str) -> bytes:
        """The function's state under ``key``; raises NotFound, InvalidMessage."""
        value = self._state.get_state(self._fqfn(tenant, namespace, name, key), key)
        if value is None:
            raise NotFound(f"Function {tenant}/{namespace}/{name} has no state under key {key!r}")  # fmt: skip
        return value

    def put_state(self, tenant: str, namespace: str, name: str, key: str, value: bytes) -> None:
        """Store ``value`` under ``key``; raises InvalidMessage."""
        if len(value) > MAX_STATE_BYTES:
            raise InvalidMessage(f"A state value is at most {MAX_STATE_BYTES} bytes")
        self._state.put_state(self._fqfn(tenant, namespace, name, key), key, value)

    def get_counter(self, tenant: str, namespace: str, name: str, key: str) -> int:
        """The counter under ``key`` (0: never incremented); raises InvalidMessage."""
        return self._state.get_counter(self._fqfn(tenant, namespace, name, key), key)

    def incr_counter(self, tenant: str, namespace: str, name: str, key: str, amount: int) -> int:
        """Add ``amount`` to the counter, atomically; its new value. Raises InvalidMessage."""
        return self._state.incr_counter(self._fqfn(tenant, namespace, name, key), key, amount)

    def del_counter(self, tenant: str, namespace: str, name: str, key: str) -> None:
        """Forget the counter; raises InvalidMessage."""
        self._state.del_counter(self._fqfn(tenant, namespace, name, key), key)

    def _delete_trigger(self, topic: str, trigger: str) -> None:
        with contextlib.suppress(NotFound, TopicNotFound):
            self._triggers.delete(TopicName.parse(topic), trigger)
