"""One delivery step's state and its dispatch loop (``Step``; see ``delivery`` for the rules).

The step's consumers, one per partition, receive and settle in the calling thread; only the
target invocations (``sending.BatchSender.send``) run in worker threads, up to the
trigger's ``maximumConcurrency``. Settling a batch's result as soon as it comes frees its
ordering groups for the next batch.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Hashable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.triggers.dispatch import DispatchPolicy
from magnetar_core.domain.triggers.records import TriggerRecord
from magnetar_core.domain.triggers.spec import Trigger
from magnetar_core.services.subscriptions import DeliveredEntry, Subscriptions
from magnetar_core.services.topics import PartitionRef
from magnetar_core.services.triggers import CONSUMER_NAME
from magnetar_core.services.triggers.sending import BatchResult, BatchSender, Item

RecordsOf = Callable[[list[DeliveredEntry]], Iterable[TriggerRecord]]
RECEIVE_MAX = 10_000
"""The most messages one receive takes (the subscriptions service's bound)."""


@dataclass(frozen=True)
class _Part:
    ref: PartitionRef
    consumer_id: str


class Step:
    """A step of one trigger: ``receive`` on each partition, then ``run`` once, then
    ``close`` (always, in a ``finally``)."""

    def __init__(
        self,
        subscriptions: Subscriptions,
        trigger: Trigger,
        policy: DispatchPolicy,
        runtime: Runtime,
    ) -> None:
        self._subs = subscriptions
        self._trigger = trigger
        self._policy = policy
        self._runtime = runtime
        self._parts: list[_Part] = []
        self._items: list[Item] = []
        self._counts = {"delivered": 0, "acknowledged": 0, "retried": 0, "filtered": 0,
                        "held": 0, "invocations": 0}  # fmt: skip
        self._filled = False  # a receive took as much as it may: more may be waiting

    def receive(self, ref: PartitionRef, records_of: RecordsOf) -> None:
        """Join the subscription on ``ref``, take what it has (up to a batch per allowed
        batch in flight and one message more) and acknowledge what the filter refuses. Raises what the
        subscriptions service raises."""
        spec, name = self._trigger.spec, self._trigger.name
        handle = self._subs.subscribe(
            ref.topic, name, CONSUMER_NAME, spec.subscription_type, spec.earliest,
            dead_letter=spec.dead_letter,
        )  # fmt: skip
        part = _Part(ref, handle.consumer_id)
        index = len(self._parts)
        self._parts.append(part)
        # a batch per allowed batch in flight, and one message more: a receive short of it
        # shows the subscription drained (no further step needed to find nothing)
        probe = min(spec.batch_size * spec.maximum_concurrency + 1, RECEIVE_MAX)
        entries = self._subs.receive(ref.topic, name, part.consumer_id, probe, 0)
        refused: list[str] = []
        received = 0
        for r in records_of(entries):
            received += 1
            if spec.filter is not None and not spec.filter.matches(r.key, r.properties):
                refused.append(r.message_id)
                continue
            group = self._policy.group_of(r.key, r.ordering_key, ref.partition)
            self._items.append(Item(r, index, group))
        if refused:
            self._subs.acknowledge(ref.topic, name, part.consumer_id, refused, False)
            self._counts["filtered"] += len(refused)
        self._filled = self._filled or received >= probe

    def run(self, sender: BatchSender) -> dict[str, Any]:
        """Send what was received (see ``delivery``); returns the outcome's fields."""
        fields = self._run(sender)
        counts = self._counts
        fields["drained"] = not (self._filled or counts["retried"] or counts["held"])
        return fields

    def _run(self, sender: BatchSender) -> dict[str, Any]:
        items, now_ms = self._items, self._runtime.now_ms()
        if not items:
            return {**self._counts, "due_ms": self._next_due()}
        oldest_ms = min(i.record.publish_time_ms for i in items)
        window_ms = self._policy.window_due_ms(len(items), oldest_ms, now_ms)
        if window_ms is not None:
            self._hand_back(items)
            return {**self._counts, "due_ms": window_ms}
        blocked = self._waiting_groups() if self._policy.ordered else set()
        pending = [i for i in items if i.group is None or i.group not in blocked]
        self._hand_back([i for i in items if i.group is not None and i.group in blocked])
        left = self._dispatch(pending, blocked, sender)
        self._hand_back(left)
        return {**self._counts, "due_ms": self._next_due()}

    def _dispatch(
        self, pending: list[Item], blocked: set[Hashable], sender: BatchSender
    ) -> list[Item]:
        """Run batches until none may start and none is in flight; returns the messages
        left unsent (their group blocked)."""
        busy: set[Hashable] = set()
        blocked = set(blocked)
        running: dict[Future[BatchResult], set[Hashable]] = {}
        workers = min(self._policy.max_concurrency, len(pending)) or 1
        with ThreadPoolExecutor(workers, thread_name_prefix="trigger-batch") as pool:
            while True:
                while self._policy.may_start(len(running)):
                    chosen = self._policy.next_batch([i.group for i in pending], busy | blocked)
                    if not chosen:
                        break
                    batch = [pending[n] for n in chosen]
                    taken = set(chosen)
                    pending = [i for n, i in enumerate(pending) if n not in taken]
                    groups = {i.group for i in batch if i.group is not None}
                    busy |= groups
                    # in a copy of this context: the invocation's metering sees its counts
                    running[pool.submit(contextvars.copy_context().run, sender.send, batch)] = (
                        groups
                    )
                if not running:
                    return pending
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    busy -= running.pop(future)
                    result = future.result()
                    self._settle(result)
                    if self._policy.ordered:
                        blocked |= result.blocked_groups()

    def _settle(self, result: BatchResult) -> None:
        """Acknowledge, retry and hand back a batch's messages, partition by partition."""
        name, spec = self._trigger.name, self._trigger.spec
        sent = len(result.acked) + len(result.failed)
        self._counts["delivered"] += sent
        self._counts["invocations"] += result.invocations
        for index, items in _items_by_part(result.acked).items():
            part = self._parts[index]
            ids = [i.message_id for i in items]
            self._subs.acknowledge(part.ref.topic, name, part.consumer_id, ids, False)
            self._counts["acknowledged"] += len(ids)
        for index, items in _items_by_part(result.failed).items():
            part = self._parts[index]
            self._subs.negative_acknowledge(
                part.ref.topic, name, part.consumer_id, [i.message_id for i in items],
                backoff=spec.retry,
                redelivery_counts={i.message_id: i.record.redelivery_count for i in items},
                wake=False,  # the trigger's own consumer: no channel sleeper waits on it
            )  # fmt: skip
            self._counts["retried"] += len(items)
        self._hand_back(result.held)

    def _hand_back(self, items: list[Item]) -> None:
        """Give received messages back unsent: available again at once, count unchanged."""
        for index, held in _items_by_part(items).items():
            part = self._parts[index]
            ids = [i.message_id for i in held]
            self._subs.negative_acknowledge(
                part.ref.topic, self._trigger.name, part.consumer_id, ids, counted=False,
                wake=False,
            )  # fmt: skip
            self._counts["held"] += len(ids)

    def _waiting_groups(self) -> set[Hashable]:
        """The ordering groups with a retry not due yet (a message in a partition's delayed
        set that went back before, so not a delayed delivery's first wait): a whole
        partition on Failover, the waiting messages' key hashes on Key_Shared (of an entry
        with a delay mask, only the masked messages wait)."""
        groups: set[Hashable] = set()
        ctx = self._subs.context
        for index in sorted({i.part for i in self._items}):
            ref = self._parts[index].ref
            state = ctx.cursors.get(ref.key, self._trigger.name)
            if state is None:
                continue
            reads, ks = state.reads, state.key_shared
            masks = ks.delayed if ks is not None else {}
            delayed = [
                e for e in state.delays.union() if reads.messages.highest(e, reads.count_of(e)) > 0
            ]
            if not delayed:
                continue
            if self._trigger.spec.subscription_type == "Failover":
                groups.add(ref.partition)
                continue
            for entry_id, hashes in ctx.hashes_of(ref)(delayed).items():
                mask = masks.get(entry_id)
                groups.update(
                    h
                    for i, h in enumerate(hashes)
                    if (mask is None or i in mask) and reads.message_count(entry_id, i) > 0
                )
        return groups

    def _next_due(self) -> int | None:
        """The earliest bucket (epoch ms) still waiting in the partitions' delayed sets
        (a retry after a backoff; also a delayed message's delivery time). One cursor read
        per partition."""
        dues = []
        for part in self._parts:
            state = self._subs.context.cursors.get(part.ref.key, self._trigger.name)
            if state is not None and (due := state.delays.next_due()) is not None:
                dues.append(due)
        return min(dues, default=None)

    def close(self) -> None:
        """Leave the subscription on every partition joined (what is still in flight goes
        back for redelivery, counted: a step that failed midway)."""
        for part in self._parts:
            self._subs.close(part.ref.topic, self._trigger.name, part.consumer_id, wake=False)


def _items_by_part(items: list[Item]) -> dict[int, list[Item]]:
    out: dict[int, list[Item]] = {}
    for i in items:
        out.setdefault(i.part, []).append(i)
    return out
