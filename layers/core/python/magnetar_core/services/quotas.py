"""Backlog quotas and rate limits: their administration on namespaces and topics (Pulsar's
``backlogQuota``, ``backlogQuotaMap``, ``publishRate``, ``dispatchRate``,
``subscriptionDispatchRate``, ``subscribeRate``), stored with the other policies
(``NamespacePolicies.quotas``, ``TopicMeta.quotas``), and what applies to a topic.
Enforcement is ``services.throttling``."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from magnetar_core.domain.errors import TopicNotFound
from magnetar_core.domain.quotas import (
    RATE_KINDS,
    BacklogQuota,
    QuotaPolicies,
    backlog_quota_type,
    check_within_retention,
)
from magnetar_core.domain.retention import RetentionPolicies
from magnetar_core.services.namespaces import Namespaces
from magnetar_wire.names import TopicName


class Quotas:
    """Administration and lookup of quotas and rates. Namespace calls raise NotFound (404)
    for an unknown namespace, topic calls TopicNotFound (404); bad bodies InvalidMessage
    (400); a backlog quota reaching the retention PreconditionFailed (412). Nothing changes
    when they raise."""

    def __init__(self, namespaces: Namespaces) -> None:
        self._ns = namespaces

    # ------------------------------------------------------------ what applies
    def applied(self, name: TopicName, *, fresh: bool = False) -> QuotaPolicies:
        """The quotas and rates that apply to ``name`` (a topic or partition): the topic's,
        each falling back to its namespace's (cached per process unless ``fresh``)."""
        ns, topic = self._ns.policies_for(name, fresh=fresh)
        own = topic.quotas if topic is not None else None
        return (own or QuotaPolicies()).over(ns.quotas)

    # ------------------------------------------------------------ namespace level
    def namespace(self, tenant: str, namespace: str) -> QuotaPolicies:
        """The namespace's own settings (fresh read); raises NotFound."""
        return self._ns.get(tenant, namespace).quotas or QuotaPolicies()

    def set_namespace_backlog_quota(
        self, tenant: str, namespace: str, quota_type: str | None, body: object
    ) -> None:
        """Set one backlog quota (``quota_type``: destination_storage by default)."""
        kind, quota = backlog_quota_type(quota_type), BacklogQuota.from_body(body)
        policies = self._ns.get(tenant, namespace)
        check_within_retention(quota, policies.retention, "namespace")
        quotas = (policies.quotas or QuotaPolicies()).with_backlog_quota(kind, quota)
        self._ns.update(tenant, namespace, quotas=quotas)

    def remove_namespace_backlog_quota(
        self, tenant: str, namespace: str, quota_type: str | None
    ) -> None:
        kind = backlog_quota_type(quota_type)
        quotas = self.namespace(tenant, namespace).with_backlog_quota(kind, None)
        self._ns.update(tenant, namespace, quotas=quotas)

    def namespace_rate(self, tenant: str, namespace: str, kind: str) -> Any:
        """The namespace's rate of ``kind`` (a ``RATE_KINDS`` key), None when unset."""
        return getattr(self.namespace(tenant, namespace), kind)

    def set_namespace_rate(self, tenant: str, namespace: str, kind: str, body: object) -> None:
        """Set a rate of ``kind`` from Pulsar's body; raises InvalidMessage, NotFound."""
        rate = RATE_KINDS[kind].from_body(body)
        quotas = _with(self.namespace(tenant, namespace), kind, rate)
        self._ns.update(tenant, namespace, quotas=quotas)

    def remove_namespace_rate(self, tenant: str, namespace: str, kind: str) -> None:
        quotas = _with(self.namespace(tenant, namespace), kind, None)
        self._ns.update(tenant, namespace, quotas=quotas)

    # ------------------------------------------------------------ topic level
    def topic(self, name: TopicName, applied: bool = False) -> QuotaPolicies:
        """The topic's own settings, or with ``applied`` the namespace's where unset (fresh
        reads); raises TopicNotFound."""
        ns, topic = self._ns.policies_for(name, fresh=True)
        if topic is None:
            raise TopicNotFound(f"Topic {name} does not exist")
        own = topic.quotas or QuotaPolicies()
        return own.over(ns.quotas) if applied else own

    def set_topic_backlog_quota(
        self, name: TopicName, quota_type: str | None, body: object
    ) -> None:
        """Set one of the topic's backlog quotas; checked against the retention that applies
        to it (its own, else its namespace's)."""
        kind, quota = backlog_quota_type(quota_type), BacklogQuota.from_body(body)
        ns, topic = self._ns.policies_for(name, fresh=True)
        if topic is None:
            raise TopicNotFound(f"Topic {name} does not exist")
        retention: RetentionPolicies | None = topic.retention or ns.retention
        check_within_retention(quota, retention, "topic")
        quotas = (topic.quotas or QuotaPolicies()).with_backlog_quota(kind, quota)
        self._ns.update_topic(name, quotas=quotas)

    def remove_topic_backlog_quota(self, name: TopicName, quota_type: str | None) -> None:
        kind = backlog_quota_type(quota_type)
        self._ns.update_topic(name, quotas=self.topic(name).with_backlog_quota(kind, None))

    def topic_rate(self, name: TopicName, kind: str, applied: bool = False) -> Any:
        """The topic's rate of ``kind`` (None when unset; with ``applied``, the namespace's
        where the topic sets none)."""
        return getattr(self.topic(name, applied), kind)

    def set_topic_rate(self, name: TopicName, kind: str, body: object) -> None:
        rate = RATE_KINDS[kind].from_body(body)
        self._ns.update_topic(name, quotas=_with(self.topic(name), kind, rate))

    def remove_topic_rate(self, name: TopicName, kind: str) -> None:
        self._ns.update_topic(name, quotas=_with(self.topic(name), kind, None))


def _with(quotas: QuotaPolicies, kind: str, value: Any) -> QuotaPolicies:
    return replace(quotas, **{kind: value})
