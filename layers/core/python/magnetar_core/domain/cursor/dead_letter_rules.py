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
        producer id when it has none. On Key_Shared, of an entry whose messages differ in
        redelivery count, the available messages whose own count is exhausted go, the
        others stay (``split``; so do parked ones). Returns how many entries moved, wholly
        or in part (none without a policy, or on Exclusive and Failover subscriptions)."""
        outbox = self.outbox
        if self.sub_type not in DEAD_LETTER_TYPES or outbox.policy is None:
            return 0
        reads, roster, acks = self.rules.reads, self.rules.roster, self.rules.acks
        # (Key_Shared only: on another type an entry's messages go and come together)
        apart = set(reads.messages.counts) | set(reads.messages.parked) if self.rules.ks else set()
        exhausted = outbox.exhausted(
            reads.redelivery_counts,
            lambda e: e in reads.redeliver and not roster.holds(e) and e not in apart,
        )
        for entry_id in exhausted:
            reads.redeliver.remove(entry_id)
            size = acks.size_of(entry_id)
            indexes = acks.delivery_mask(entry_id, size)
            count = size if indexes is None else len(indexes)
            outbox.enqueue(entry_id, indexes, count, topic, subscription, new_id)
        split = [e for e in sorted(apart) if e in reads.redeliver]
        parted = sum(self.split(e, topic, subscription, new_id) for e in split)
        return len(exhausted) + parted

    def split(self, entry_id: int, topic: TopicName, subscription: str, new_id: str) -> bool:
        """Park the available messages of a Key_Shared entry whose own redelivery count is
        exhausted in the outbox (``MessageCounts.park``); the entry leaves the redelivery
        set when nothing of it is available any more. True when some went."""
        policy, ks = self.outbox.policy, self.rules.ks
        if policy is None or ks is None:
            return False
        reads, acks, delays = self.rules.reads, self.rules.acks, self.rules.delays
        size = acks.size_of(entry_id)
        waiting: set[int] = set()
        if delays.delayed and entry_id in delays.union():
            waiting = ks.ks.delayed.get(entry_id, set(range(size)))
        free = [i for i in ks.available(entry_id, size) if i not in waiting]
        done = tuple(i for i in free if policy.exhausted(reads.message_count(entry_id, i)))
        if not done:
            return False
        self.outbox.enqueue(entry_id, done, len(done), topic, subscription, new_id)
        reads.messages.park(entry_id, done)
        if len(done) == len(free):
            reads.redeliver.remove(entry_id)
        return True

    def settle(self, through_sequence: int, hashes_of: HashesOf | None) -> int:
        """Acknowledge the messages of outbox items with a sequence id up to
        ``through_sequence`` (published) and drop them from the outbox; returns how many."""
        done = self.outbox.settle(through_sequence)
        positions = [(d.entry_id, i) for d in done for i in (d.batch_indexes or (-1,))]
        if done:
            self.rules.acknowledge(positions, hashes_of)
            for d in done:
                self.rules.reads.messages.unpark(d.entry_id, d.batch_indexes or ())
        return len(done)
