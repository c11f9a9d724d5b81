"""A model test of Key_Shared per-key order as the *application* sees it (reliability
finding 7): the cursor's dispatch plus what the SDK does between the service and the
application.

Each consumer has a receiver queue; a message is first delivered when the application takes
it from the queue, not when the service leases it. Besides joins, leaves, receives, acks and
releases of delayed buckets, the program may:

- ``take``: the application takes the next queued message and acknowledges it, or nacks it
  with a delay. As the SDK's ``BatchHolds`` does, a nack of a batch message waits while other
  messages of its entry are still queued at that consumer;
- ``lost``: a receive whose answer was lost (the service leased, the consumer got nothing):
  the SDK asks the service to redeliver what is in flight to it, then drops its queue and
  the nacks not sent yet (``AckTracker.dropped``); a nack already sent may be sent again
  (``retry_nack``: its answer was lost), carrying the redelivery count it saw (``seen``).

Checked: per key, messages are first taken by the application in the topic's order; at the
end every message is taken and acknowledged.
"""

from __future__ import annotations

from collections import deque

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from magnetar_core.domain.cursor.state import (
    KEY_SHARED,
    ConsumerInfo,
    CursorState,
    KeySharedOptions,
)

KEY_HASHES = [100, 16_000, 20_000, 33_000, 40_000, 50_000, 65_000]
CONSUMERS = ("c0", "c1", "c2")
Msg = tuple[int, int]  # (entry id, batch index)

step = st.one_of(
    st.tuples(st.just("produce"), st.lists(st.integers(0, 6), min_size=1, max_size=4)),
    st.tuples(st.just("receive"), st.sampled_from(CONSUMERS), st.integers(1, 6)),
    st.tuples(st.just("take"), st.sampled_from(CONSUMERS), st.booleans()),
    st.tuples(st.just("take"), st.sampled_from(CONSUMERS), st.just(False)),
    st.tuples(st.just("lost"), st.sampled_from(CONSUMERS)),
    st.tuples(st.just("join"), st.sampled_from(CONSUMERS)),
    st.tuples(st.just("leave"), st.sampled_from(CONSUMERS)),
    st.tuples(st.just("release")),
    st.tuples(st.just("flush_held"), st.sampled_from(CONSUMERS)),
    st.tuples(st.just("retry_nack"), st.sampled_from(CONSUMERS)),
)


class ClientModel:
    """The cursor, and per consumer its receiver queue and held-back nacks."""

    def __init__(self) -> None:
        self.state = CursorState.new("sub", KEY_SHARED, last_entry_id=-1, earliest=True)
        self.keys: list[tuple[int, ...]] = []
        self.queues: dict[str, deque[tuple[Msg, int]]] = {}  # (message, redelivery count)
        self.held: dict[str, list[tuple[int, int]]] = {}  # nacks waiting: (entry, seen)
        self.taken: set[Msg] = set()  # first taken by the application
        self.acked: set[Msg] = set()
        self.buckets = 0
        self.sent: dict[str, tuple[int, int]] = {}  # the last nack sent, per consumer

    def hashes_of(self, entry_ids):
        return {e: tuple(KEY_HASHES[k] for k in self.keys[e]) for e in entry_ids}

    def produce(self, keys: list[int]) -> None:
        self.keys.append(tuple(keys))

    def join(self, cid: str) -> None:
        if cid not in self.queues:
            info = ConsumerInfo(cid, cid, 1, 1)
            self.state.add_consumer(info, KEY_SHARED, KeySharedOptions(), self.hashes_of)
            self.queues[cid], self.held[cid] = deque(), []

    def leave(self, cid: str) -> None:
        """A close: the queue is dropped, the service sends back what was in flight."""
        if cid in self.queues:
            self.state.remove_consumer(cid)
            del self.queues[cid], self.held[cid]

    def receive(self, cid: str, max_messages: int, lost: bool = False) -> None:
        if cid not in self.queues:
            return
        state = self.state
        redeliveries, truncated = state.key_shared_window(3)
        entries = list(redeliveries)
        if not truncated:
            entries += range(state.read_position, min(len(self.keys), state.read_position + 4))
        candidates = list(self.hashes_of(entries).items())
        for d in state.dispatch_key_shared(cid, candidates, max_messages, 6):
            if not lost:
                for i in d.batch_indexes or range(len(self.keys[d.entry_id])):
                    self.queues[cid].append(((d.entry_id, i), d.redelivery_count))

    def lost(self, cid: str) -> None:
        """A receive served but unseen, then the SDK's recovery (``redeliver_lost``)."""
        if cid not in self.queues:
            return
        self.receive(cid, 6, lost=True)
        self.state.redeliver_all(cid, self.hashes_of)
        self.queues[cid].clear()
        self.held[cid] = []  # AckTracker.dropped: the waiting nacks go with the queue

    def take(self, cid: str, nack: bool) -> None:
        queue = self.queues.get(cid)
        if not queue:
            return
        msg, count = queue.popleft()
        if msg in self.acked:
            return  # the SDK's AckedIds: never handed out again
        if msg not in self.taken:
            key = self.keys[msg[0]][msg[1]]
            earlier = [(e, i) for e, ks in enumerate(self.keys) for i, k in enumerate(ks)
                       if k == key and (e, i) < msg]  # fmt: skip
            assert all(m in self.taken for m in earlier), ("first taken out of order", msg)
            self.taken.add(msg)
        if not nack:
            size = len(self.keys[msg[0]])
            self.state.acknowledge([(msg[0], -1 if size == 1 else msg[1])], self.hashes_of)
            self.acked.add(msg)
            return
        self.held[cid].append((msg[0], count))

    def flush_held(self, cid: str) -> None:
        """Send the nacks whose entry has no message left in the queue (BatchHolds), as
        the ack group does when its time is up."""
        if cid not in self.queues:
            return
        queued = {m[0] for m, _ in self.queues[cid]}
        ready = [(e, s) for e, s in self.held[cid] if e not in queued]
        self.held[cid] = [(e, s) for e, s in self.held[cid] if e in queued]
        for entry, seen in ready:
            self.send_nack(cid, entry, seen)

    def retry_nack(self, cid: str) -> None:
        """The last nack's answer was lost after it was applied: the SDK sends it again."""
        if cid in self.queues and self.sent.get(cid):
            self.send_nack(cid, *self.sent[cid])

    def send_nack(self, cid: str, entry: int, seen: int) -> None:
        self.sent[cid] = (entry, seen)
        self.buckets += 1
        due = self.buckets * 1000
        self.state.negative_acknowledge(
            cid, [entry], self.hashes_of, lambda count: due, seen={entry: seen}
        )

    def release(self) -> None:
        self.state.released = set(self.state.delayed)
        self.state.consume_releases(now_ms=10**12)


def run(program) -> None:
    model = ClientModel()
    for kind, *args in program:
        getattr(model, kind)(*args)
    model.join("c0")
    everything = {(e, i) for e, ks in enumerate(model.keys) for i in range(len(ks))}
    for _ in range(300):
        if model.acked == everything:
            break
        model.release()
        for cid in list(model.queues):
            model.receive(cid, 6)
            while model.queues[cid]:
                model.take(cid, False)
            model.flush_held(cid)
    assert model.acked == everything


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(step, min_size=20, max_size=90))
def test_the_application_first_takes_each_keys_messages_in_order_whatever_the_sdk_drops(
    program,
):
    run(program)
