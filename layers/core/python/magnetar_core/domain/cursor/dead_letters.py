"""Dead letters of a cursor, pure: the subscription's policy and its outbox.

``CursorState.collect_dead_letters`` (``DeadLettering``) takes the entries whose next
delivery would exceed the policy's redelivery count out of the redelivery set and
``enqueue``s them here with sequence ids from ``next_sequence`` (never reused: the counter
only grows, even when a seek drops pending items). An entry in the outbox is neither available, leased nor
delayed, so nobody receives it again; once its messages are in the dead letter topic,
``settle`` hands it back to be acknowledged. Both happen inside the cursor writes the
dispatcher makes anyway (see ``dead_lettering``). ``producer_id`` names the outbox's
producer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from magnetar_core.domain.dead_letter import DeadLetter, DeadLetterPolicy
from magnetar_wire.names import TopicName


@dataclass
class DeadLetterOutbox:
    """The dead letter policy and the entries on their way to the dead letter topic."""

    policy: DeadLetterPolicy | None = None
    items: list[DeadLetter] = field(default_factory=list)
    next_sequence: int = 0
    producer_id: str = ""

    def exhausted(self, counts: Mapping[int, int], eligible: Callable[[int], bool]) -> list[int]:
        """Entries, ascending, whose redelivery count (``counts``) exhausts the policy and
        for which ``eligible(entry_id)`` holds; none without a policy."""
        policy = self.policy
        if policy is None:
            return []
        return sorted(e for e, n in counts.items() if policy.exhausted(n) and eligible(e))

    def enqueue(
        self,
        entry_id: int,
        indexes: tuple[int, ...] | None,
        count: int,
        topic: TopicName,
        subscription: str,
        new_id: str,
    ) -> None:
        """Append an entry (``indexes`` None: every message; ``count`` messages) for the
        policy's dead letter topic of ``topic``; the outbox gets ``new_id`` as its producer
        id when it has none. Raises ValueError without a policy."""
        policy = self.policy
        if policy is None:
            raise ValueError("no dead letter policy")
        if not self.producer_id:
            self.producer_id = new_id
        target = str(policy.topic_for(topic, subscription))
        sequence = self.next_sequence
        self.items.append(
            DeadLetter(sequence, entry_id, indexes, count, target, policy.initial_subscription_name)
        )
        self.next_sequence += count

    def settle(self, through_sequence: int) -> list[DeadLetter]:
        """Drop the items with a sequence id up to ``through_sequence`` (published); returns
        them: their messages are to be acknowledged."""
        done = [d for d in self.items if d.sequence_id <= through_sequence]
        if done:
            self.items = [d for d in self.items if d.sequence_id > through_sequence]
        return done

    def to_dict(self) -> dict:
        """The JSON of the policy (``dlp``) and the outbox (``dlq``), when there are any."""
        out: dict = {}
        if self.policy is not None:
            out["dlp"] = self.policy.to_dict()
        if self.producer_id:
            out["dlq"] = {
                "id": self.producer_id,
                "next": self.next_sequence,
                "items": [d.to_list() for d in self.items],
            }
        return out

    @classmethod
    def from_dict(cls, body: Mapping) -> DeadLetterOutbox:
        """Load what ``to_dict`` wrote (other keys of ``body`` are ignored)."""
        outbox = cls(DeadLetterPolicy.from_dict(body["dlp"]) if "dlp" in body else None)
        saved = body.get("dlq")
        if saved:
            outbox.producer_id = saved["id"]
            outbox.next_sequence = int(saved["next"])
            outbox.items = [DeadLetter.from_list(d) for d in saved["items"]]
        return outbox
