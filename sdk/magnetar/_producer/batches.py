"""Batch containers of one partition, with Pulsar's limits and grouping.

``Default`` is Pulsar's ``BatchMessageContainerImpl``: one open batch. ``KeyBased`` is
``BatchMessageKeyBasedContainer``: one batch per key (the ordering key when set, else the
partition key; keyless messages form their own batch), the limits counting the container as a
whole, and every key's batch sent together, in the order of their first sequence ids.

Limits, exactly as Pulsar checks them (``maxBytes``/``maxMessages`` <= 0 means no limit):

- room for a message: the container is empty, or ``count < maxMessages`` and ``bytes + size <=
  maxBytes`` (``maxMessageSize`` when ``maxBytes`` <= 0); otherwise the open batches go first;
- full after adding: ``bytes >= maxBytes`` (or ``maxMessageSize``) or ``count >= maxMessages``;
- the batches go at the latest ``batching_max_publish_delay_ms`` after their first message.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Batch", "BatchContainer", "BatchLimits", "Pending"]


@dataclass
class Pending:
    """One queued message: ``EntryMessage`` fields, payload size, completion, send deadline."""

    fields: dict[str, Any]
    size: int
    done: Callable[..., None]
    deadline: float | None = None  # time.monotonic() by which it must be stored (send timeout)


@dataclass
class Batch:
    """What one entry (or, chunked, one message's entries) is built from."""

    partition: int
    batched: bool
    items: list[Pending] = field(default_factory=list)


@dataclass(frozen=True)
class BatchLimits:
    """``batching_max_messages``, ``batching_max_allowed_size_in_bytes``, the publish delay (s)
    and the topic's ``maxMessageSize``."""

    max_messages: int
    max_bytes: int
    delay: float
    max_message_size: int

    @property
    def byte_limit(self) -> int:
        """The byte limit in force: the batch size limit, else the max message size."""
        return self.max_bytes if self.max_bytes > 0 else self.max_message_size


def batch_key(fields: dict[str, Any]) -> Any:
    """Pulsar's key of a message for key-based batching: ordering key, else partition key."""
    if fields.get("ordering_key"):
        return ("ordering", fields["ordering_key"])
    return ("key", fields.get("key"))


class BatchContainer:
    """The open batch(es) of one partition (not thread-safe: the sender's lock guards it)."""

    def __init__(self, partition: int, limits: BatchLimits, key_based: bool) -> None:
        self.partition = partition
        self.limits = limits
        self.key_based = key_based
        self.groups: dict[Any, list[Pending]] = {}
        self.count = 0
        self.bytes = 0
        self.deadline: float | None = None

    def has_space(self, item: Pending) -> bool:
        """True when ``item`` fits in the open batches (always when they are empty)."""
        if self.count == 0:
            return True
        lim = self.limits
        return (lim.max_messages <= 0 or self.count < lim.max_messages) and (
            self.bytes + item.size <= lim.byte_limit
        )

    def add(self, item: Pending) -> None:
        """Add ``item`` (call ``has_space`` first); starts the publish-delay clock."""
        if self.count == 0:
            self.deadline = time.monotonic() + self.limits.delay
        key = batch_key(item.fields) if self.key_based else None
        self.groups.setdefault(key, []).append(item)
        self.count += 1
        self.bytes += item.size

    def is_full(self) -> bool:
        """True when the batches must go now."""
        lim = self.limits
        return self.bytes >= lim.byte_limit or (0 < lim.max_messages <= self.count)

    def drain(self) -> list[Batch]:
        """Take the open batches, ordered by their first message's sequence id."""
        groups = sorted(self.groups.values(), key=lambda g: g[0].fields["sequence_id"])
        self.groups, self.count, self.bytes, self.deadline = {}, 0, 0, None
        return [Batch(self.partition, True, items) for items in groups]
