"""Grants on Key_Shared: a one-message receive takes a grant of the messages the selector
gives its consumer and is served from its grant item; a key's messages stay at one consumer
at a time (a join's moved keys drain at the holder of a grant until its acks are folded),
and a closed consumer's unhanded grant goes back uncounted to the keys' new owners. The
subscription service on memory adapters."""

from __future__ import annotations

import pytest
from grant_support import TOPIC, ack, cursor, memory_engine, receive_one

from magnetar_core.domain.cursor.state import KEY_SHARED
from magnetar_core.domain.keyshared import sticky_key_hash
from magnetar_core.engine import Engine
from magnetar_wire import EntryMessage, encode_entry

KEYS = [f"key-{i}" for i in range(8)]


@pytest.fixture
def engine() -> Engine:
    return memory_engine()


def produce(engine: Engine, keys: list[str]) -> None:
    """One one-message entry per key, payload ``<key>/<n>`` (n counts that key's messages)."""
    for i, key in enumerate(keys):
        message = EntryMessage(payload=f"{key}/{i}".encode(), sequence_id=i, publish_time_ms=1,
                               key=key)  # fmt: skip
        engine.producer.publish(TOPIC, encode_entry([message], producer_name="p"))


def subscribe(engine: Engine, name: str) -> str:
    subs = engine.subscriptions
    return subs.subscribe(TOPIC, "s", name, KEY_SHARED, earliest=True).consumer_id


def owner(engine: Engine, key: str) -> str | None:
    ks = cursor(engine).key_shared
    assert ks is not None
    return ks.selector.select(sticky_key_hash(key))


def test_a_key_shared_one_message_receive_is_served_from_the_consumers_grant(engine):
    consumer = subscribe(engine, "a")
    produce(engine, KEYS[:5])

    assert receive_one(engine, consumer) == [0]  # takes the grant: one cursor write
    version = cursor(engine).version
    assert [receive_one(engine, consumer) for _ in range(4)] == [[1], [2], [3], [4]]
    ack(engine, consumer, 0, 1, 2)

    assert cursor(engine).version == version  # served and acknowledged on the grant item
    assert receive_one(engine, consumer) == []
    assert cursor(engine).mark_delete == 2  # the long-poll's dispatch folded the acks


def test_a_grant_holds_only_the_keys_the_selector_gives_its_consumer(engine):
    first, second = subscribe(engine, "a"), subscribe(engine, "b")
    keys = KEYS * 3
    produce(engine, keys)
    mine = [i for i, k in enumerate(keys) if owner(engine, k) == first]
    assert 0 < len(mine) < len(keys)

    got = [receive_one(engine, first) for _ in range(len(mine))]

    assert [e for [e] in got] == mine  # in order, nothing of the other consumer's keys
    assert receive_one(engine, second)[0] not in mine


def test_a_key_moved_by_a_join_is_not_handed_to_its_new_owner_while_a_grant_holds_it(engine):
    first = subscribe(engine, "a")
    produce(engine, KEYS * 2)
    assert receive_one(engine, first) == [0]  # the grant holds all 16 entries
    second = subscribe(engine, "b")
    moved = [k for k in KEYS if owner(engine, k) == second]
    assert moved
    produce(engine, moved)  # a later message of each moved key
    later = set(range(16, 16 + len(moved)))

    assert engine.subscriptions.receive(TOPIC, "s", second, 1, 0) == []  # draining at a
    handed = [receive_one(engine, first) for _ in range(15)]
    assert [e for [e] in handed] == list(range(1, 16))
    ack(engine, first, *range(16))  # recorded on a's grant item, not folded yet
    assert engine.subscriptions.receive(TOPIC, "s", second, 1, 0) == []

    assert receive_one(engine, first) == []  # a's dispatch folds its acks: the keys drained
    got = [receive_one(engine, second) for _ in range(len(moved))]
    assert {e for [e] in got} == later


def test_a_closed_consumers_unhanded_grant_goes_to_the_keys_new_owner_uncounted(engine):
    first = subscribe(engine, "a")
    produce(engine, KEYS)
    assert receive_one(engine, first) == [0]  # 1..7 wait in its grant
    ack(engine, first, 0)
    second = subscribe(engine, "b")

    engine.subscriptions.close(TOPIC, "s", first)
    got = engine.subscriptions.receive(TOPIC, "s", second, 100, 0)

    assert [(d.entry_id, d.redelivery_count) for d in got] == [(e, 0) for e in range(1, 8)]


def test_stats_fold_a_grants_acks_that_release_a_draining_key_without_writing_them(engine):
    first = subscribe(engine, "a")
    produce(engine, KEYS)
    handed = [receive_one(engine, first) for _ in range(len(KEYS))]
    second = subscribe(engine, "b")  # the moved keys drain at a
    assert cursor(engine).key_shared.draining_at(first)
    ack(engine, first, *[e for [e] in handed])  # on a's grant item
    version = cursor(engine).version

    stats = engine.stats.topic_stats(engine.topics.get(TOPIC))["subscriptions"]["s"]

    assert stats["msgBacklog"] == 0  # the acks count at once, the hashes looked up
    by_name = {c["consumerName"]: c for c in stats["consumers"]}
    assert by_name["a"]["drainingHashesCount"] == 0
    assert cursor(engine).version == version and second in cursor(engine).consumers


def test_a_key_shared_receive_reads_a_page_of_its_max_messages_per_consumer(engine):
    consumers = [subscribe(engine, name) for name in ("a", "b", "c", "d")]
    keys = [f"key-{i}" for i in range(60)]
    produce(engine, keys)
    mine = [i for i, k in enumerate(keys) if owner(engine, k) == consumers[0]]
    assert 0 < len(mine) <= 40

    got = engine.subscriptions.receive(TOPIC, "s", consumers[0], 40, 0)  # 40: no grant

    # a page of 40 entries would hold about a quarter of its keys' messages; 4 x 40 all
    assert [d.entry_id for d in got] == mine
