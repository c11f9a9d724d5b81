"""A topic's logs: ``PartitionRef`` names one (a non-partitioned topic or one partition, in
its current ledger), and ``fence_ledger`` closes one when its topic is deleted or expired."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, replace

from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.log import IndexEntry, log_key
from magnetar_core.domain.sequencing import LedgerClosed
from magnetar_core.ports import LogStore
from magnetar_wire.names import TopicName


@dataclass(frozen=True)
class PartitionRef:
    """A concrete log: a non-partitioned topic or one partition, in its current ledger."""

    topic: TopicName
    partition: int
    ledger_id: int

    @property
    def key(self) -> str:
        return log_key(str(self.topic), self.ledger_id)


def fence_ledger(log: LogStore, key: str) -> None:
    """Close the ledger of log key ``key``: take the last id its sequencer hands out and put
    a fence item there (every id before it belongs to a commit in flight or done). Nothing
    to do when it is fenced already: if that fencer died before writing its fence, readers
    settle the id with the fence (``domain.sequencing.settle``)."""
    try:
        taken = log.allocate(key, 1, closes=True)
    except LedgerClosed:
        return
    fence = replace(IndexEntry.fence_at(taken.first_id), allocated_ms=taken.allocated_ms)
    with contextlib.suppress(ConditionFailed):  # settled by a reader first: the same fence
        log.append(key, fence)
