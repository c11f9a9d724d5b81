"""Dead letters of a cursor, pure: the subscription's policy and its outbox.

A mixin of ``cursor.CursorState``. ``collect_dead_letters`` takes the entries whose next
delivery would exceed the policy's redelivery count out of the redelivery set and appends
them to the outbox ``dead_letters`` with sequence ids from ``dead_letter_next_sequence``
(never reused: the counter only grows, even when a seek drops pending items). An entry in
the outbox is neither available, leased nor delayed, so nobody receives it again; once
its messages are in the dead letter topic, ``settle_dead_letters`` acknowledges it. Both
happen inside the cursor writes the dispatcher makes anyway (see ``dead_lettering``).
"""

from __future__ import annotations

from magnetar_core.domain.cursor.key_shared_state import HashesOf
from magnetar_core.domain.dead_letter import DEAD_LETTER_TYPES, DeadLetter, DeadLetterPolicy
from magnetar_core.domain.names import TopicName
from magnetar_core.domain.rangeset import RangeSet


class CursorDeadLetters:
    """Mixin of ``CursorState``: the dead letter outbox (uses its fields)."""

    subscription: str
    sub_type: str
    redeliver: RangeSet
    redelivery_counts: dict[int, int]
    batch_acks: dict[int, set[int]]
    batch_sizes: dict[int, int]
    leases: dict[str, RangeSet]
    dead_letter_policy: DeadLetterPolicy | None
    dead_letters: list[DeadLetter]
    dead_letter_next_sequence: int
    dead_letter_id: str

    def collect_dead_letters(self, topic: TopicName, new_id: str) -> int:
        """Move exhausted entries (Shared and Key_Shared, nobody holding any of their
        messages) from the redelivery set to the outbox, in entry order; sets
        ``dead_letter_id`` to ``new_id`` when it has none. Returns how many moved."""
        policy = self.dead_letter_policy
        if policy is None or self.sub_type not in DEAD_LETTER_TYPES:
            return 0
        exhausted = sorted(
            entry_id
            for entry_id, count in self.redelivery_counts.items()
            if policy.exhausted(count)
            and entry_id in self.redeliver
            and not any(entry_id in lease for lease in self.leases.values())
        )
        if not exhausted:
            return 0
        if not self.dead_letter_id:
            self.dead_letter_id = new_id
        target = str(policy.topic_for(topic, self.subscription))
        for entry_id in exhausted:
            self.redeliver.remove(entry_id)
            size = self.batch_sizes.get(entry_id, 1)
            acked = self.batch_acks.get(entry_id)
            indexes = tuple(i for i in range(size) if i not in acked) if acked else None
            count = len(indexes) if indexes is not None else size
            self.dead_letters.append(
                DeadLetter(
                    self.dead_letter_next_sequence,
                    entry_id,
                    indexes,
                    count,
                    target,
                    policy.initial_subscription_name,
                )
            )
            self.dead_letter_next_sequence += count
        return len(exhausted)

    def settle_dead_letters(self, through_sequence: int, hashes_of: HashesOf | None = None) -> int:
        """Acknowledge the entries of outbox items with a sequence id up to
        ``through_sequence`` (published) and drop them from the outbox; returns how many."""
        done = [d for d in self.dead_letters if d.sequence_id <= through_sequence]
        if not done:
            return 0
        self.dead_letters = [d for d in self.dead_letters if d.sequence_id > through_sequence]
        self.acknowledge([(d.entry_id, -1) for d in done], hashes_of)
        return len(done)

    def dead_letters_to_dict(self) -> dict:
        """The JSON of the policy (``dlp``) and the outbox (``dlq``), when there are any."""
        out: dict = {}
        if self.dead_letter_policy is not None:
            out["dlp"] = self.dead_letter_policy.to_dict()
        if self.dead_letter_id:
            out["dlq"] = {
                "id": self.dead_letter_id,
                "next": self.dead_letter_next_sequence,
                "items": [d.to_list() for d in self.dead_letters],
            }
        return out

    def dead_letters_from_dict(self, body: dict) -> None:
        """Load what ``dead_letters_to_dict`` wrote."""
        if "dlp" in body:
            self.dead_letter_policy = DeadLetterPolicy.from_dict(body["dlp"])
        outbox = body.get("dlq")
        if outbox:
            self.dead_letter_id = outbox["id"]
            self.dead_letter_next_sequence = int(outbox["next"])
            self.dead_letters = [DeadLetter.from_list(d) for d in outbox["items"]]
