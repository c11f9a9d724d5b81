"""A topic's metadata record (TopicMeta) and its states."""

from __future__ import annotations

from dataclasses import dataclass

from magnetar_core.domain.quotas import QuotaPolicies
from magnetar_core.domain.retention import RetentionPolicies
from magnetar_wire.names import TopicName

ACTIVE = "active"


DELETED = "deleted"


@dataclass(frozen=True)
class TopicMeta:
    """A topic's metadata. ``partitions`` is 0 for a non-partitioned topic; times in ms.

    ``deduplication``, ``retention``, ``message_ttl_seconds`` and ``quotas`` (backlog quotas
    and rates) are the topic-level policy
    overrides (None: the namespace's applies); a tombstone drops them. ``terminated`` holds
    the partitions closed by Pulsar's terminate (-1: the non-partitioned topic itself): no
    producer may commit to them again (their ledgers are fenced).
    """

    name: TopicName
    ledger_id: int
    partitions: int
    state: str
    version: int
    created_ms: int
    deduplication: bool | None = None
    retention: RetentionPolicies | None = None
    message_ttl_seconds: int | None = None
    terminated: frozenset[int] = frozenset()
    quotas: QuotaPolicies | None = None

    def is_terminated(self, partition: int) -> bool:
        """True when partition ``partition`` (-1: the non-partitioned topic) was terminated."""
        return partition in self.terminated

    @property
    def active(self) -> bool:
        return self.state == ACTIVE
