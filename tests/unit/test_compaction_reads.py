"""Planning dispatches of readCompacted cursors (compaction_reads), on fakes of the stores."""

from __future__ import annotations

import pytest

from magnetar_core.domain.compaction import SUCCESS, CompactedEntry, CompactionState
from magnetar_core.domain.cursor.state import ConsumerInfo, CursorState
from magnetar_core.domain.errors import NotAllowedError
from magnetar_core.domain.log import IndexEntry
from magnetar_core.services.index_cache import IndexCache
from magnetar_core.services.subscriptions.compacted_reads import (
    CompactedReads,
    check_read_compacted,
)
from magnetar_core.services.topics import PartitionRef
from magnetar_wire.names import TopicName

TOPIC = TopicName.parse("persistent://public/default/t")
REF = PartitionRef(TOPIC, -1, 1)


def item(entry_id: int, count: int = 1, obj: str = "entries/x") -> IndexEntry:
    return IndexEntry(entry_id, obj, 0, 10, count, count > 1, 1, 1, "p", 0, 0)


class FakeStore:
    """The pointer and one compacted ledger ``L``: ``{entry id: (count, kept or None)}``."""

    def __init__(self, horizon: int, kept: dict[int, tuple[int, tuple[int, ...] | None]]):
        self.state = CompactionState(status=SUCCESS, horizon=horizon, ledger="L" if kept else "")
        self.entries = {
            e: CompactedEntry(item(e, n, obj="compacted/seg"), k) for e, (n, k) in kept.items()
        }
        self.reads: list[tuple[int, int]] = []

    def get(self, pk):
        return self.state

    def read_from(self, ledger, start, limit):
        self.reads.append((start, limit))
        return [self.entries[e] for e in sorted(self.entries) if e >= start][:limit]

    def get_many(self, ledger, ids):
        return {e: self.entries[e] for e in ids if e in self.entries}


class FakeLog:
    def __init__(self, count: int):
        self.items = {e: item(e) for e in range(count)}

    def get_many(self, pk, ids):
        return {e: self.items[e] for e in ids if e in self.items}


class Live:
    """The dispatcher's own plan: records the budgets it was called with, delivers nothing."""

    def __init__(self):
        self.calls: list[tuple[int, int]] = []

    def __call__(self, ref, state, consumer_id, max_messages, now_ms):
        self.calls.append((state.read_position, max_messages))
        return [], {}


def cursor(durable: bool = True) -> CursorState:
    state = CursorState.new("s", "Exclusive", -1, earliest=True)
    state.durable = durable
    state.read_compacted = True
    state.add_consumer(ConsumerInfo("c", "c", 0, 0), "Exclusive")
    return state


def plan(store, state, max_messages=100, log=None, live=None):
    reads = CompactedReads(store, log or FakeLog(20), IndexCache(), 1000)
    live = live or Live()
    deliveries, known = reads.plan(REF, state, "c", max_messages, 0, live)
    return deliveries, known, live


def test_the_view_is_delivered_in_order_and_what_it_dropped_counts_as_acknowledged():
    store = FakeStore(horizon=6, kept={2: (1, None), 4: (3, (0, 2))})
    state = cursor()
    deliveries, known, live = plan(store, state)
    assert [(d.entry_id, d.batch_indexes) for d in deliveries] == [(2, None), (4, (0, 2))]
    assert known[4].object_key == "compacted/seg"
    assert (state.mark_delete, state.read_position) == (1, 7)
    assert state.acked.ranges() == [(3, 3), (5, 6)]
    assert live.calls == [(7, 97)]


def test_acknowledging_the_kept_messages_of_a_batch_completes_the_entry():
    store = FakeStore(horizon=4, kept={0: (1, None), 4: (3, (1,))})
    state = cursor()
    plan(store, state)
    state.acknowledge([(0, -1), (4, 1)])
    assert (state.mark_delete, state.read_position, state.batch_acks) == (4, 5, {})


def test_a_cursor_past_the_horizon_reads_only_the_live_log():
    store = FakeStore(horizon=3, kept={1: (1, None)})
    state = cursor()
    state.seek(5)
    deliveries, _, live = plan(store, state, max_messages=10)
    assert (deliveries, store.reads, live.calls) == ([], [], [(5, 10)])


def test_the_budget_stops_the_view_and_the_next_plan_goes_on_from_the_next_kept_entry():
    store = FakeStore(horizon=9, kept={1: (1, None), 5: (1, None), 8: (1, None)})
    state = cursor(durable=False)
    first, _, live = plan(store, state, max_messages=2)
    assert [d.entry_id for d in first] == [1, 5]
    assert (state.read_position, live.calls) == (6, [])
    second, _, live = plan(store, state, max_messages=2)
    assert [d.entry_id for d in second] == [8]
    assert (state.mark_delete, state.read_position, live.calls) == (9, 10, [(10, 1)])


def test_an_empty_view_steps_over_everything_up_to_the_horizon():
    store = FakeStore(horizon=4, kept={})
    state = cursor()
    deliveries, _, live = plan(store, state)
    assert (deliveries, state.mark_delete, live.calls) == ([], 4, [(5, 100)])


def test_a_redelivered_entry_of_the_view_comes_from_the_compacted_ledger_with_its_mask():
    store = FakeStore(horizon=2, kept={1: (2, (1,))})
    state = cursor()
    plan(store, state)
    state.negative_acknowledge("c", [1])
    deliveries, known, _ = plan(store, state)
    assert [(d.entry_id, d.redelivery_count, d.batch_indexes) for d in deliveries] == [(1, 1, (1,))]
    assert known[1].object_key == "compacted/seg"


@pytest.mark.parametrize("sub_type", ["Shared", "Key_Shared"])
def test_compacted_reads_are_refused_on_shared_subscriptions(sub_type):
    with pytest.raises(NotAllowedError, match="exclusive or failover persistent"):
        check_read_compacted(TOPIC, sub_type)


def test_compacted_reads_are_refused_on_non_persistent_topics():
    with pytest.raises(NotAllowedError):
        check_read_compacted(TopicName.parse("non-persistent://public/default/t"), "Exclusive")
