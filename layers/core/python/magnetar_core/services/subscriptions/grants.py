"""Grants (``domain.cursor.grants``): one-message receives of a Shared consumer served from
its own grant item, acks recorded there, and the revocation every path that takes a
consumer's entries back does first.

Whether a subscription takes grants is known only from its cursor (a durable Shared one
that does not read the compacted view): each container remembers what it last read
(``granted.GrantedSubscriptions``); one it has not read yet is tried as if it did, and a wrong
guess or a stale memory costs one UpdateItem whose condition fails.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from magnetar_core.domain.cursor.grants import (
    MAX_ITEM_ACKS,
    Grant,
    GrantPolicy,
    fold,
    grants_apply,
    next_grant,
)
from magnetar_core.domain.cursor.key_shared_state import HashesOf
from magnetar_core.domain.cursor.records import Delivery
from magnetar_core.domain.cursor.state import CursorState
from magnetar_core.domain.log import IndexEntry
from magnetar_core.services.topics import PartitionRef

if TYPE_CHECKING:
    from magnetar_core.services.subscriptions.base import SubscriptionContext


class Grants:
    """The grant operations of one subscription service (``context``: the stores)."""

    def __init__(self, context: SubscriptionContext) -> None:
        self._ctx = context
        self.policy: GrantPolicy = context.limits.grants

    def serves(self, ref: PartitionRef, subscription: str, max_messages: int) -> bool:
        """Whether a receive of ``max_messages`` may try its consumer's grant first."""
        return self.policy.serves(max_messages) and self._ctx.granted.granted(ref.key, subscription)

    def hand_out(
        self,
        ref: PartitionRef,
        subscription: str,
        consumer_id: str,
        role: str | None,
        max_messages: int = 1,
    ) -> list[tuple[Delivery, IndexEntry]]:
        """Up to ``max_messages`` next deliveries of the consumer's grant with their index
        items ([]: none left), taken with one UpdateItem. An entry gone from the log
        meanwhile (expired) is stepped over."""
        ctx = self._ctx
        while True:
            grant = ctx.cursors.hand_out(ref.key, subscription, consumer_id, role, max_messages)
            taken = grant.taken(max_messages) if grant is not None else ()
            if not taken:
                return []
            ids = [d.entry_id for d in taken]
            known = ctx.index.resolve(ref.key, ids, ctx.log.get_many)
            found = [(d, known[d.entry_id]) for d in taken if d.entry_id in known]
            if found:
                return found

    def acknowledge(
        self,
        ref: PartitionRef,
        subscription: str,
        consumer_id: str,
        positions: list[tuple[int, int]],
        role: str | None,
    ) -> int | None:
        """Record whole-entry acks on the consumer's grant item: how many, or None when
        they must go to the cursor (batch indexes, too many, not all in the grant)."""
        entry_ids = frozenset(entry for entry, _ in positions)
        if not positions or any(index != -1 for _, index in positions):
            return None
        if len(entry_ids) > MAX_ITEM_ACKS or not self._ctx.granted.granted(ref.key, subscription):
            return None
        recorded = self._ctx.cursors.ack_granted(
            ref.key, subscription, consumer_id, entry_ids, role
        )
        return len(entry_ids) if recorded else None

    def revoke(
        self,
        ref: PartitionRef,
        state: CursorState,
        consumer_ids: Iterable[str],
        entry_ids: frozenset[int] | None = None,
        holding_only: bool = True,
    ) -> dict[str, Grant]:
        """Take entries (None: all) of these consumers back on their grant items before a
        cursor write takes them back: their grant items as changed (acks to fold), by
        consumer. Nothing on a cursor that takes no grants; with ``holding_only``, nothing
        for a consumer holding no entries (its grant could only hand out entries
        acknowledged meanwhile: a close revokes it anyway)."""
        self._ctx.granted.learn(ref.key, state)
        if not grants_apply(state):
            return {}
        out: dict[str, Grant] = {}
        for consumer_id in consumer_ids:
            if holding_only and not state.leases.get(consumer_id):
                continue  # nothing in flight: nothing its grant could hand out or ack
            grant = self._ctx.cursors.revoke_grant(
                ref.key, state.subscription, consumer_id, entry_ids
            )
            if grant is not None:
                out[consumer_id] = grant
        return out

    def record(
        self,
        ref: PartitionRef,
        state: CursorState,
        consumer_id: str,
        before: Grant | None,
        granted: tuple[tuple[Delivery, ...], tuple[Delivery, ...]],
        known: Mapping[int, IndexEntry],
        max_messages: int,
    ) -> list[tuple[Delivery, IndexEntry]]:
        """After the cursor write that leased a grant (``granted``: deliveries carried over
        from the previous grant, then the new ones): record it on the consumer's grant item
        and hand out its first ``max_messages`` deliveries with their index items. When the
        item changed meanwhile (a revocation: the consumer closed or lapsed, or another
        receive of it took a grant), the rest go back uncounted (``give_back``)."""
        ctx = self._ctx
        carried, deliveries = granted
        queue = (*carried, *deliveries)
        items = dict(known)
        missing = [d.entry_id for d in carried if d.entry_id not in items]
        if missing:
            items.update(ctx.index.resolve(ref.key, missing, ctx.log.get_many))
        info = state.consumers.get(consumer_id)
        role = info.role if info is not None else None
        change = next_grant(state, consumer_id, before, deliveries, carried, role, max_messages)
        if not ctx.cursors.put_grant(ref.key, state.subscription, consumer_id, change):
            self.give_back(ref, state.subscription, consumer_id, queue[max_messages:])
        return [(d, items[d.entry_id]) for d in queue[:max_messages] if d.entry_id in items]

    def give_back(
        self,
        ref: PartitionRef,
        subscription: str,
        consumer_id: str,
        deliveries: Iterable[Delivery],
    ) -> int:
        """Send deliveries leased to the consumer and never handed out back for dispatch,
        uncounted (they were never delivered); returns how many went back."""
        entry_ids = [d.entry_id for d in deliveries]
        if not entry_ids:
            return 0

        def change(state: CursorState) -> tuple[int, bool]:
            moved = state.negative_acknowledge(
                consumer_id, entry_ids, self._ctx.hashes_of(ref), None, None, counted=False
            )
            return moved, moved > 0

        return self._ctx.update(ref, subscription, change, missing_ok=True, default=0)


class Revoked(dict[str, Grant]):
    """Grants taken back before a cursor change (``prepare`` of ``SubscriptionContext.
    update``), by consumer id: again at every attempt, after its cursor read, keeping the
    item as the last revocation returned it. A retry means the cursor changed since the
    last revocation, maybe by the consumer's own grant (it read its item after that
    revocation, so recording it did not fail): revoking once would let that grant outlive
    the cursor write that takes its entries back."""

    def __init__(
        self,
        grants: Grants,
        ref: PartitionRef,
        consumer_ids: list[str],
        entry_ids: frozenset[int] | None,
        holding_only: bool = True,
    ) -> None:
        super().__init__()
        self._grants, self._ref, self._ids, self._entries = grants, ref, consumer_ids, entry_ids
        self._holding_only = holding_only

    def prepare(self, state: CursorState) -> None:
        """Take back the grants of the consumers named at construction."""
        self.take(state, self._ids)

    def take_all(self, state: CursorState) -> None:
        """Take back the grants of every consumer holding entries (a seek drops them all)."""
        self.take(state, list(state.leases))

    def take(self, state: CursorState, consumer_ids: Iterable[str]) -> None:
        """Take back the grants of ``consumer_ids`` (again, if taken back before)."""
        todo = list(consumer_ids)
        if todo:
            grants = self._grants.revoke(self._ref, state, todo, self._entries, self._holding_only)
            self.update(grants)


def fold_revoked(state: CursorState, revoked: Revoked, hashes_of: HashesOf | None = None) -> int:
    """Fold the acks of every grant ``revoked`` took back into ``state``; how many changed it."""
    return sum(fold(state, c, grant, hashes_of) for c, grant in revoked.items())
