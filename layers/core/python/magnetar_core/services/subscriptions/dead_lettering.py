"""Dead-lettering, the use case: publish a cursor's outbox to the dead letter topics, then
acknowledge its entries on the original subscription.

Exactly once into the dead letter topic, whatever step fails or is repeated:

1. the dispatcher's ordinary cursor write takes an exhausted entry out of the redelivery
   set and records it in the cursor's outbox with a sequence id (``cursor_dead_letters``);
2. the entry's messages are published under the cursor's deterministic producer name
   (``dead_letter.producer_name``) with those sequence ids and deduplication forced on, in
   sequence order, each only after the one before it committed;
3. one cursor write acknowledges the published entries and drops them from the outbox.

A process that dies after 1 or 2 leaves the outbox in the cursor item; the next dispatch
on that subscription, in any container, finds it and resumes at 2. A message committed
before the crash is then a duplicate the log refuses (the producer's dedup check replays
the log up to its head before every commit), and because every engine publishes in
sequence order, a sequence id is never committed after a higher one of the same producer
(which dedup would have refused). Nothing of this costs a request while the outbox is
empty: the normal dispatch path only looks at the cursor it read anyway.
"""

from __future__ import annotations

import contextlib
import logging

from magnetar_core.domain import metering
from magnetar_core.domain.cursor.state import EXCLUSIVE, CursorState
from magnetar_core.domain.dead_letter import DeadLetter, Origin, dead_letter_entry, producer_name
from magnetar_core.domain.errors import ConditionFailed, MagnetarError
from magnetar_core.services.entries import entry_bytes
from magnetar_core.services.produce import Producer
from magnetar_core.services.subscriptions.base import SubscriptionContext
from magnetar_core.services.topics import PartitionRef
from magnetar_wire import EntryFormatError
from magnetar_wire.names import TopicName

RETRY_AFTER_MS = 1000
"""After a failed attempt, this process leaves the outbox alone for this long."""
log = logging.getLogger("magnetar.dead_letters")


class DeadLettering:
    """Moves a subscription's exhausted entries to their dead letter topics (published
    through ``producer``)."""

    def __init__(self, context: SubscriptionContext, producer: Producer) -> None:
        self._ctx = context
        self._producer = producer
        self._ready: set[str] = set()
        """Initial subscriptions known to exist (per producer, topic and name)."""
        self._retry_at: dict[str, float] = {}
        """Per cursor: the monotonic ms before which a failed outbox is left alone."""

    def drain(self, ref: PartitionRef, state: CursorState) -> int:
        """Publish and settle the outbox of ``state`` (as just read or written; it is
        changed and written again). Returns how many entries were settled. A failure is
        logged and leaves the outbox for a later dispatch (of any container)."""
        if not state.dead_letters:
            return 0
        key = f"{ref.key}\n{state.subscription}"
        if self._retry_at.get(key, 0) > self._ctx.runtime.monotonic_ms():
            return 0
        try:
            through = self.publish(ref, state)
            return self.settle(ref, state, through)
        except (MagnetarError, EntryFormatError):
            log.exception("dead-lettering from %s on %s failed", state.subscription, ref.topic)
            self._retry_at[key] = self._ctx.runtime.monotonic_ms() + RETRY_AFTER_MS
            return 0

    def publish(self, ref: PartitionRef, state: CursorState) -> int:
        """Publish every outbox item in sequence order; returns the last sequence id."""
        items = sorted(state.dead_letters, key=lambda d: d.sequence_id)
        ctx = self._ctx
        index = ctx.index.resolve(ref.key, [d.entry_id for d in items], ctx.log.get_many)
        producer = producer_name(ref.topic, state.subscription, state.dead_letter_id)
        origin = Origin(ref.topic, ref.ledger_id, ref.partition)
        for item in items:
            item_entry = index.get(item.entry_id)
            if item_entry is None:  # expired meanwhile: nothing left to move
                log.warning("entry %s of %s is gone; not dead-lettered", item.entry_id, ref.topic)
                continue
            target = TopicName.parse(item.topic)
            self._ensure_initial_subscription(target, item, producer)
            data = entry_bytes(ctx.entries, item_entry)
            entry = dead_letter_entry(data, item, origin, producer, ctx.runtime.now_ms())
            with metering.uncounted():
                result = self._producer.publish(target, entry, deduplicate=True)
            metering.count(metering.DEAD_LETTER_MOVES, 0 if result.duplicate else 1)
        return items[-1].sequence_id

    def settle(self, ref: PartitionRef, state: CursorState, through: int) -> int:
        """Acknowledge the published items: on the state held (one write) or, when the
        cursor changed meanwhile, by the ordinary read-modify-write."""
        hashes_of = self._ctx.hashes_of(ref)
        done = state.settle_dead_letters(through, hashes_of)
        try:
            self._ctx.cursors.put(ref.key, state)
            return done
        except ConditionFailed:
            pass

        def change(fresh: CursorState) -> tuple[int, bool]:
            settled = fresh.settle_dead_letters(through, hashes_of)
            return settled, settled > 0

        return self._ctx.update(ref, state.subscription, change, missing_ok=True, default=0)

    def _ensure_initial_subscription(
        self, topic: TopicName, item: DeadLetter, producer: str
    ) -> None:
        """Create ``item.initial_subscription`` at Earliest on ``topic`` (every partition of
        a partitioned one) unless it exists; once per producer and process, before its
        first publish (as Pulsar's dead letter producer does when it is created)."""
        name = item.initial_subscription
        marker = f"{producer}\n{topic}\n{name}"
        if name is None or marker in self._ready:
            return
        topics = self._ctx.topics
        meta = topics.cached_meta(topic)
        if meta is not None and meta.partitions > 0:
            refs = topics.partitions_of(meta)
        else:
            refs = [topics.resolve(topic, create=True)]
        for target in refs:
            with contextlib.suppress(ConditionFailed):  # it exists already: keep it as it is
                self._ctx.cursors.put(target.key, CursorState.new(name, EXCLUSIVE, -1, True))
        self._ready.add(marker)
