"""Push delivery of a trigger, one step at a time (``Delivery.deliver_once``).

A step, on each partition of the trigger's topic: join the trigger's subscription as a
consumer, receive up to ``batchSize`` messages without waiting, acknowledge those the
filter refuses, send the rest to the target as one batch (``domain.triggers.records``),
acknowledge what succeeded and negatively acknowledge what failed (after the trigger's
retry backoff; redelivery count + 1; past the dead letter policy's maximum the dispatcher
dead-letters them), then leave. A target error, timeout or non-2xx answer retries the whole
batch. Not yet: Key_Shared / Failover concurrency, bisecting a failing batch, the batching
window (issue 13, later slices).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.triggers.filters import MessageFilter
from magnetar_core.domain.triggers.records import (
    TargetFailed,
    TriggerRecord,
    batch_body,
    failed_items,
)
from magnetar_core.domain.triggers.spec import Trigger
from magnetar_core.ports import TriggerTarget
from magnetar_core.services.entries import delivered_messages
from magnetar_core.services.subscriptions import DeliveredEntry, Subscriptions
from magnetar_core.services.topics import Topics
from magnetar_core.services.triggers import CONSUMER_NAME
from magnetar_wire.ids import format_message_id
from magnetar_wire.names import TopicName


@dataclass(frozen=True)
class DeliveryOutcome:
    """What one step did, in messages: sent to the target, acknowledged after it answered,
    sent back for redelivery, and acknowledged unsent (the filter refused them)."""

    delivered: int = 0
    acknowledged: int = 0
    retried: int = 0
    filtered: int = 0

    def __add__(self, other: DeliveryOutcome) -> DeliveryOutcome:
        return DeliveryOutcome(
            self.delivered + other.delivered,
            self.acknowledged + other.acknowledged,
            self.retried + other.retried,
            self.filtered + other.filtered,
        )


def records_of(entries: list[DeliveredEntry]) -> Iterator[TriggerRecord]:
    """The messages of delivered entries (inline data) as records, batch masks applied."""
    for d, _, batch, m in delivered_messages(entries):
        yield TriggerRecord(
            message_id=format_message_id(d.ledger_id, d.entry_id, d.partition, batch),
            topic=str(d.topic),
            key=m.key,
            ordering_key=m.ordering_key,
            payload=m.payload,
            properties=dict(m.properties),
            publish_time_ms=m.publish_time_ms,
            event_time_ms=m.event_time_ms,
            redelivery_count=d.redelivery_count,
        )


class Delivery:
    """Delivers triggers' batches to their targets through the subscriptions service."""

    def __init__(
        self, subscriptions: Subscriptions, topics: Topics, target: TriggerTarget, runtime: Runtime
    ) -> None:
        self._subscriptions = subscriptions
        self._topics = topics
        self._target = target
        self._runtime = runtime

    def deliver_once(self, trigger: Trigger) -> DeliveryOutcome:
        """One step on every partition of the trigger's topic (see the module). Raises
        what the subscriptions service raises (TopicNotFound when the topic went);
        a target's failure is not raised: its batch is retried."""
        meta = self._topics.get(TopicName.parse(trigger.topic))
        outcome = DeliveryOutcome()
        for ref in self._topics.partitions_of(meta):
            outcome += self._step(trigger, ref.topic)
        return outcome

    def _step(self, trigger: Trigger, topic: TopicName) -> DeliveryOutcome:
        spec, subs = trigger.spec, self._subscriptions
        handle = subs.subscribe(
            topic,
            trigger.name,
            CONSUMER_NAME,
            spec.subscription_type,
            spec.earliest,
            dead_letter=spec.dead_letter,
        )
        consumer = handle.consumer_id
        try:
            entries = subs.receive(topic, trigger.name, consumer, spec.batch_size, 0)
            wanted, refused = _split(list(records_of(entries)), spec.filter)
            if refused:
                subs.acknowledge(topic, trigger.name, consumer, refused, False)
            if not wanted:
                return DeliveryOutcome(filtered=len(refused))
            ids = [r.message_id for r in wanted]
            failed = self._send(trigger, wanted, ids)
            succeeded = [i for i in ids if i not in failed]
            retry = [i for i in ids if i in failed]
            if succeeded:
                subs.acknowledge(topic, trigger.name, consumer, succeeded, False)
            if retry:
                counts = {r.message_id: r.redelivery_count for r in wanted}
                subs.negative_acknowledge(
                    topic,
                    trigger.name,
                    consumer,
                    retry,
                    backoff=spec.retry,
                    redelivery_counts={i: counts[i] for i in retry},
                )
            return DeliveryOutcome(len(ids), len(succeeded), len(retry), len(refused))
        finally:
            subs.close(topic, trigger.name, consumer)

    def _send(self, trigger: Trigger, records: list[TriggerRecord], ids: list[str]) -> set[str]:
        """The ids to retry: those the answer reports, or all of them when it failed."""
        body = batch_body(records)
        try:
            answer = self._target.invoke(trigger.spec.target, body, self._runtime.now_ms())
        except TargetFailed:
            return set(ids)
        failed = failed_items(answer, ids)
        return set(ids) if failed is None else failed


def _split(
    records: list[TriggerRecord], message_filter: MessageFilter | None
) -> tuple[list[TriggerRecord], list[str]]:
    """``(records to deliver, ids the filter refuses)``."""
    if message_filter is None:
        return records, []
    wanted: list[TriggerRecord] = []
    refused: list[str] = []
    for r in records:
        if message_filter.matches(r.key, r.properties):
            wanted.append(r)
        else:
            refused.append(r.message_id)
    return wanted, refused
