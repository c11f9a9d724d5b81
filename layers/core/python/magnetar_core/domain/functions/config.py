"""A Pulsar Function's definition (the body of ``PUT /admin/v3/functions/{tenant}/
{namespace}/{name}``) as a validated value, Pulsar's FunctionConfig field names.

Body: ``{"className": "module.Class", "code": "<the .py file's text>", "inputs": [topic,
...], "output": topic, "userConfig": {...}, "subscriptionPosition": "Latest" | "Earliest",
"maxMessageRetries": n, "deadLetterTopic": topic, "batchSize": n}``. Every check names the
field it refuses (InvalidMessage, 400), so a bad body stores nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from magnetar_core.domain.errors import InvalidMessage, MagnetarError
from magnetar_wire.errors import InvalidTopicName
from magnetar_wire.names import TopicName, check_namespace

MAX_CODE_BYTES = 256 * 1024
"""A function's source, stored with its definition (a DynamoDB item holds 400 KB)."""
MAX_USER_CONFIG_BYTES = 16 * 1024
MAX_INPUTS = 10
_NAME = re.compile(r"^[A-Za-z0-9_\-]{1,64}$")
_CLASS = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_FIELDS = {
    "className", "code", "inputs", "output", "userConfig", "subscriptionPosition",
    "maxMessageRetries", "deadLetterTopic", "batchSize",
}  # fmt: skip


def _bad(name: str, why: str) -> MagnetarError:
    return InvalidMessage(f"Field '{name}' {why}")


def check_function_name(name: str) -> None:
    """A function's name: 1 to 64 letters, digits, ``_`` or ``-``. Raises InvalidMessage."""
    if not _NAME.match(name or ""):
        raise InvalidMessage(
            f"Function name {name[:64]!r} is invalid: use 1 to 64 letters, digits, _ or -"
        )


def _topic(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise _bad(name, "must be a topic name")
    try:
        topic = TopicName.parse(value)
    except InvalidTopicName as exc:
        raise _bad(name, f"is not a valid topic name: {exc.message}") from None
    if not topic.persistent or topic.partition_index >= 0:
        raise _bad(name, "must be a persistent topic (a partitioned topic by its base name)")
    return str(topic)


def _inputs(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_INPUTS:
        raise _bad("inputs", f"must be a list of 1 to {MAX_INPUTS} topic names")
    topics = tuple(_topic("inputs", v) for v in value)
    if len(set(topics)) != len(topics):
        raise _bad("inputs", "names a topic twice")
    return topics


def _code(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _bad("code", "must be the function's Python source text")
    if len(value.encode()) > MAX_CODE_BYTES:
        raise _bad("code", f"is larger than {MAX_CODE_BYTES} bytes")
    try:
        compile(value, "<function code>", "exec")  # parsed only: nothing runs here
    except (SyntaxError, ValueError) as error:
        where = f" (line {error.lineno})" if isinstance(error, SyntaxError) else ""
        raise _bad(
            "code", f"is not valid Python{where}: {error.args[0] if error.args else error}"
        ) from None
    return value


def _user_config(value: object) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _bad("userConfig", "must be a JSON object")
    if len(json.dumps(value).encode()) > MAX_USER_CONFIG_BYTES:
        raise _bad("userConfig", f"is larger than {MAX_USER_CONFIG_BYTES} bytes")
    return dict(value)


def _optional_int(body: Mapping[str, Any], name: str, low: int, high: int) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _bad(name, f"must be an integer from {low} to {high}")
    return value


@dataclass(frozen=True)
class FunctionConfig:
    """A function ``tenant/namespace/name``: its class (``module.Class`` of ``code``), input
    topics, output topic (None: results are dropped), user config, subscription position,
    retries before the dead letter topic (None: retried forever), batch size in messages
    (1 by default, as Pulsar runs a function per message: a failed message fails the rest
    of its batch, which then spend a retry too), and its stored ``version`` (0: not stored
    yet), and the ``role`` it runs as."""

    tenant: str
    namespace: str
    name: str
    class_name: str
    code: str = field(repr=False)
    inputs: tuple[str, ...]
    output: str | None = None
    user_config: Mapping[str, Any] = field(default_factory=dict)
    subscription_position: str = "Latest"
    max_message_retries: int | None = None
    dead_letter_topic: str | None = None
    batch_size: int = 1
    version: int = 0
    role: str | None = None
    """The role that created or last replaced it (None: authentication was off): its
    batches run with this role's rights (a short-lived token minted per batch), never the
    service's. Set by the service from the caller, never from the body."""

    @classmethod
    def parse(cls, tenant: str, namespace: str, name: str, body: object) -> FunctionConfig:
        """The function from its request body; raises InvalidMessage naming the first bad
        field, InvalidTopicName for a bad tenant or namespace."""
        check_namespace(tenant, namespace)
        check_function_name(name)
        if not isinstance(body, Mapping):
            raise InvalidMessage("The body must be a JSON object with className, code, inputs")
        unknown = sorted(set(body) - _FIELDS)
        if unknown:
            raise _bad(unknown[0], f"is unknown: a function takes {', '.join(sorted(_FIELDS))}")
        for required in ("className", "code", "inputs"):
            if required not in body:
                raise _bad(required, "is required")
        class_name = body["className"]
        if not isinstance(class_name, str) or not _CLASS.match(class_name):
            raise _bad("className", "must be module.Class or module.function (the .py file's "
                       "name, then the name in it), or module (its process function)")  # fmt: skip
        position = body.get("subscriptionPosition", "Latest")
        if position not in ("Latest", "Earliest"):
            raise _bad("subscriptionPosition", "must be Latest or Earliest")
        output = body.get("output")
        dead_letter = body.get("deadLetterTopic")
        retries = _optional_int(body, "maxMessageRetries", 1, 1000)
        if dead_letter is not None and retries is None:
            raise _bad("deadLetterTopic", "needs maxMessageRetries")
        return cls(
            tenant=tenant,
            namespace=namespace,
            name=name,
            class_name=class_name,
            code=_code(body["code"]),
            inputs=_inputs(body["inputs"]),
            output=None if output is None else _topic("output", output),
            user_config=_user_config(body.get("userConfig")),
            subscription_position=position,
            max_message_retries=retries,
            dead_letter_topic=None
            if dead_letter is None
            else _topic("deadLetterTopic", dead_letter),
            batch_size=_optional_int(body, "batchSize", 1, 1000) or 1,
        )

    @property
    def fqfn(self) -> str:
        """``tenant/namespace/name``: the function's id (Pulsar's fully qualified name)."""
        return f"{self.tenant}/{self.namespace}/{self.name}"

    @property
    def trigger_name(self) -> str:
        """The name of the trigger (and subscription) on each input: ``tenant.namespace.name``
        (Pulsar names a function's subscription after its fully qualified name)."""
        return f"{self.tenant}.{self.namespace}.{self.name}"

    def with_version(self, version: int) -> FunctionConfig:
        return FunctionConfig(**{**self.__dict__, "version": version})

    def with_role(self, role: str | None) -> FunctionConfig:
        """The same function, run as ``role``."""
        return FunctionConfig(**{**self.__dict__, "role": role})

    def to_body(self, with_code: bool = False) -> dict[str, Any]:
        """The body this parses from (the code only ``with_code``: listings leave it out)."""
        body: dict[str, Any] = {
            "tenant": self.tenant,
            "namespace": self.namespace,
            "name": self.name,
            "className": self.class_name,
            "inputs": list(self.inputs),
            "output": self.output,
            "userConfig": dict(self.user_config),
            "subscriptionPosition": self.subscription_position,
            "maxMessageRetries": self.max_message_retries,
            "deadLetterTopic": self.dead_letter_topic,
            "batchSize": self.batch_size,
        }
        if with_code:
            body["code"] = self.code
        return body

    def stored_body(self) -> dict[str, Any]:
        """What the store keeps (``parse`` reads it back): the code, no derived names."""
        body = self.to_body(with_code=True)
        for derived in ("tenant", "namespace", "name"):
            del body[derived]
        return {k: v for k, v in body.items() if v is not None}

    def trigger_body(self, paused: bool = False) -> dict[str, Any]:
        """The body of the trigger on each input (``domain.triggers.spec``): a function
        target, one batch in flight and failed messages retried at once (they come back
        before later ones: results keep the input's order, which effectively-once sequence
        ids need), the output topic and dead letter policy.

        Failover, as Pulsar runs effectively-once functions: one consumer at a time, and a
        new one takes over what a dead one held *before* later messages, so a step that
        dies mid-batch cannot be passed by later messages (their outputs' higher sequence
        ids would make the retried batch's outputs look like duplicates). Shared when
        ``maxMessageRetries`` is set: dead letter topics work on Shared and Key_Shared
        subscriptions only, so such a function keeps that crash window (documented)."""
        body: dict[str, Any] = {
            "target": {"type": "function", "function": self.fqfn},
            "subscriptionType": "Failover" if self.max_message_retries is None else "Shared",
            "maximumConcurrency": 1,
            "initialPosition": self.subscription_position,
            "batchSize": self.batch_size,
            "retry": {"minDelayMs": 0, "maxDelayMs": 0, "multiplier": 1},
        }
        if self.output is not None:
            body["outputTopic"] = self.output
        if self.max_message_retries is not None:
            policy: dict[str, Any] = {"maxRedeliverCount": self.max_message_retries}
            if self.dead_letter_topic is not None:
                policy["deadLetterTopic"] = self.dead_letter_topic
            body["deadLetterPolicy"] = policy
        if paused:  # a stopped function: its triggers keep their backlog
            body["paused"] = True
        return body
