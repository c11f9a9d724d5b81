"""Topic names: ``{persistent|non-persistent}://tenant/namespace/topic`` and partitions.

One definition for the SDK and the service. A short name ``t`` means
``persistent://public/default/t``; a partition of a partitioned topic is
``<topic>-partition-<i>``. Tenant, namespace and topic may only hold letters, digits and
``- _ = : .``. Every rule broken raises ``InvalidTopicName`` (HTTP 400) saying what is wrong.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote

from .errors import InvalidTopicName

__all__ = [
    "DOMAINS",
    "PARTITION_SUFFIX",
    "InvalidTopicName",
    "TopicName",
    "check_namespace",
    "check_tenant",
]

DOMAINS = ("persistent", "non-persistent")
PARTITION_SUFFIX = "-partition-"
_PART = re.compile(r"^[A-Za-z0-9_=:.\-]+$")
_PARTITION = re.compile(r"^(?P<base>.+)-partition-(?P<index>0|[1-9][0-9]*)$")


_INDEXISH = re.compile(r"^-?[0-9]+$")
MAX_PARTITION_INDEX = 2**31 - 1
"""Pulsar's partition index is a Java int."""


def _check_part(kind: str, value: str, full: str) -> None:
    if not value or not _PART.fullmatch(value):
        raise InvalidTopicName(
            f"Invalid topic name '{full}': the {kind} '{value}' may only hold letters, digits "
            "and - _ = : . (use persistent://tenant/namespace/topic or a short name)"
        )
    if value in (".", ".."):
        raise InvalidTopicName(f"Invalid topic name '{full}': the {kind} may not be '{value}'")


def _check_partition_suffix(local: str, full: str) -> None:
    """A ``-partition-<n>`` suffix must name a partition index 0..2^31-1 (no sign, no
    leading zero); other text after ``-partition-`` (``my-partition-key``) is a plain name."""
    _, sep, suffix = local.rpartition(PARTITION_SUFFIX)
    if not sep or not _INDEXISH.fullmatch(suffix):
        return
    if not _PARTITION.fullmatch(local) or int(suffix) > MAX_PARTITION_INDEX:
        raise InvalidTopicName(
            f"Invalid topic name '{full}': '{PARTITION_SUFFIX}{suffix}' is not a partition "
            f"index (0 to {MAX_PARTITION_INDEX}, no sign or leading zero)"
        )


def check_tenant(tenant: str) -> None:
    """Raise InvalidTopicName unless ``tenant`` is a valid tenant name (a topic name's tenant
    part)."""
    _check_part("tenant", tenant, tenant)


def check_namespace(tenant: str, namespace: str) -> None:
    """Raise InvalidTopicName unless ``tenant/namespace`` is a valid namespace name (the rules
    of a topic name's tenant and namespace parts)."""
    full = f"{tenant}/{namespace}"
    _check_part("tenant", tenant, full)
    _check_part("namespace", namespace, full)


@dataclass(frozen=True, order=True)
class TopicName:
    """A parsed topic name. ``local`` may be a partition name such as ``t-partition-3``."""

    domain: str
    tenant: str
    namespace: str
    local: str

    @classmethod
    def parse(cls, text: str) -> TopicName:
        """Parse a full or short topic name; raises InvalidTopicName with what is wrong."""
        if not isinstance(text, str) or not text:
            raise InvalidTopicName("Invalid topic name: it is empty")
        if "://" in text:
            domain, _, rest = text.partition("://")
            if domain not in DOMAINS:
                raise InvalidTopicName(
                    f"Invalid topic name '{text}': the domain must be persistent or non-persistent"
                )
            parts = rest.split("/")
            if len(parts) != 3:
                raise InvalidTopicName(
                    f"Invalid topic name '{text}': expected {domain}://tenant/namespace/topic"
                )
            tenant, namespace, local = parts
        elif "/" in text:
            raise InvalidTopicName(
                f"Invalid topic name '{text}': a short name has no '/'; "
                "give persistent://tenant/namespace/topic"
            )
        else:
            domain, tenant, namespace, local = "persistent", "public", "default", text
        return cls.of(domain, tenant, namespace, local)

    @classmethod
    def of(cls, domain: str, tenant: str, namespace: str, local: str) -> TopicName:
        """Build and validate a name from its parts (as they come from an HTTP path)."""
        full = f"{domain}://{tenant}/{namespace}/{local}"
        if domain not in DOMAINS:
            raise InvalidTopicName(
                f"Invalid topic name '{full}': the domain must be persistent or non-persistent"
            )
        _check_part("tenant", tenant, full)
        _check_part("namespace", namespace, full)
        _check_part("topic", local, full)
        _check_partition_suffix(local, full)
        return cls(domain, tenant, namespace, local)

    def __str__(self) -> str:
        return f"{self.domain}://{self.tenant}/{self.namespace}/{self.local}"

    @property
    def namespace_name(self) -> str:
        """``domain://tenant/namespace``: the key that groups a namespace's topics."""
        return f"{self.domain}://{self.tenant}/{self.namespace}"

    @property
    def persistent(self) -> bool:
        return self.domain == "persistent"

    @property
    def partition_index(self) -> int:
        """The partition number when this names a partition, else -1."""
        match = _PARTITION.fullmatch(self.local)
        return int(match["index"]) if match else -1

    @property
    def base(self) -> TopicName:
        """The partitioned topic this partition belongs to (itself when not a partition)."""
        match = _PARTITION.fullmatch(self.local)
        if not match:
            return self
        return TopicName(self.domain, self.tenant, self.namespace, match["base"])

    def partition(self, index: int) -> TopicName:
        """The name of partition ``index`` of this topic."""
        return TopicName(
            self.domain, self.tenant, self.namespace, f"{self.local}{PARTITION_SUFFIX}{index}"
        )

    def path(self) -> str:
        """The HTTP API's path segments ``{domain}/{tenant}/{namespace}/{topic}``, each
        percent-encoded."""
        parts = (self.domain, self.tenant, self.namespace, self.local)
        return "/".join(quote(p, safe="") for p in parts)
