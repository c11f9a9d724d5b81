"""A model test of Key_Shared dispatch: random produces, joins, leaves, receives and acks.

After every step: no key is in flight to two consumers at once; a message is handed out only
to the consumer its hash selects and only when every earlier message of its key is
acknowledged or already in flight to that same consumer (order by key); whatever the nacks
(at once, or with a delay: the delayed set and its releases), a message is first delivered
only after every earlier message of its key was (Pulsar's per-key order of first
deliveries); the cursor's leases agree with what the model saw delivered; each message
comes with the number of times it was itself delivered and went back (a nack of one
message of a batch counts that message only). At the end every message gets delivered and
acked.
"""

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
CONSUMERS = [f"c{i}" for i in range(4)]
WINDOW, READ_LIMIT, MAX_UNACKED = 3, 4, 6

step = st.one_of(
    st.tuples(st.just("produce"), st.lists(st.integers(0, 6), min_size=1, max_size=4)),
    st.tuples(st.just("produce"), st.lists(st.integers(0, 6), min_size=1, max_size=4)),
    st.tuples(st.just("receive"), st.sampled_from(CONSUMERS), st.integers(1, 5)),
    st.tuples(st.just("join"), st.sampled_from(CONSUMERS)),
    st.tuples(st.just("leave"), st.sampled_from(CONSUMERS)),
    st.tuples(st.just("receive"), st.sampled_from(CONSUMERS), st.integers(1, 5)),
    st.tuples(st.just("ack"), st.sampled_from(CONSUMERS), st.integers(1, 4)),
    st.tuples(st.just("nack"), st.sampled_from(CONSUMERS)),
    st.tuples(st.just("nack_one"), st.sampled_from(CONSUMERS)),
)
steps = st.lists(step, min_size=20, max_size=80)
delayed_steps = st.lists(
    st.one_of(
        step,
        st.tuples(st.just("delayed_nack"), st.sampled_from(CONSUMERS)),
        st.tuples(st.just("release")),
    ),
    min_size=20,
    max_size=80,
)


class Model:
    def __init__(self, consistent: bool) -> None:
        self.options = KeySharedOptions(use_consistent_hashing=consistent)
        self.state = CursorState.new("sub", KEY_SHARED, last_entry_id=-1, earliest=True)
        self.keys: list[tuple[int, ...]] = []  # per entry: key of each message
        self.acked: set[tuple[int, int]] = set()
        self.flight: dict[str, set[tuple[int, int]]] = {}
        self.first: set[tuple[int, int]] = set()  # messages delivered at least once
        self.back: dict[tuple[int, int], int] = {}  # times each went back from a consumer
        self.nacked = False
        self.buckets = 0  # due buckets of delayed nacks so far (each a new one)

    def hashes_of(self, entry_ids):
        return {e: tuple(KEY_HASHES[k] for k in self.keys[e]) for e in entry_ids}

    def join(self, cid: str) -> None:
        if cid not in self.flight:
            info = ConsumerInfo(cid, cid, 1, 1)
            self.state.add_consumer(info, KEY_SHARED, self.options, self.hashes_of)
            self.flight[cid] = set()

    def leave(self, cid: str) -> None:
        if cid in self.flight:
            self.state.remove_consumer(cid)
            self.went_back(self.flight.pop(cid))

    def went_back(self, msgs) -> None:
        for m in msgs:
            self.back[m] = self.back.get(m, 0) + 1

    def receive(self, cid: str, max_messages: int) -> None:
        if cid not in self.flight:
            return
        state = self.state
        redeliveries, truncated = state.key_shared_window(WINDOW)
        entries = list(redeliveries)
        if not truncated:
            entries += range(
                state.read_position, min(len(self.keys), state.read_position + READ_LIMIT)
            )
        candidates = list(self.hashes_of(entries).items())
        for d in state.dispatch_key_shared(cid, candidates, max_messages, MAX_UNACKED):
            count = len(self.keys[d.entry_id])
            for i in d.batch_indexes or range(count):
                self.deliver(cid, (d.entry_id, i), d.redelivery_count)

    def deliver(self, cid: str, msg: tuple[int, int], count: int) -> None:
        assert count == self.back.get(msg, 0), ("redelivery count", msg, count)
        key = self.keys[msg[0]][msg[1]]
        assert msg not in self.acked and all(msg not in f for f in self.flight.values())
        assert self.state.key_shared.selector.select(KEY_HASHES[key]) == cid
        earlier = [m for m in self.messages_of(key) if m < msg]
        if not self.nacked:
            for m in earlier:
                assert m in self.acked or m in self.flight[cid], (m, msg)
        if msg not in self.first:
            assert all(m in self.first for m in earlier), ("first delivered out of order", msg)
            self.first.add(msg)
        self.flight[cid].add(msg)

    def messages_of(self, key: int):
        return [(e, i) for e, ks in enumerate(self.keys) for i, k in enumerate(ks) if k == key]

    def ack(self, cid: str, n: int) -> None:
        if cid not in self.flight:
            return
        mine = sorted(self.flight[cid])[:n]
        positions = [(e, -1 if len(self.keys[e]) == 1 else i) for e, i in mine]
        self.state.acknowledge(positions, self.hashes_of)
        self.flight[cid] -= set(mine)
        self.acked |= set(mine)

    def nack(self, cid: str) -> None:
        if cid in self.flight and self.flight[cid]:
            self.nacked = True
            self.state.redeliver_all(cid, self.hashes_of)
            self.went_back(self.flight[cid])
            self.flight[cid] = set()

    def nack_one(self, cid: str) -> None:
        """Nack the consumer's first message alone (its batch index named)."""
        if cid in self.flight and self.flight[cid]:
            self.nacked = True
            entry, i = min(self.flight[cid])
            index = -1 if len(self.keys[entry]) == 1 else i
            self.state.negative_acknowledge(cid, [entry], self.hashes_of, indexes={entry: {index}})
            self.went_back([(entry, i)])
            self.flight[cid].discard((entry, i))

    def delayed_nack(self, cid: str) -> None:
        """Nack the consumer's first entry with a delay (a new due bucket)."""
        if cid in self.flight and self.flight[cid]:
            self.nacked = True
            entry = min(e for e, _ in self.flight[cid])
            self.buckets += 1
            due = self.buckets * 1000
            self.state.negative_acknowledge(cid, [entry], self.hashes_of, lambda count: due)
            self.went_back(m for m in self.flight[cid] if m[0] == entry)
            self.flight[cid] = {m for m in self.flight[cid] if m[0] != entry}

    def release(self) -> None:
        """Every delayed bucket's timer fires."""
        self.state.released = set(self.state.delayed)
        self.state.consume_releases(now_ms=10**12)

    def check(self) -> None:
        owners: dict[int, set[str]] = {}
        for cid, msgs in self.flight.items():
            for e, i in msgs:
                owners.setdefault(self.keys[e][i], set()).add(cid)
            held = {
                (e, i)
                for e in self.state.leases.get(cid, ())
                for i in self.state.key_shared.held_by(
                    cid,
                    e,
                    len(self.keys[e]),
                    self.state.leases.get(cid),
                    self.state.batch_acks.get(e, ()),
                )
            }
            assert held == msgs
        assert all(len(c) == 1 for c in owners.values()), owners


def run(model: Model, program) -> None:
    for step in program:
        kind, *args = step
        if kind == "produce":
            model.keys.append(tuple(args[0]))
        elif kind in ("nack", "nack_one") and not allow_nacks:
            continue
        else:
            getattr(model, kind)(*args)
        model.check()
    model.join("c0")
    for _ in range(200):
        if model.state.mark_delete == len(model.keys) - 1:
            break
        model.release()
        for cid in list(model.flight):
            model.receive(cid, 5)
            model.check()
            model.ack(cid, 10)
    assert model.state.mark_delete == len(model.keys) - 1
    assert model.acked == {(e, i) for e, ks in enumerate(model.keys) for i in range(len(ks))}


allow_nacks = False


@settings(max_examples=examples(300), deadline=None)
@given(steps, st.booleans())
def test_keys_stay_with_one_consumer_in_order_while_consumers_join_and_leave(program, consistent):
    global allow_nacks
    allow_nacks = False
    run(Model(consistent), program)


@settings(max_examples=examples(200), deadline=None)
@given(steps, st.booleans())
def test_nacks_keep_each_key_at_one_consumer_at_a_time(program, consistent):
    global allow_nacks
    allow_nacks = True
    run(Model(consistent), program)


@settings(max_examples=examples(200), deadline=None)
@given(delayed_steps, st.booleans())
def test_delayed_nacks_never_let_a_keys_later_message_be_first_delivered_before(
    program, consistent
):
    global allow_nacks
    allow_nacks = True
    run(Model(consistent), program)
