"""Sending one batch of a trigger to its target, bisecting it on error when ordered.

``BatchSender.send`` invokes the target with a batch and sorts its messages by the answer:
acknowledged, failed (to retry: a ``batchItemFailures`` report, or the whole batch on an
error, timeout or non-2xx answer) and held back (unsent, because an earlier message of
their ordering group failed). On an ordered subscription a batch that failed as a whole
is bisected (``domain.triggers.dispatch.halves``) down to the messages that fail alone,
the first half always before the second (Kinesis's ``BisectBatchOnFunctionError``, with
Pulsar's per-key order kept). It runs in a delivery step's worker threads: it touches only
the target, never the subscription.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from magnetar_core.domain.triggers.dispatch import halves, without_groups
from magnetar_core.domain.triggers.records import (
    TargetFailed,
    TriggerRecord,
    batch_body,
    failed_items,
)
from magnetar_core.domain.triggers.spec import Target
from magnetar_core.ports import TriggerTarget

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Item:
    """A received message of a step: its record, the index of its partition among the
    step's partitions, and its ordering group (``DispatchPolicy.group_of``)."""

    record: TriggerRecord
    part: int
    group: Hashable | None

    @property
    def message_id(self) -> str:
        return self.record.message_id


@dataclass
class BatchResult:
    """How a batch's messages came out: acknowledged, failed (retry, count + 1) and held
    back unsent (their group failed earlier; handed back with their count unchanged).
    ``invocations`` counts the target calls it took (1, more when bisected)."""

    acked: list[Item] = field(default_factory=list)
    failed: list[Item] = field(default_factory=list)
    held: list[Item] = field(default_factory=list)
    invocations: int = 0

    def __add__(self, other: BatchResult) -> BatchResult:
        return BatchResult(
            self.acked + other.acked,
            self.failed + other.failed,
            self.held + other.held,
            self.invocations + other.invocations,
        )

    def blocked_groups(self) -> set[Hashable]:
        """The ordering groups with a failed or held message (None, Shared's, excluded)."""
        return {i.group for i in self.failed + self.held if i.group is not None}


class BatchSender:
    """Sends batches of one trigger's ``target`` (``now_ms`` stamps each request), with
    bisect on error when ``ordered``."""

    def __init__(
        self,
        invoker: TriggerTarget,
        target: Target,
        ordered: bool,
        now_ms: Callable[[], int],
    ) -> None:
        self._invoker = invoker
        self._target = target
        self._ordered = ordered
        self._now_ms = now_ms

    def send(self, batch: list[Item]) -> BatchResult:
        """Send ``batch`` (see the module); never raises for a target's failure."""
        if not batch:
            return BatchResult()
        failed = self._invoke(batch)
        if failed is not None:
            return BatchResult(
                acked=[i for i in batch if i.message_id not in failed],
                failed=[i for i in batch if i.message_id in failed],
                invocations=1,
            )
        if not self._ordered or len(batch) < 2:
            return BatchResult(failed=list(batch), invocations=1)
        first, second = halves(batch)
        before = self.send(first)
        go, hold = without_groups(second, before.blocked_groups(), lambda i: i.group)
        after = self.send(go)
        return BatchResult(invocations=1) + before + after + BatchResult(held=hold)

    def _invoke(self, batch: list[Item]) -> set[str] | None:
        """The ids the answer reports failed, or None when the whole batch failed."""
        ids = [i.message_id for i in batch]
        body = batch_body([i.record for i in batch])
        try:
            answer = self._invoker.invoke(self._target, body, self._now_ms())
        except TargetFailed as failure:
            # the batch is retried; said each time, so a target that cannot work is seen
            log.warning("Trigger batch of %d messages failed, retried: %s", len(ids), failure)
            return None
        return failed_items(answer, ids)
