"""Grants raced by a revocation (``services.subscriptions.grants.Revoked``): whoever takes a
consumer's entries back (a seek, an operator's reset, ``redeliverUnacknowledgedMessages``, a
close, a nack) revokes its grant item, then writes the cursor. The consumer's own receive
may take a grant in between: it reads the item *after* the revocation (so recording its
grant does not fail on ``rev``) and the cursor *before* the revoker's write. Two ways on:

- the grant writes the cursor (it leased new entries): the revoker's write loses its
  version race and is retried on a cursor that now leases the new grant's entries; the
  retry must revoke the item again, or the grant survives the revoker's write.
- the grant only carries the unhanded deliveries of the revoked grant over (nothing new to
  lease, nothing to fold): it must still write the cursor, or the revoker's write does not
  lose its race at all and the carried deliveries are taken back behind the grant's back.

Either way, a grant left on the item after the revoker's write hands out entries the cursor
no longer leases to the consumer and records their acks where no fold ever looks: the
invariant checked here is that an ack confirmed to the consumer after the revoker returned
is never followed by a dispatch of that entry, and that every ack recorded on a grant item
is either in the cursor or of an entry the cursor still leases to the consumer (a fold will
take it). A store wrapper runs the consumer's one-message receive right after the revoker's
first revocation of its item, deterministically.

A dispatch round adds a writer that records a grant *without* a cursor write: a consumer
taking the slot another consumer's grant dealt it (``domain.cursor.rounds``). Its take is
conditional on ``rev`` and on the item not being revoked (a whole revocation leaves a
revoked item even where there was none), and a grant that takes an untaken slot back at
the backlog's end voids it on the owner's item first: both races are driven below.

A nack never was exposed: it revokes only the entries it names, which stay leased to the
consumer until its own cursor write, so a grant in between neither leases them again nor
keeps them in ``leased`` (it is kept here as a guard). Expiry is not driven: a consumer
lapsed by another's dispatch sees itself lapsed too and cannot take a grant (same clock);
the dispatch's revocations of lapsed consumers are repeated on every attempt all the same.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from grant_support import memory_engine

from magnetar_core.domain.cursor.grants import Grant
from magnetar_core.domain.cursor.state import KEY_SHARED, SHARED, CursorState
from magnetar_core.domain.errors import ConsumerNotFound
from magnetar_core.engine import Engine
from magnetar_wire import EntryMessage, encode_entry, format_message_id
from magnetar_wire.names import TopicName

TOPIC = TopicName.parse("persistent://public/default/grant-races")
GRANT = 32  # GrantPolicy.entries: the first one-message receive leases entries 0..31


@pytest.fixture
def engine() -> Engine:
    return memory_engine()


def produce(engine: Engine, entries: int) -> None:
    for i in range(entries):
        message = EntryMessage(payload=b"m%d" % i, sequence_id=i, publish_time_ms=1, key="k")
        engine.producer.publish(TOPIC, encode_entry([message], producer_name="p"))


def receive(engine: Engine, consumer: str, max_messages: int = 1) -> list[int]:
    got = engine.subscriptions.receive(TOPIC, "s", consumer, max_messages, 0)
    return [d.entry_id for d in got]


def message_id(engine: Engine, entry_id: int) -> str:
    ledger = engine.topics.resolve(TOPIC, create=False).ledger_id
    return format_message_id(ledger, entry_id, -1, -1)


def cursor(engine: Engine) -> CursorState:
    ref = engine.topics.resolve(TOPIC, create=False)
    state = engine.subscriptions.context.cursors.get(ref.key, "s")
    assert state is not None
    return state


def acknowledged(state: CursorState, entry_id: int) -> bool:
    return entry_id <= state.mark_delete or entry_id in state.acked


def lost_acks(engine: Engine, consumer: str) -> list[int]:
    """Acks recorded on the consumer's grant item that no fold will ever take: neither in
    the cursor nor of an entry the cursor leases to the consumer."""
    ref = engine.topics.resolve(TOPIC, create=False)
    grant = engine.subscriptions.context.cursors.grant(ref.key, "s", consumer)
    state = cursor(engine)
    lease = state.leases.get(consumer)
    held = set(lease) if lease is not None else set()
    acked = grant.acked if grant is not None else frozenset()
    return sorted(e for e in acked if not acknowledged(state, e) and e not in held)


Revoker = Callable[[Engine, str], object]
REVOKERS: dict[str, Revoker] = {
    "seek": lambda e, c: e.subscriptions.seek(TOPIC, "s", c, message_id="earliest", inclusive=True),
    "reset": lambda e, c: e.subscriptions.operations.reset_to_id(
        e.topics.resolve(TOPIC, create=False), "s", "earliest", True
    ),
    "redeliver": lambda e, c: e.subscriptions.redeliver_unacknowledged(TOPIC, "s", c),
    "close": lambda e, c: e.subscriptions.close(TOPIC, "s", c),
    "nack": lambda e, c: e.subscriptions.negative_acknowledge(TOPIC, "s", c, [message_id(e, 1)]),
}
REWINDING = {"seek", "reset"}
"""Revokers that rewind the cursor: what was delivered while they ran is delivered again
after them (an ack of an entry at or past the read position is ignored, as ever)."""


def race_a_grant_into_the_revocation(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, consumer: str
) -> list[list[int]]:
    """Wrap the cursor store so that the consumer's one-message receive runs right after the
    first revocation of its grant item; returns what that receive got (once it ran)."""
    store = engine.subscriptions.context.cursors
    revoke_grant = store.revoke_grant
    raced: list[list[int]] = []

    def revoking(
        pk: str, subscription: str, consumer_id: str, entry_ids: frozenset[int] | None
    ) -> Grant | None:
        grant = revoke_grant(pk, subscription, consumer_id, entry_ids)
        if consumer_id == consumer and not raced:
            raced.append(receive(engine, consumer))  # reads the item after the revocation
        return grant

    monkeypatch.setattr(store, "revoke_grant", revoking)
    return raced


CASES = [  # (backlog, entries of the grant handed out before the revocation)
    pytest.param(GRANT + 8, 2, id="grant-carries-and-leases-more"),
    pytest.param(GRANT, 2, id="grant-only-carries"),
    pytest.param(GRANT + 8, GRANT, id="grant-leases-more"),
]


@pytest.mark.parametrize("sub_type", [SHARED, KEY_SHARED])
@pytest.mark.parametrize(("backlog", "handed"), CASES)
@pytest.mark.parametrize("revoker", sorted(REVOKERS))
def test_an_ack_confirmed_after_a_revocation_raced_by_a_grant_is_never_dispatched_again(
    engine: Engine,
    monkeypatch: pytest.MonkeyPatch,
    revoker: str,
    backlog: int,
    handed: int,
    sub_type: str,
):
    subs = engine.subscriptions
    consumer = subs.subscribe(TOPIC, "s", "c", sub_type, earliest=True).consumer_id
    produce(engine, backlog)
    assert [receive(engine, consumer) for _ in range(handed)] == [[e] for e in range(handed)]
    version = cursor(engine).version  # the first receive took a grant of 0..31

    raced = race_a_grant_into_the_revocation(engine, monkeypatch, consumer)
    REVOKERS[revoker](engine, consumer)
    # the receive ran inside the revocation and got the next entry: from a new grant, or
    # (a nack leaves the rest of the grant alone) handed out from the old one
    assert raced == [[handed]]
    if revoker != "nack" or handed == GRANT:  # it took a grant: both wrote the cursor
        assert cursor(engine).version >= version + 2

    confirmed = []
    for turn in range(3):  # what the consumer got, and what its grant hands out next
        try:
            taken = raced.pop() if raced else receive(engine, consumer)
        except ConsumerNotFound:  # closed: nothing left to hand out
            taken = []
        for entry_id in taken:
            try:
                subs.acknowledge(TOPIC, "s", consumer, [message_id(engine, entry_id)], False)
            except ConsumerNotFound:  # after a close: not confirmed
                continue
            if turn > 0 or revoker not in REWINDING:
                confirmed.append(entry_id)

    assert lost_acks(engine, consumer) == []
    other = subs.subscribe(TOPIC, "s", "d", sub_type, earliest=True).consumer_id
    again: list[int] = []
    for _ in range(4):  # drain what both consumers are dispatched from the cursor
        for who in (consumer, other):
            if who in cursor(engine).consumers:
                again += receive(engine, who, 100)
    assert sorted(set(confirmed) & set(again)) == []


# -- dispatch rounds: a slot dealt by another consumer's grant, taken with no cursor write --

SLOT_REVOKERS = sorted(set(REVOKERS) - {"nack"})
"""A nack names entries handed out, and a slot's entries never were: it leaves a slot be."""


def deal_a_slot_to(engine: Engine, consumer: str, dealer: str, took_before: bool) -> set[int]:
    """Have ``dealer``'s grants deal a slot to ``consumer`` (after ``consumer`` took one and
    handed it all out, when ``took_before``); returns the slot's entries."""
    assert receive(engine, dealer) == [0]  # the dealer's grant deals a slot to the consumer
    if took_before:
        version = cursor(engine).version
        slot = sorted(cursor(engine).dealt[consumer].entries)
        assert [receive(engine, consumer) for _ in slot] == [[e] for e in slot]
        assert cursor(engine).version == version  # taken and handed out: no cursor write
        while receive(engine, dealer) and consumer not in untaken_slots(engine):
            pass  # the dealer hands its grant out, then its next grant deals again
    assert consumer in untaken_slots(engine)
    return set(cursor(engine).dealt[consumer].entries)


def untaken_slots(engine: Engine) -> set[str]:
    ref = engine.topics.resolve(TOPIC, create=False)
    state = cursor(engine)
    store = engine.subscriptions.context.cursors
    return {
        c
        for c, slot in state.dealt.items()
        if (store.grant(ref.key, "s", c) or Grant()).dealt_seq < slot.seq
    }


@pytest.mark.parametrize("took_before", [False, True], ids=["no-item-yet", "item-took-a-slot"])
@pytest.mark.parametrize("revoker", SLOT_REVOKERS)
def test_a_slot_taken_inside_a_revocation_never_outlives_it(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, revoker: str, took_before: bool
):
    subs = engine.subscriptions
    consumer = subs.subscribe(TOPIC, "s", "c", SHARED, earliest=True).consumer_id
    dealer = subs.subscribe(TOPIC, "s", "d", SHARED, earliest=True).consumer_id
    produce(engine, 200)
    slot = deal_a_slot_to(engine, consumer, dealer, took_before)

    # the consumer's receive runs right after the revocation of its item: it reads its item
    # after it and the cursor before the revoker's write, so the slot looks takeable
    raced = race_a_grant_into_the_revocation(engine, monkeypatch, consumer)
    REVOKERS[revoker](engine, consumer)
    assert len(raced) == 1
    confirmed: list[int] = []
    for turn in range(3):
        try:
            taken = raced.pop() if raced else receive(engine, consumer)
        except ConsumerNotFound:
            taken = []
        for entry_id in taken:
            try:
                subs.acknowledge(TOPIC, "s", consumer, [message_id(engine, entry_id)], False)
            except ConsumerNotFound:
                continue
            if turn > 0 or revoker not in REWINDING:
                confirmed.append(entry_id)
    assert lost_acks(engine, consumer) == []
    if revoker == "close":  # dealt, never delivered: back for others, uncounted
        state = cursor(engine)
        assert consumer not in state.dealt
        assert all(state.redelivery_counts.get(e, 0) == 0 for e in slot)

    other = subs.subscribe(TOPIC, "s", "e", SHARED, earliest=True).consumer_id
    again: list[int] = []
    for _ in range(6):
        for who in (consumer, dealer, other):
            if who in cursor(engine).consumers:
                again += receive(engine, who, 100)
    assert sorted(set(confirmed) & set(again)) == []


@pytest.mark.parametrize("took_before", [False, True], ids=["no-item-yet", "item-took-a-slot"])
def test_a_slot_taken_back_at_the_backlogs_end_is_never_handed_out_by_its_first_owner(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, took_before: bool
):
    """A grant that finds nothing left voids another consumer's untaken slot on its item
    (``void_slot``) before its cursor write sends the slot's entries back: the owner's take,
    run right after the void with the cursor read before that write, must fail."""
    subs = engine.subscriptions
    consumer = subs.subscribe(TOPIC, "s", "c", SHARED, earliest=True).consumer_id
    dealer = subs.subscribe(TOPIC, "s", "d", SHARED, earliest=True).consumer_id
    produce(engine, 96 if took_before else 64)  # the dealer's grants reach the log's end
    slot = deal_a_slot_to(engine, consumer, dealer, took_before)
    store = engine.subscriptions.context.cursors
    void_slot = store.void_slot
    raced: list[list[int]] = []

    def voiding(pk: str, subscription: str, consumer_id: str, seq: int) -> bool:
        voided = void_slot(pk, subscription, consumer_id, seq)
        if consumer_id == consumer and not raced:
            raced.append(receive(engine, consumer))
        return voided

    monkeypatch.setattr(store, "void_slot", voiding)
    delivered: list[int] = []

    def take(who: str, count: int = 1) -> list[int]:
        got = raced.pop() if who == consumer and raced else receive(engine, who, count)
        for entry_id in got:
            subs.acknowledge(TOPIC, "s", who, [message_id(engine, entry_id)], False)
        return got

    while not raced:  # the dealer hands its grant out; at the end its next grant steals
        got = receive(engine, dealer)
        assert got or raced, "the dealer ran dry without taking the slot back"
        delivered += got
        for entry_id in got:
            subs.acknowledge(TOPIC, "s", dealer, [message_id(engine, entry_id)], False)
    assert not set(raced[0]) & slot  # the owner's take of the voided slot failed
    ref = engine.topics.resolve(TOPIC, create=False)
    state = cursor(engine)
    assert store.grant(ref.key, "s", consumer).dealt_seq >= max(
        (sl.seq for c, sl in state.dealt.items() if c != consumer), default=0
    )
    assert all(state.redelivery_counts.get(e, 0) == 0 for e in slot)  # back uncounted
    for _ in range(40):  # drain: each entry once, the slot's too, none redelivered
        delivered += take(consumer) + take(dealer)
    assert len(delivered) == len(set(delivered))
    assert slot <= set(delivered)
    assert cursor(engine).redelivery_counts == {}
