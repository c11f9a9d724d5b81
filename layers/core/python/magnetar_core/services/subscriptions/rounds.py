"""Dispatch rounds (``domain.cursor.rounds``): a Shared consumer taking a grant deals, in
the same cursor write, to the other consumers with permits; a consumer whose grant is empty
takes the slot dealt to it onto its grant item with no cursor write.

The dealer reads the other consumers' grant items before the cursor (one BatchGetItem, the
consumers as this container last read them: the cursor's race window stays as it was); a
consumer it did not read is not dealt to.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from magnetar_core.domain.cursor.grants import Grant, fold
from magnetar_core.domain.cursor.records import Delivery
from magnetar_core.domain.cursor.rounds import (
    deal,
    prune_slots,
    return_voided,
    rounds_apply,
    slot_to_take,
    slots_to_steal,
    take_change,
    wants_of,
)
from magnetar_core.domain.cursor.state import CursorState
from magnetar_core.domain.log import IndexEntry
from magnetar_core.domain.rangeset import RangeSet
from magnetar_core.services.topics import PartitionRef

if TYPE_CHECKING:
    from magnetar_core.services.subscriptions.base import SubscriptionContext


class Rounds:
    """The dispatch rounds of one subscription service (``context``: the stores)."""

    def __init__(self, context: SubscriptionContext) -> None:
        self._ctx = context
        self.policy = context.limits.grants

    def others(
        self, ref: PartitionRef, subscription: str, consumer_id: str
    ) -> dict[str, Grant | None]:
        """The grant items of the other consumers this container last saw on a
        subscription that deals in rounds (one BatchGetItem), by consumer; {} when none."""
        if not self.policy.rounds:
            return {}
        ids = [c for c in self._ctx.granted.consumers(ref.key, subscription) if c != consumer_id]
        if not ids:
            return {}
        return self._ctx.cursors.grants_of(ref.key, subscription, ids)

    def wants(
        self,
        state: CursorState,
        dealer: str,
        others: Mapping[str, Grant | None],
        head: int | None,
    ) -> tuple[dict[str, int], bool]:
        """What a round of ``dealer``'s grant deals to each other consumer (``others``:
        their items as read), and whether the cursor changed: the acks recorded on those
        items are folded first (Shared: no draining hashes to release)."""
        if not others or not rounds_apply(state) or head is None:
            return {}, False
        folded = sum(fold(state, consumer_id, grant) for consumer_id, grant in others.items())
        slots = len(state.dealt)
        prune_slots(state)
        changed = folded > 0 or len(state.dealt) != slots
        left = len(state.redeliver) + max(0, head - state.read_position + 1)
        lapsed = state.roster.lapsed(self._ctx.runtime.now_ms(), self._ctx.limits.consumer_lease_ms)
        wants = wants_of(
            state, dealer, others, left, self.policy.entries, self.policy.low_water, lapsed
        )
        return wants, changed

    def deal(
        self,
        state: CursorState,
        wants: Mapping[str, int],
        known: Mapping[int, IndexEntry],
        due: Mapping[int, int],
    ) -> list[Delivery]:
        """Deal what the dealer's page read (``known``) and left over to the consumers of
        ``wants``; returns every delivery dealt."""
        if not wants:
            return []
        redelivered = [e for e in state.redeliver if e in known]
        fresh = sorted(e for e in known if e >= state.read_position)
        candidates = [(e, known[e].count) for e in (*redelivered, *fresh)]
        dealt = deal(state, wants, candidates, self._ctx.limits.max_unacked_entries, due)
        return [d for given in dealt.values() for d in given]

    def steal(
        self,
        ref: PartitionRef,
        state: CursorState,
        thief: str,
        grants: tuple[Grant | None, Mapping[str, Grant | None]],
        head: int | None,
        voided: dict[tuple[str, int], RangeSet],
    ) -> None:
        """At the backlog's end (the log read up to ``head``, nothing to redeliver): take
        back the largest slots other consumers have not taken (``void_slot`` on their
        items, before the cursor write that sends their entries back: ``return_voided``),
        so that no entry waits behind a slow consumer's hand-outs; not while the thief has
        a slot of its own to take (``grants``: its item and the others', as read). Adds to
        ``voided``."""
        own, others = grants
        if not self.policy.rounds or head is None or state.read_position <= head:
            return
        if slot_to_take(state, thief, own):
            return
        policy = self.policy
        for consumer_id, slot in slots_to_steal(
            state, thief, others, policy.steal_min_entries, policy.steal_most
        ):
            if (consumer_id, slot.seq) in voided:
                continue
            if self._ctx.cursors.void_slot(ref.key, state.subscription, consumer_id, slot.seq):
                voided[(consumer_id, slot.seq)] = slot.entries

    def own_slot(
        self, ref: PartitionRef, state: CursorState, consumer_id: str,
        voided: dict[tuple[str, int], RangeSet],
    ) -> None:  # fmt: skip
        """A receive that takes no grant (it asks for many messages) takes its consumer's
        untaken slot back the same way (``void_slot``, then ``return_voided``), so that its
        own dispatch hands those entries out first, uncounted; a slot its item took is
        left to the item. Adds to ``voided``."""
        slot = state.dealt.get(consumer_id)
        if slot is None or (consumer_id, slot.seq) in voided:
            return
        if self._ctx.cursors.void_slot(ref.key, state.subscription, consumer_id, slot.seq):
            voided[(consumer_id, slot.seq)] = slot.entries

    @staticmethod
    def return_voided(state: CursorState, voided: Mapping[tuple[str, int], RangeSet]) -> bool:
        """Send the entries of the slots taken back (``steal``) back uncounted; whether the
        cursor changed."""
        return (
            sum(return_voided(state, c, seq, entries) for (c, seq), entries in voided.items()) > 0
        )

    def take(
        self,
        ref: PartitionRef,
        state: CursorState,
        consumer_id: str,
        grant: Grant | None,
        max_messages: int,
    ) -> list[tuple[Delivery, IndexEntry]] | None:
        """Take the consumer's untaken slot onto its grant item (no cursor write) and hand
        out its first ``max_messages``; None when there is none or the item changed (a
        revocation, another receive): the caller takes an ordinary grant."""
        deliveries = slot_to_take(state, consumer_id, grant)
        if not deliveries:
            return None
        ctx = self._ctx
        info = state.consumers.get(consumer_id)
        role = info.role if info is not None else None
        handed = min(max_messages, len(deliveries))
        change = take_change(state, consumer_id, grant, deliveries, role, handed)
        if not ctx.cursors.put_grant(ref.key, state.subscription, consumer_id, change):
            return None
        first = deliveries[:handed]
        items = ctx.index.resolve(ref.key, [d.entry_id for d in first], ctx.log.get_many)
        return [(d, items[d.entry_id]) for d in first if d.entry_id in items]
