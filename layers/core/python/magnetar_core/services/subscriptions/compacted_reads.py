"""Serving compacted reads: a ``readCompacted`` cursor reads the compacted view of its
partition while its read position is at or below the compaction horizon, then the live log.

The dispatcher hands such a cursor's planning to ``CompactedReads.plan`` (one line in
``dispatch``). Message ids stay the original ones: the compacted ledger is keyed by original
entry ids. Entries the view dropped count as acknowledged (the cursor steps over them), and
in a kept batch entry the dropped messages count as acknowledged batch indexes, so the
ordinary delivery mask hands out only the kept ones and acknowledging those completes the
entry. A redelivery at or below the horizon is read from the compacted ledger (its copy
survives retention), from the live log only if the view does not hold it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import islice

from magnetar_core.domain.cursor.state import EXCLUSIVE, FAILOVER, CursorState, Delivery
from magnetar_core.domain.errors import NotAllowedError
from magnetar_core.domain.log import IndexEntry
from magnetar_core.ports import CompactionStore, LogStore
from magnetar_core.services.index_cache import IndexCache
from magnetar_core.services.topics import PartitionRef
from magnetar_wire.names import TopicName

Plan = Callable[
    [PartitionRef, CursorState, str, int, int], tuple[list[Delivery], dict[int, IndexEntry]]
]


def check_read_compacted(topic: TopicName, sub_type: str) -> None:
    """Pulsar's rule: compacted reads only on Exclusive or Failover persistent subscriptions
    (readers are Exclusive). Raises NotAllowedError."""
    if not topic.persistent or sub_type not in (EXCLUSIVE, FAILOVER):
        raise NotAllowedError(
            "Read compacted can only be used with exclusive or failover persistent subscriptions"
        )


def skip_to(state: CursorState, entry_id: int) -> None:
    """Step the read position over entries the compacted view dropped (they count as
    acknowledged)."""
    if entry_id > state.read_position:
        state.acked.add_range(state.read_position, entry_id - 1)
        state.read_position = entry_id


def mask_kept(state: CursorState, entry_id: int, count: int, kept: Iterable[int] | None) -> None:
    """Record the messages of a batch entry the view dropped as acknowledged indexes."""
    if kept is None:
        return
    dropped = set(range(count)) - set(kept)
    if dropped:
        state.batch_sizes[entry_id] = count
        state.batch_acks.setdefault(entry_id, set()).update(dropped)


def _messages(deliveries: list[Delivery], known: dict[int, IndexEntry]) -> int:
    return sum(
        known[d.entry_id].count if d.batch_indexes is None else len(d.batch_indexes)
        for d in deliveries
    )


class CompactedReads:
    """Plans dispatches of ``readCompacted`` cursors (mutating the cursor state, like the
    dispatcher's own plans). Costs one pointer read per dispatch, one compacted-ledger query
    while below the horizon."""

    def __init__(
        self, store: CompactionStore, log: LogStore, index: IndexCache, max_unacked_entries: int
    ) -> None:
        self._store = store
        self._log = log
        self._index = index
        self._max_unacked = max_unacked_entries

    def planner(self, live: Plan) -> Plan:
        """A plan like ``live`` that serves the compacted view first."""

        def plan(
            ref: PartitionRef, state: CursorState, consumer_id: str, n: int, now_ms: int
        ) -> tuple[list[Delivery], dict[int, IndexEntry]]:
            return self.plan(ref, state, consumer_id, n, now_ms, live)

        return plan

    def plan(
        self,
        ref: PartitionRef,
        state: CursorState,
        consumer_id: str,
        max_messages: int,
        now_ms: int,
        live: Plan,
    ) -> tuple[list[Delivery], dict[int, IndexEntry]]:
        """Redeliveries, then the compacted view from the read position up to the horizon,
        then (once past it) whatever ``live`` plans from the live log."""
        pointer = self._store.get(ref.key)
        horizon, ledger = pointer.horizon, pointer.ledger
        in_view = state.read_position <= horizon
        waiting = list(islice(state.redeliver, max_messages))
        known: dict[int, IndexEntry] = {}
        out: list[Delivery] = []
        if in_view or (ledger and waiting and waiting[0] <= horizon):
            out = self._redeliver(
                ref, state, consumer_id, waiting, max_messages, ledger, horizon, known
            )
        given = _messages(out, known)
        if in_view and given < max_messages:
            given = self._view(state, consumer_id, max_messages, given, ledger, horizon, out, known)
        if state.read_position > horizon and given < max_messages:
            more, live_known = live(ref, state, consumer_id, max_messages - given, now_ms)
            out += more
            known.update(live_known)
        return out, known

    def _view(
        self,
        state: CursorState,
        consumer_id: str,
        max_messages: int,
        given: int,
        ledger: str,
        horizon: int,
        out: list[Delivery],
        known: dict[int, IndexEntry],
    ) -> int:
        """Lease the view's entries from the read position (appended to ``out``); past its
        last one, step to the horizon + 1. Returns the messages handed out so far."""
        limit = min(max_messages, 1000)
        items = self._store.read_from(ledger, state.read_position, limit) if ledger else []
        for item in items:
            if given >= max_messages:
                break
            if item.entry_id > horizon:
                skip_to(state, horizon + 1)
                break
            skip_to(state, item.entry_id)
            mask_kept(state, item.entry_id, item.entry.count, item.kept)
            known[item.entry_id] = item.entry
            budget = max_messages - given
            got = state.dispatch(
                consumer_id, [(item.entry_id, item.entry.count)], budget, self._max_unacked
            )
            if state.read_position == item.entry_id:
                break  # the consumer holds all it may: stop here
            out += got
            given = _messages(out, known)
        else:
            if len(items) < limit:
                skip_to(state, horizon + 1)  # the view is exhausted: the live log follows
        state.acks.advance()
        return given

    def _redeliver(
        self,
        ref: PartitionRef,
        state: CursorState,
        consumer_id: str,
        wanted: list[int],
        max_messages: int,
        ledger: str,
        horizon: int,
        known: dict[int, IndexEntry],
    ) -> list[Delivery]:
        """Redeliver ``wanted`` (the first entries waiting for it): compacted copies at or
        below the horizon, the live log's items otherwise."""
        if not wanted:
            return []
        low = [e for e in wanted if e <= horizon]
        found = self._store.get_many(ledger, low) if ledger and low else {}
        for entry_id, item in found.items():
            known[entry_id] = item.entry
            mask_kept(state, entry_id, item.entry.count, item.kept)
        rest = [e for e in wanted if e not in found]
        known.update(self._index.resolve(ref.key, rest, self._log.get_many))
        candidates = [(e, known[e].count) for e in wanted if e in known]
        return state.dispatch(consumer_id, candidates, max_messages, self._max_unacked)
