"""Push delivery of a trigger, one step at a time (``Delivery.deliver_once``).

A step joins the trigger's subscription as a consumer on every partition of its topic,
receives without waiting up to ``batchSize`` x ``maximumConcurrency`` + 1 messages from each
(one more than its batches hold: a receive short of that shows the subscription drained,
``DeliveryOutcome.drained``),
acknowledges those the filter refuses, and sends the rest to the target in batches (the
records of ``domain.triggers.records``), then leaves:

- **Batching window** (``maximumBatchingWindowMs`` > 0): while fewer than ``batchSize``
  messages wait and the oldest was published less than the window ago, nothing is sent:
  they go back unsent (redelivery count unchanged) and the outcome's ``due_ms`` says when
  the window ends (the driver steps again then, or sooner on the next produce).
- **Concurrency and order** (``domain.triggers.dispatch.DispatchPolicy``): up to
  ``maximumConcurrency`` batches in flight at once, in worker threads; on Key_Shared never
  two batches with messages of one key, on Failover one batch per partition, each group's
  messages in order.
- **Answers** (``sending.BatchSender``): acknowledged; failed ones are negatively
  acknowledged with the trigger's retry backoff (redelivery count + 1; past the dead letter
  policy's maximum the dispatcher dead-letters them). A target error, timeout or non-2xx
  answer fails the whole batch; on Key_Shared and Failover it is bisected first to isolate
  the failing messages.
- **Order across retries** (Key_Shared, Failover): once a group has a failed message, its
  later messages in the step are held back and handed back unsent (count unchanged); a
  step also holds back the messages of groups that have a message waiting for its retry
  in the subscription's delayed set. So a key's (a partition's) later message never goes
  out before an earlier one succeeded or was dead-lettered.

The outcome's ``due_ms`` (epoch ms) is the earliest time a later step has work without a
produce: the batching window's end, or the first retry due in the delayed set.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.triggers.dispatch import DispatchPolicy
from magnetar_core.domain.triggers.records import TriggerRecord
from magnetar_core.domain.triggers.spec import Trigger
from magnetar_core.ports import TriggerTarget
from magnetar_core.services.entries import delivered_messages
from magnetar_core.services.subscriptions import DeliveredEntry, Subscriptions
from magnetar_core.services.topics import Topics
from magnetar_core.services.triggers.sending import BatchSender
from magnetar_core.services.triggers.step import Step
from magnetar_wire.ids import format_message_id
from magnetar_wire.names import TopicName


@dataclass(frozen=True)
class DeliveryOutcome:
    """What one step did, in messages: sent to the target, acknowledged after it answered,
    sent back for a retry (count + 1), acknowledged unsent (the filter refused them), and
    handed back unsent (held for order or for the batching window; count unchanged); the
    target calls it made; and ``due_ms``, the epoch ms a later step has work (None: only
    when something is produced)."""

    delivered: int = 0
    acknowledged: int = 0
    retried: int = 0
    filtered: int = 0
    held: int = 0
    invocations: int = 0
    due_ms: int | None = None
    drained: bool = False
    """Every partition's receive took less than it could and nothing was sent back or
    held: the subscription had nothing more (a commit after the step wakes the topic
    again), so no further step is needed to find that out."""

    def __add__(self, other: DeliveryOutcome) -> DeliveryOutcome:
        dues = [d for d in (self.due_ms, other.due_ms) if d is not None]
        return DeliveryOutcome(
            self.delivered + other.delivered,
            self.acknowledged + other.acknowledged,
            self.retried + other.retried,
            self.filtered + other.filtered,
            self.held + other.held,
            self.invocations + other.invocations,
            min(dues, default=None),
            self.drained and other.drained,
        )

    @property
    def progressed(self) -> bool:
        """Whether the step moved the subscription on (acknowledged something)."""
        return bool(self.acknowledged or self.filtered)

    @property
    def last_of_wake(self) -> bool:
        """Whether a wake's steps of this trigger end here: the step moved nothing, or
        it drained the subscription (a further step would find nothing)."""
        return not self.progressed or self.drained


def records_of(entries: list[DeliveredEntry]) -> Iterator[TriggerRecord]:
    """The messages of delivered entries (inline data) as records, batch masks applied."""
    for d, entry, batch, m in delivered_messages(entries):
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
            encrypted=entry.encryption is not None,
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
        what the subscriptions service raises (TopicNotFound when the topic went); a
        target's failure is not raised: its messages are retried. A paused trigger does
        nothing (its backlog waits)."""
        spec = trigger.spec
        if spec.paused:
            return DeliveryOutcome()
        meta = self._topics.get(TopicName.parse(trigger.topic))
        policy = DispatchPolicy(
            spec.subscription_type,
            spec.batch_size,
            spec.maximum_concurrency,
            spec.maximum_batching_window_ms,
        )
        sender = BatchSender(self._target, spec.target, policy.ordered, self._runtime.now_ms)
        step = Step(self._subscriptions, trigger, policy, self._runtime)
        try:
            for ref in self._topics.partitions_of(meta):
                step.receive(ref, records_of)
            return DeliveryOutcome(**step.run(sender))
        finally:
            step.close()
