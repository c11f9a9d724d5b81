"""Planning a dispatch: which entries one receive leases (``Planner``). It reads the index
page at the read position (from the container's cache when it holds it) and the index items
of redeliveries, finds the delayed messages' due buckets, and asks the cursor state to
dispatch — redeliveries first, then new entries — under the subscription type's bounds: a
Shared receive's fair share or round-robin turn (a grant's equal split), a Key_Shared
consumer's selector and window. Nothing here writes: ``dispatch`` writes the cursor."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice

from magnetar_core.domain.cursor.grants import grant_split
from magnetar_core.domain.cursor.round_robin import round_robin_turn
from magnetar_core.domain.cursor.state import KEY_SHARED, SHARED, CursorState, Delivery
from magnetar_core.domain.log import IndexEntry
from magnetar_core.domain.response_budget import ResponseBudget
from magnetar_core.services.namespaces import Namespaces
from magnetar_core.services.subscriptions.base import SubscriptionContext
from magnetar_core.services.timers import DelayTimers
from magnetar_core.services.topics import PartitionRef

READ_PAGE_ENTRIES = 1000
"""New entries one receive reads from the index at most."""


class Planner:
    """The leasing decisions of a receive (``plan``, ``plan_key_shared``), mutating the
    cursor state it is given; ``timers`` and ``namespaces`` say when delayed messages are
    due, ``budget`` how much one response holds."""

    def __init__(
        self,
        context: SubscriptionContext,
        timers: DelayTimers,
        namespaces: Namespaces,
        budget: ResponseBudget,
    ) -> None:
        self._ctx = context
        self._timers = timers
        self._namespaces = namespaces
        self._budget = budget

    def due(
        self, ref: PartitionRef, state: CursorState, entries: Iterable[IndexEntry], now_ms: int
    ) -> dict[int, int]:
        """Due buckets of delayed messages: Shared and Key_Shared only (Exclusive and
        Failover deliver them at once, as Pulsar does), unless the namespace switched
        delayed delivery off; buckets by the namespace's tick. The policies (cached per
        process) are looked up only when some entry is still to come."""
        if state.sub_type not in (SHARED, KEY_SHARED) or not self._timers.active:
            return {}
        entries = [e for e in entries if e.deliver_at_ms > now_ms]
        if not entries:
            return {}
        policies = self._namespaces.effective(ref.topic)
        if not policies.delayed_delivery_active:
            return {}
        return self._timers.due_of(entries, now_ms, policies.delayed_delivery_tick_ms)

    def _entries_for(
        self,
        ref: PartitionRef,
        state: CursorState,
        redeliveries: list[int],
        max_messages: int,
        read_fresh: bool,
        head: int | None = None,
    ) -> tuple[list[IndexEntry], dict[int, IndexEntry]]:
        """The new entries at the read position (one index query, when ``read_fresh``) and
        the index items of those plus ``redeliveries`` (cached, else one BatchGetItem).
        Taking a grant (``head``: the log's head read before the cursor) the page comes from
        the container's cache when it holds every id of it, and a page read is twice the
        grant, so that a retry after a lost race (a competing grant took the first half)
        reads nothing in the cursor's race window."""
        log, index = self._ctx.log, self._ctx.index
        fresh: list[IndexEntry] = []
        if read_fresh:
            limit = min(max_messages, READ_PAGE_ENTRIES)
            start = state.read_position
            cached = None
            if head is not None and head >= start:
                cached = index.run(ref.key, start, min(start + limit - 1, head))
            if cached is not None:
                fresh = cached
            else:
                page = min(2 * limit, READ_PAGE_ENTRIES) if head is not None else limit
                fresh = [e for e in log.read_from(ref.key, start, page) if not e.fence]
                index.put_many(ref.key, fresh)
                fresh = fresh[:limit]
            if fresh:  # ids below the first one read were expired: step over them
                state.skip_missing(fresh[0].entry_id)
        known = {e.entry_id: e for e in fresh}
        known.update(index.resolve(ref.key, redeliveries, log.get_many))
        return fresh, known

    def plan(
        self,
        ref: PartitionRef,
        state: CursorState,
        consumer_id: str,
        max_messages: int,
        now_ms: int,
        by_reference: bool = False,
        grant: tuple[int | None, int] | None = None,
        dealing: int = 0,
    ) -> tuple[list[Delivery], dict[int, IndexEntry]]:
        """Lease what to send (mutating ``state``): redeliveries first, then new entries,
        as many as one response holds. A grant (``grant``: the log's head read before the
        cursor, the messages the receive asked for) whose page came back full is bounded by
        an equal split among the consumers of what is left to dispatch (``grant_split``),
        so that the last entries are not granted to a few of them; it never takes less than
        the receive alone would have. ``dealing``: entries a dispatch round will deal to
        other consumers from the same page (``rounds``), read beyond this receive's own."""
        page = max_messages + dealing
        redeliveries = list(islice(state.redeliver, page))
        head = grant[0] if grant is not None else None
        fresh, known = self._entries_for(ref, state, redeliveries, page, read_fresh=True, head=head)
        candidates = [(e, known[e].count) for e in redeliveries if e in known]
        candidates += [(e.entry_id, e.count) for e in fresh]
        # a full page of the index: more waits beyond it, a page for every consumer as far
        # as this receive can tell, so its share is bounded by what it asked for alone
        full = len(fresh) >= min(page, READ_PAGE_ENTRIES)
        share = None if full else state.share_of(consumer_id, len(candidates))
        if grant is None and share is not None:  # at least Pulsar's round-robin turn
            share = max(share, round_robin_turn(candidates))
        if grant is not None:
            wanted = grant[1]
            if full and head is not None:
                left = len(candidates) + max(0, head - fresh[-1].entry_id)
                share = grant_split(left, len(state.consumers), max_messages)
            elif share is not None and len(fresh) >= wanted:  # what the receive alone takes
                share = max(share, wanted)
        deliveries = state.dispatch(
            consumer_id,
            candidates,
            max_messages,
            self._ctx.limits.max_unacked_entries,
            self.due(ref, state, known.values(), now_ms),
            self._budget.room(known, by_reference),
            share,
        )
        return deliveries, known

    def plan_key_shared(
        self,
        ref: PartitionRef,
        state: CursorState,
        consumer_id: str,
        max_messages: int,
        now_ms: int,
        by_reference: bool = False,
    ) -> tuple[list[Delivery], dict[int, IndexEntry]]:
        """Key_Shared: the redelivery window first, then (unless the window is truncated)
        new entries, a page of ``max_messages`` per consumer (each takes about its share of
        what it reads); each consumer takes the messages its selector assigns it."""
        limits = self._ctx.limits
        redeliveries, truncated = state.key_shared_window(limits.key_shared_window_entries)
        page = min(READ_PAGE_ENTRIES, max_messages * max(1, len(state.consumers)))
        fresh, known = self._entries_for(ref, state, redeliveries, page, read_fresh=not truncated)
        candidates = [(e, known[e].message_hashes()) for e in redeliveries if e in known]
        candidates += [(e.entry_id, e.message_hashes()) for e in fresh]
        deliveries = state.dispatch_key_shared(
            consumer_id,
            candidates,
            max_messages,
            limits.key_shared_max_unacked_messages,
            limits.key_shared_max_masked_entries,
            self.due(ref, state, known.values(), now_ms),
            self._budget.room(known, by_reference),
        )
        return deliveries, known
