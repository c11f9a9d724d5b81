"""Backlog quotas and rate limits with Pulsar's bodies and validation (issue 14).

``BacklogQuota`` {limitSize, limitTime, policy}, ``PublishRate`` {publishThrottlingRateInMsg,
publishThrottlingRateInByte}, ``DispatchRate`` {dispatchThrottlingRateInMsg,
dispatchThrottlingRateInByte, ratePeriodInSecond, relativeToPublishRate} and
``SubscribeRate`` {subscribeThrottlingRatePerConsumer, ratePeriodInSecond}; ``QuotaPolicies``
holds a namespace's or a topic's set of them (stored as one JSON document). A rate of 0 or -1
is no limit, as in Pulsar. Every ``from_body`` raises InvalidMessage naming the field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from magnetar_core.domain.errors import InvalidMessage, PreconditionFailed
from magnetar_core.domain.retention import (
    INT32_MAX,
    INT64_MAX,
    RetentionPolicies,
    integer,
    only_fields,
)

DESTINATION_STORAGE = "destination_storage"
MESSAGE_AGE = "message_age"
BACKLOG_QUOTA_TYPES = (DESTINATION_STORAGE, MESSAGE_AGE)
HOLD = "producer_request_hold"
EXCEPTION = "producer_exception"
EVICTION = "consumer_backlog_eviction"
BACKLOG_POLICIES = (HOLD, EXCEPTION, EVICTION)


@dataclass(frozen=True)
class BacklogQuota:
    """Pulsar's BacklogQuota: at most ``limit_size_bytes`` of backlog (destination_storage)
    or messages at most ``limit_time_s`` old (message_age); -1 is no limit. ``policy`` says
    what happens beyond it: hold the producer, refuse it, or evict the oldest backlog."""

    limit_size_bytes: int = -1
    limit_time_s: int = -1
    policy: str = HOLD

    @classmethod
    def from_body(cls, body: object) -> BacklogQuota:
        """Parse ``{"limitSize": bytes, "limitTime": s, "policy": name}`` (``limit``, the
        deprecated name of limitSize, is taken too); raises InvalidMessage."""
        names = ("limit", "limitSize", "limitTime", "policy")
        fields = only_fields(body, names, "BacklogQuota")
        context = "Invalid backlog quota: "
        size = fields.get("limitSize", fields.get("limit", -1))
        size = integer(size, "limitSize", -1, INT64_MAX, context)
        seconds = integer(fields.get("limitTime", -1), "limitTime", -1, INT32_MAX, context)
        policy = fields.get("policy")
        if policy not in BACKLOG_POLICIES:
            raise InvalidMessage(
                f"{context}'policy' must be one of {list(BACKLOG_POLICIES)}, not {policy!r}"
            )
        return cls(size, seconds, str(policy))

    def to_body(self) -> dict:
        return {
            "limitSize": self.limit_size_bytes,
            "limitTime": self.limit_time_s,
            "policy": self.policy,
        }


@dataclass(frozen=True)
class PublishRate:
    """Pulsar's PublishRate: messages and bytes a topic takes per second (<= 0: no limit)."""

    msgs_per_s: int = -1
    bytes_per_s: int = -1

    @classmethod
    def from_body(cls, body: object) -> PublishRate:
        """Parse ``{"publishThrottlingRateInMsg": int, "publishThrottlingRateInByte": int}``
        (absent: -1); raises InvalidMessage."""
        m, b = "publishThrottlingRateInMsg", "publishThrottlingRateInByte"
        fields = only_fields(body, (m, b), "PublishRate")
        context = "Invalid publish rate: "
        return cls(
            integer(fields.get(m, -1), m, -1, INT32_MAX, context),
            integer(fields.get(b, -1), b, -1, INT64_MAX, context),
        )

    def to_body(self) -> dict:
        return {
            "publishThrottlingRateInMsg": self.msgs_per_s,
            "publishThrottlingRateInByte": self.bytes_per_s,
        }


@dataclass(frozen=True)
class DispatchRate:
    """Pulsar's DispatchRate: messages and bytes dispatched per ``period_s`` seconds (<= 0:
    no limit). ``relative_to_publish_rate`` is stored and answered, not applied."""

    msgs_per_period: int = -1
    bytes_per_period: int = -1
    period_s: int = 1
    relative_to_publish_rate: bool = False

    @classmethod
    def from_body(cls, body: object) -> DispatchRate:
        """Parse Pulsar's DispatchRate body (absent rates -1, period 1 s); raises
        InvalidMessage."""
        m, b, p, r = (
            "dispatchThrottlingRateInMsg",
            "dispatchThrottlingRateInByte",
            "ratePeriodInSecond",
            "relativeToPublishRate",
        )
        fields = only_fields(body, (m, b, p, r), "DispatchRate")
        context = "Invalid dispatch rate: "
        relative = fields.get(r, False)
        if not isinstance(relative, bool):
            raise InvalidMessage(f"{context}'{r}' must be true or false, not {relative!r}")
        return cls(
            integer(fields.get(m, -1), m, -1, INT32_MAX, context),
            integer(fields.get(b, -1), b, -1, INT64_MAX, context),
            integer(fields.get(p, 1), p, 1, INT32_MAX, context),
            relative,
        )

    def to_body(self) -> dict:
        return {
            "dispatchThrottlingRateInMsg": self.msgs_per_period,
            "dispatchThrottlingRateInByte": self.bytes_per_period,
            "ratePeriodInSecond": self.period_s,
            "relativeToPublishRate": self.relative_to_publish_rate,
        }


@dataclass(frozen=True)
class SubscribeRate:
    """Pulsar's SubscribeRate: subscribes per consumer per ``period_s`` (<= 0: no limit)."""

    per_consumer: int = -1
    period_s: int = 30

    @classmethod
    def from_body(cls, body: object) -> SubscribeRate:
        """Parse ``{"subscribeThrottlingRatePerConsumer": int, "ratePeriodInSecond": s}``
        (absent: -1 and 30 s); raises InvalidMessage."""
        c, p = "subscribeThrottlingRatePerConsumer", "ratePeriodInSecond"
        fields = only_fields(body, (c, p), "SubscribeRate")
        context = "Invalid subscribe rate: "
        return cls(
            integer(fields.get(c, -1), c, -1, INT32_MAX, context),
            integer(fields.get(p, 30), p, 1, INT32_MAX, context),
        )

    def to_body(self) -> dict:
        return {
            "subscribeThrottlingRatePerConsumer": self.per_consumer,
            "ratePeriodInSecond": self.period_s,
        }


RATE_KINDS: dict[str, Any] = {
    "publish_rate": PublishRate,
    "dispatch_rate": DispatchRate,
    "subscription_dispatch_rate": DispatchRate,
    "subscribe_rate": SubscribeRate,
}
"""The rate fields of QuotaPolicies and their value types."""


@dataclass(frozen=True)
class QuotaPolicies:
    """A namespace's or topic's backlog quotas (by type) and rates; None: not set here."""

    backlog_quotas: tuple[tuple[str, BacklogQuota], ...] = ()
    publish_rate: PublishRate | None = None
    dispatch_rate: DispatchRate | None = None
    subscription_dispatch_rate: DispatchRate | None = None
    subscribe_rate: SubscribeRate | None = None

    def backlog_quota(self, quota_type: str) -> BacklogQuota | None:
        return dict(self.backlog_quotas).get(quota_type)

    def backlog_map(self) -> dict:
        """Pulsar's backlogQuotaMap body: ``{type: BacklogQuota}``."""
        return {t: q.to_body() for t, q in self.backlog_quotas}

    def with_backlog_quota(self, quota_type: str, quota: BacklogQuota | None) -> QuotaPolicies:
        kept = {t: q for t, q in self.backlog_quotas if t != quota_type}
        if quota is not None:
            kept[quota_type] = quota
        return replace(self, backlog_quotas=tuple(sorted(kept.items())))

    def over(self, base: QuotaPolicies | None) -> QuotaPolicies:
        """These settings, each falling back to ``base``'s where unset (topic over namespace)."""
        if base is None:
            return self
        quotas = dict(base.backlog_quotas) | dict(self.backlog_quotas)
        rates = {k: getattr(self, k) if getattr(self, k) is not None else getattr(base, k)
                 for k in RATE_KINDS}  # fmt: skip
        return QuotaPolicies(tuple(sorted(quotas.items())), **rates)

    def is_empty(self) -> bool:
        return self == QuotaPolicies()

    def to_json(self) -> str:
        """A compact JSON document of what is set (the stored form)."""
        doc: dict[str, Any] = {"backlog": self.backlog_map()} if self.backlog_quotas else {}
        for kind in RATE_KINDS:
            value = getattr(self, kind)
            if value is not None:
                doc[kind] = value.to_body()
        return json.dumps(doc, separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> QuotaPolicies:
        """The policies stored by ``to_json``."""
        doc = json.loads(text)
        quotas = tuple(
            sorted((t, BacklogQuota.from_body(b)) for t, b in doc.get("backlog", {}).items())
        )
        rates = {k: RATE_KINDS[k].from_body(doc[k]) for k in RATE_KINDS if k in doc}
        return cls(quotas, **rates)


def backlog_quota_type(value: str | None) -> str:
    """The ``backlogQuotaType`` query parameter (default destination_storage); raises
    InvalidMessage."""
    if value is None or value == "":
        return DESTINATION_STORAGE
    if value not in BACKLOG_QUOTA_TYPES:
        raise InvalidMessage(
            f"backlogQuotaType must be one of {list(BACKLOG_QUOTA_TYPES)}, not {value!r}"
        )
    return value


def check_within_retention(
    quota: BacklogQuota, retention: RetentionPolicies | None, where: str
) -> None:
    """Pulsar's rule: a backlog quota may not reach the retention (size in bytes against
    retentionSizeInMB, time in seconds against retentionTimeInMinutes), where each is set
    (> 0). Raises PreconditionFailed (412) naming ``where`` ("namespace", "topic")."""
    if retention is None:
        return
    size_mb, minutes = retention.retention_size_mb, retention.retention_time_minutes
    too_big = size_mb > 0 and quota.limit_size_bytes >= size_mb * 1024 * 1024
    too_old = minutes > 0 and quota.limit_time_s >= minutes * 60
    if too_big or too_old:
        raise PreconditionFailed(
            f"Backlog Quota exceeds configured retention quota for {where}. "
            "Please increase retention quota and retry"
        )


def check_retention_covers(
    quotas: QuotaPolicies | None, retention: RetentionPolicies, where: str
) -> None:
    """Pulsar's 412 for a retention set below a backlog quota already set on ``where``."""
    for _, quota in quotas.backlog_quotas if quotas is not None else ():
        try:
            check_within_retention(quota, retention, where)
        except PreconditionFailed:
            raise PreconditionFailed(
                f"Retention Quota must exceed configured backlog quota for {where}"
            ) from None
