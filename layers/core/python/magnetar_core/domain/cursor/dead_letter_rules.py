"""Dead-lettering rules of a cursor, pure: exhausted entries into the outbox, and published
ones out of it (acknowledged).

An entry whose next delivery would exceed the policy's redelivery count (Shared and
Key_Shared only), available and held by nobody, leaves the redelivery set for the
``DeadLetterOutbox`` with the batch indexes still unacknowledged; once the dispatcher
published the outbox's items up to a sequence id, ``settle`` acknowledges their entries.
``DeadLettering`` works on the parts ``CursorState`` hands it for one operation.
"""

from __future__ import annotations

from magnetar_core.domain.cursor.acknowledgements import Acknowledgements
from magnetar_core.domain.cursor.dead_letters import DeadLetterOutbox
from magnetar_core.domain.cursor.key_shared_state import HashesOf
from magnetar_core.domain.dead_letter import DEAD_LETTER_TYPES
from magnetar_wire.names import TopicName


class DeadLettering:
    """The dead letter rules of a ``sub_type`` subscription over its ``outbox`` and the
    acknowledgement rules ``rules`` of its cursor."""

    def __init__(self, rules: Acknowledgements, outbox: DeadLetterOutbox, sub_type: str) -> None:
        self.rules, self.outbox, self.sub_type = rules, outbox, sub_type

    def collect(self, topic: TopicName, subscription: str, new_id: str) -> int:
        """Move exhausted entries (nobody holding any of their messages) from the
        redelivery set to the outbox, in entry order; the outbox gets ``new_id`` as its
        producer id when it has none. Returns how many moved (none without a policy, or on
        Exclusive and Failover subscriptions)."""
        outbox = self.outbox
        if self.sub_type not in DEAD_LETTER_TYPES or outbox.policy is None:
            return 0
        reads, roster, acks = self.rules.reads, self.rules.roster, self.rules.acks
        exhausted = outbox.exhausted(
            reads.redelivery_counts, lambda e: e in reads.redeliver and not roster.holds(e)
        )
        for entry_id in exhausted:
            reads.redeliver.remove(entry_id)
            size = acks.size_of(entry_id)
            indexes = acks.delivery_mask(entry_id, size)
            count = size if indexes is None else len(indexes)
            outbox.enqueue(entry_id, indexes, count, topic, subscription, new_id)
        return len(exhausted)

    def settle(self, through_sequence: int, hashes_of: HashesOf | None) -> int:
        """Acknowledge the entries of outbox items with a sequence id up to
        ``through_sequence`` (published) and drop them from the outbox; returns how many."""
        done = self.outbox.settle(through_sequence)
        if done:
            self.rules.acknowledge([(entry_id, -1) for entry_id in done], hashes_of)
        return len(done)
