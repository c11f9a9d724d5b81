"""A trigger's definition (the body of ``PUT .../triggers/{name}``) as a validated value.

Every check names the field it refuses (InvalidMessage, 400), so a bad body stores nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from magnetar_core.domain.dead_letter import DeadLetterPolicy
from magnetar_core.domain.errors import InvalidMessage, MagnetarError
from magnetar_core.domain.timers import NackBackoff
from magnetar_core.domain.triggers.filters import MessageFilter
from magnetar_wire.errors import InvalidTopicName
from magnetar_wire.names import TopicName

SUBSCRIPTION_TYPES = ("Shared", "Key_Shared", "Failover")
INITIAL_POSITIONS = ("Latest", "Earliest")
BATCH_SIZE = (1, 10_000)
BATCHING_WINDOW_MS = (0, 300_000)
CONCURRENCY = (1, 1000)
MAX_SECRET_BYTES = 1024
MAX_URL_BYTES = 2048
_FIELDS = {
    "target", "subscriptionType", "initialPosition", "batchSize", "maximumBatchingWindowMs",
    "maximumConcurrency", "filter", "retry", "deadLetterPolicy", "outputTopic", "paused",
}  # fmt: skip
_NAME = re.compile(r"^[A-Za-z0-9_=:.\-]{1,256}$")
_FQFN = re.compile(r"^[A-Za-z0-9_=:.\-]{1,256}/[A-Za-z0-9_=:.\-]{1,256}/[A-Za-z0-9_\-]{1,64}$")
_FUNCTION = re.compile(
    r"^(arn:aws[a-zA-Z-]*:lambda:[a-z0-9-]+:\d{12}:function:)?[A-Za-z0-9_-]{1,64}(:[A-Za-z0-9_$-]{1,128})?$"
)


def check_trigger_name(name: str) -> None:
    """A trigger's name, which is also its subscription's: letters, digits and ``_=:.-``,
    1 to 256 characters. Raises InvalidMessage."""
    if not _NAME.match(name or ""):
        raise InvalidMessage(
            f"Trigger name {name[:64]!r} is invalid: use 1 to 256 letters, digits or _=:.-"
        )


def _bad(name: str, why: str) -> MagnetarError:
    return InvalidMessage(f"Field '{name}' {why}")


def _int(body: Mapping[str, Any], name: str, bounds: tuple[int, int], default: int) -> int:
    value = body.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not bounds[0] <= value <= bounds[1]:
        raise _bad(name, f"must be an integer from {bounds[0]} to {bounds[1]}")
    return value


def _choice(body: Mapping[str, Any], name: str, choices: tuple[str, ...]) -> str:
    value = body.get(name, choices[0])
    if value not in choices:
        raise _bad(name, f"must be one of {', '.join(choices)}")
    return value


@dataclass(frozen=True)
class Target:
    """Where a trigger delivers: a Lambda function (name or ARN; locally a registered
    handler), a webhook URL signed with ``secret``, or a Pulsar Function
    (``tenant/namespace/name``, registered through ``/admin/v3/functions``)."""

    type: str
    function: str | None = None
    url: str | None = None
    secret: str | None = field(default=None, repr=False)

    @classmethod
    def parse(cls, raw: object) -> Target:
        """The body's ``target``; raises InvalidMessage naming ``target.<field>``."""
        if not isinstance(raw, Mapping):
            raise _bad("target", 'must be {"type": "lambda", "function": ...} or '
                       '{"type": "webhook", "url": ..., "secret": ...}')  # fmt: skip
        kind = raw.get("type")
        if kind == "lambda":
            if set(raw) - {"type", "function"}:
                raise _bad("target", "of type lambda takes only type and function")
            function = raw.get("function")
            if not isinstance(function, str) or not _FUNCTION.match(function):
                raise _bad("target.function", "must be a Lambda function name or ARN")
            return cls("lambda", function=function)
        if kind == "webhook":
            if set(raw) - {"type", "url", "secret"}:
                raise _bad("target", "of type webhook takes only type, url and secret")
            return cls("webhook", url=_url(raw.get("url")), secret=_secret(raw.get("secret")))
        if kind == "function":
            if set(raw) - {"type", "function"}:
                raise _bad("target", "of type function takes only type and function")
            function = raw.get("function")
            if not isinstance(function, str) or not _FQFN.match(function):
                raise _bad("target.function", "must be a function's tenant/namespace/name")
            return cls("function", function=function)
        raise _bad("target.type", "must be lambda, webhook or function")

    def to_body(self) -> dict[str, Any]:
        """The target as the admin API shows it: the webhook's secret is never shown."""
        if self.type in ("lambda", "function"):
            return {"type": self.type, "function": self.function}
        return {"type": "webhook", "url": self.url}


def _url(value: object) -> str:
    if not isinstance(value, str) or len(value.encode()) > MAX_URL_BYTES:
        raise _bad("target.url", f"must be an http or https URL of at most {MAX_URL_BYTES} bytes")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise _bad("target.url", "must be an http or https URL with a host")
    return value


def _secret(value: object) -> str:
    if not isinstance(value, str) or not 1 <= len(value.encode()) <= MAX_SECRET_BYTES:
        raise _bad("target.secret", f"must be a string of 1 to {MAX_SECRET_BYTES} bytes")
    return value


def _retry(raw: object) -> NackBackoff | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping) or set(raw) - {"minDelayMs", "maxDelayMs", "multiplier"}:
        raise _bad("retry", "must be an object of minDelayMs, maxDelayMs, multiplier")
    low = _int(raw, "minDelayMs", (0, 86_400_000), 1000)
    high = _int(raw, "maxDelayMs", (0, 86_400_000), 60_000)
    multiplier = raw.get("multiplier", 2)
    if isinstance(multiplier, bool) or not isinstance(multiplier, int | float):
        raise _bad("retry.multiplier", "must be a number >= 1")
    try:
        return NackBackoff(low, high, float(multiplier))
    except ValueError as exc:
        raise _bad("retry", f"is invalid: {exc}") from None


def _dead_letter(raw: object) -> DeadLetterPolicy | None:
    try:
        return DeadLetterPolicy.parse(raw)
    except (InvalidMessage, InvalidTopicName) as exc:
        raise _bad("deadLetterPolicy", f"is invalid: {exc.message}") from None


def _output_topic(raw: object) -> str | None:
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise _bad("outputTopic", "must be a topic name")
    try:
        return str(TopicName.parse(raw))
    except InvalidTopicName as exc:
        raise _bad("outputTopic", f"is not a valid topic name: {exc.message}") from None


@dataclass(frozen=True)
class TriggerSpec:
    """A trigger: its target, its subscription (type, initial position), batching (size in
    messages, window in ms), concurrency, filter, retry backoff, dead letter policy and
    output topic (where a Pulsar Function target's results go). A ``paused`` trigger sends
    nothing: its subscription keeps the backlog until it is resumed (a stopped function)."""

    target: Target
    subscription_type: str = "Shared"
    initial_position: str = "Latest"
    batch_size: int = 10
    maximum_batching_window_ms: int = 0
    maximum_concurrency: int = 1
    filter: MessageFilter | None = None
    retry: NackBackoff | None = None
    dead_letter: DeadLetterPolicy | None = None
    output_topic: str | None = None
    paused: bool = False

    @classmethod
    def parse(cls, body: object) -> TriggerSpec:
        """The trigger body; raises InvalidMessage naming the first bad field."""
        if not isinstance(body, Mapping):
            raise InvalidMessage("The body must be a JSON object with at least 'target'")
        unknown = sorted(set(body) - _FIELDS)
        if unknown:
            raise _bad(unknown[0], f"is unknown: a trigger takes {', '.join(sorted(_FIELDS))}")
        if "target" not in body:
            raise _bad("target", "is required")
        if "deadLetterPolicy" in body and body.get("subscriptionType") == "Failover":
            raise _bad("deadLetterPolicy", "is for Shared and Key_Shared triggers only: on "
                       "Failover, as in Pulsar, no message is dead-lettered (a message that "
                       "always fails holds its partition)")  # fmt: skip
        return cls(
            target=Target.parse(body["target"]),
            subscription_type=_choice(body, "subscriptionType", SUBSCRIPTION_TYPES),
            initial_position=_choice(body, "initialPosition", INITIAL_POSITIONS),
            batch_size=_int(body, "batchSize", BATCH_SIZE, 10),
            maximum_batching_window_ms=_int(body, "maximumBatchingWindowMs", BATCHING_WINDOW_MS, 0),
            maximum_concurrency=_int(body, "maximumConcurrency", CONCURRENCY, 1),
            filter=MessageFilter.parse(body.get("filter")),
            retry=_retry(body.get("retry")),
            dead_letter=_dead_letter(body.get("deadLetterPolicy")),
            output_topic=_output_topic(body.get("outputTopic")),
            paused=_paused(body.get("paused", False)),
        )

    @property
    def earliest(self) -> bool:
        return self.initial_position == "Earliest"

    def to_body(self, with_secret: bool = False) -> dict[str, Any]:
        """The body this spec parses from (the webhook secret only ``with_secret``: the
        admin API never shows it, the store keeps it)."""
        target = self.target.to_body()
        if with_secret and self.target.secret is not None:
            target["secret"] = self.target.secret
        body: dict[str, Any] = {
            "target": target,
            "subscriptionType": self.subscription_type,
            "initialPosition": self.initial_position,
            "batchSize": self.batch_size,
            "maximumBatchingWindowMs": self.maximum_batching_window_ms,
            "maximumConcurrency": self.maximum_concurrency,
        }
        if self.filter is not None:
            body["filter"] = dict(self.filter.source)
        if self.retry is not None:
            body["retry"] = {
                "minDelayMs": self.retry.min_delay_ms,
                "maxDelayMs": self.retry.max_delay_ms,
                "multiplier": self.retry.multiplier,
            }
        if self.dead_letter is not None:
            body["deadLetterPolicy"] = _dead_letter_body(self.dead_letter)
        if self.output_topic is not None:
            body["outputTopic"] = self.output_topic
        if self.paused:
            body["paused"] = True
        return body


def _paused(value: object) -> bool:
    if not isinstance(value, bool):
        raise _bad("paused", "must be true or false")
    return value


def _dead_letter_body(policy: DeadLetterPolicy) -> dict[str, Any]:
    body: dict[str, Any] = {"maxRedeliverCount": policy.max_redeliver_count}
    if policy.dead_letter_topic is not None:
        body["deadLetterTopic"] = policy.dead_letter_topic
    if policy.initial_subscription_name is not None:
        body["initialSubscriptionName"] = policy.initial_subscription_name
    return body


@dataclass(frozen=True)
class Trigger:
    """A stored trigger: on ``topic`` (a base topic's full name), named ``name`` (also its
    subscription's name), at ``version`` (0: not stored yet)."""

    topic: str
    name: str
    spec: TriggerSpec
    version: int = 0

    def with_version(self, version: int) -> Trigger:
        return Trigger(self.topic, self.name, self.spec, version)

    def to_body(self) -> dict[str, Any]:
        """The admin API's view (no secret)."""
        return {"name": self.name, "topic": self.topic, **self.spec.to_body()}
