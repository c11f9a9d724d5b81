"""Topic names: ``{persistent|non-persistent}://tenant/namespace/topic`` and short forms.

A short name ``t`` means ``persistent://public/default/t``; ``tenant/ns/t`` means
``persistent://tenant/ns/t``. A partition of a partitioned topic is ``<topic>-partition-<i>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote

from .exceptions import InvalidTopicName

__all__ = ["TopicName", "parse_topic"]

_DOMAINS = ("persistent", "non-persistent")
_NAMED = re.compile(r"[A-Za-z0-9_.:=-]+")  # Pulsar's tenant / namespace characters
_PARTITION = re.compile(r"^(.*)-partition-([0-9]+)$")
_HINT = "expected 'persistent://tenant/namespace/topic' or a short name like 'my-topic'"


@dataclass(frozen=True)
class TopicName:
    """A parsed, fully qualified topic name."""

    domain: str
    tenant: str
    namespace: str
    local_name: str

    def __str__(self) -> str:
        return f"{self.domain}://{self.tenant}/{self.namespace}/{self.local_name}"

    @property
    def partition_index(self) -> int:
        """The partition number of a ``-partition-<i>`` name, else -1."""
        m = _PARTITION.match(self.local_name)
        return int(m.group(2)) if m else -1

    def partition(self, index: int) -> TopicName:
        """The name of partition ``index`` of this topic."""
        return TopicName(
            self.domain, self.tenant, self.namespace, f"{self.local_name}-partition-{index}"
        )

    def path(self) -> str:
        """URL path segment ``{domain}/{tenant}/{namespace}/{topic}`` (percent-encoded)."""
        parts = (self.domain, self.tenant, self.namespace, self.local_name)
        return "/".join(quote(p, safe="") for p in parts)


def parse_topic(topic: str) -> TopicName:
    """Parse and validate ``topic``.

    Raises:
        InvalidTopicName: the name is empty or malformed.
    """
    if not isinstance(topic, str) or not topic or topic != topic.strip():
        raise InvalidTopicName(f"Invalid topic name {topic!r}: {_HINT}")
    domain, sep, rest = topic.partition("://")
    if not sep:
        domain, rest = "persistent", topic
        parts = rest.split("/")
        if len(parts) == 1:
            parts = ["public", "default", parts[0]]
    else:
        parts = rest.split("/")
    if domain not in _DOMAINS:
        raise InvalidTopicName(
            f"Invalid topic name {topic!r}: domain must be 'persistent' or 'non-persistent'"
        )
    if len(parts) != 3:
        raise InvalidTopicName(f"Invalid topic name {topic!r}: {_HINT}")
    tenant, namespace, local = parts
    for what, value in (("tenant", tenant), ("namespace", namespace)):
        if not _NAMED.fullmatch(value):
            raise InvalidTopicName(
                f"Invalid topic name {topic!r}: {what} {value!r} may only use letters, "
                "digits and - _ . : ="
            )
    if not local or any(c.isspace() or ord(c) < 32 for c in local) or "%" in local:
        raise InvalidTopicName(
            f"Invalid topic name {topic!r}: the local name must be non-empty, without "
            "spaces, control characters or '%'"
        )
    return TopicName(domain, tenant, namespace, local)
