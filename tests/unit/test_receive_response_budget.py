"""A receive response stays within its budget (Lambda answers at most 6 MB): the budget's
arithmetic, and the in-memory engine leasing no more than one response holds, in order,
losing nothing, for redeliveries too."""

from __future__ import annotations

import dataclasses
import json

from magnetar_core.adapters.memory import memory_stores
from magnetar_core.api import views
from magnetar_core.domain.log import IndexEntry
from magnetar_core.domain.response_budget import (
    ENTRY_FIELDS_BYTES,
    MESSAGE_FIELDS_BYTES,
    URL_FIELDS_BYTES,
    ResponseBudget,
    base64_bytes,
)
from magnetar_core.engine import Engine
from magnetar_local.memory_service import memory_settings
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.names import TopicName

TOPIC = TopicName.parse("persistent://public/default/budget")

ITEM = IndexEntry(
    entry_id=0, object_key="entries/a", offset=0, length=3000, count=2, batched=True,
    publish_min_ms=1, publish_max_ms=1, producer="p", sequence_min=0, sequence_max=1,
)  # fmt: skip
INLINE = dataclasses.replace(ITEM, entry_id=1, object_key="", data=b"x" * 3000)


def test_base64_counts_four_characters_for_every_started_three_bytes():
    assert [base64_bytes(n) for n in (0, 1, 3, 4, 3000)] == [0, 4, 4, 8, 4000]


def test_an_entry_costs_its_bytes_when_they_must_be_in_the_body_and_a_url_otherwise():
    budget = ResponseBudget()
    assert budget.least_cost(ITEM, by_reference=True) == URL_FIELDS_BYTES
    assert budget.least_cost(INLINE, by_reference=True) == 4000 + ENTRY_FIELDS_BYTES
    people = 4000 + ENTRY_FIELDS_BYTES + 2 * MESSAGE_FIELDS_BYTES  # one object per message
    assert budget.least_cost(ITEM, by_reference=False) == people


def test_s3_entries_go_in_the_body_in_order_while_the_response_has_room():
    items = [INLINE] + [dataclasses.replace(ITEM, entry_id=i) for i in (2, 3, 4)]
    least = 4000 + ENTRY_FIELDS_BYTES + 3 * URL_FIELDS_BYTES
    extra = 4000 + ENTRY_FIELDS_BYTES - URL_FIELDS_BYTES  # one S3 entry as bytes, not a URL
    budget = ResponseBudget(max_bytes=least + 2 * extra)
    assert budget.in_body(items, by_reference=True) == {1, 2, 3}
    assert budget.in_body(items, by_reference=False) == {1, 2, 3, 4}
    capped = dataclasses.replace(budget, s3_total_bytes=3000)  # S3 bytes: one entry's
    assert capped.in_body(items, by_reference=True) == {1, 2}
    too_big = dataclasses.replace(budget, s3_entry_max_bytes=2999)
    assert too_big.in_body(items, by_reference=True) == {1}


def test_the_room_admits_entries_while_their_cost_fits_and_counts_only_what_is_charged():
    budget = ResponseBudget(max_bytes=2 * (4000 + ENTRY_FIELDS_BYTES))
    room = budget.room({1: INLINE, 2: dataclasses.replace(INLINE, entry_id=2)}, True)
    assert room.fits(1) and room.fits(2)
    room.charge(1)
    room.charge(2)
    assert not room.fits(1)
    assert room.fits(99)  # not in the response's items: costs nothing


def _engine(response_max_bytes: int, index_inline_max_bytes: int = 4096) -> Engine:
    settings = memory_settings(
        receive_response_max_bytes=response_max_bytes,
        index_inline_max_bytes=index_inline_max_bytes,
    )
    engine = Engine.assemble(settings, memory_stores())
    engine.tenants.initialize_cluster()
    return engine


def _publish(engine: Engine, count: int, size: int) -> list[bytes]:
    payloads = [bytes([65 + i % 26]) * size for i in range(count)]
    for p in payloads:
        entry = encode_entry([EntryMessage(payload=p, sequence_id=0)], producer_name="p")
        engine.producer.publish(TOPIC, entry)
    return payloads


def _drain(engine: Engine, consumer: str, by_reference: bool, limit: int) -> list[list[int]]:
    """Entry ids of each receive until one comes back empty; every response's JSON must
    stay within ``limit`` bytes."""
    rounds: list[list[int]] = []
    while got := engine.subscriptions.receive(TOPIC, "s", consumer, 1000, 0, by_reference):
        shape = views.entries(got) if by_reference else views.messages(got)
        assert len(json.dumps(shape)) <= limit
        rounds.append([d.entry_id for d in got])
    return rounds


def test_inline_entries_are_leased_no_more_than_one_response_holds_and_all_come_in_order():
    engine = _engine(response_max_bytes=20_000)
    _publish(engine, 12, 3000)
    consumer = engine.subscriptions.subscribe(TOPIC, "s", "c", "Shared", earliest=True)
    rounds = _drain(engine, consumer.consumer_id, by_reference=True, limit=20_000)
    assert [len(r) for r in rounds] == [4, 4, 4]  # ~4.3 KB of base64 and fields each
    assert [i for r in rounds for i in r] == list(range(12))


def test_redelivered_entries_are_bounded_the_same_way():
    engine = _engine(response_max_bytes=20_000)
    _publish(engine, 8, 3000)
    consumer = engine.subscriptions.subscribe(TOPIC, "s", "c", "Shared", earliest=True)
    first = _drain(engine, consumer.consumer_id, by_reference=True, limit=20_000)
    assert sum(len(r) for r in first) == 8
    moved = engine.subscriptions.redeliver_unacknowledged(TOPIC, "s", consumer.consumer_id)
    assert moved == 8
    again = _drain(engine, consumer.consumer_id, by_reference=True, limit=20_000)
    assert [len(r) for r in again] == [4, 4]
    assert sorted(i for r in again for i in r) == list(range(8))


def test_the_people_shape_counts_s3_entries_whole_since_it_sends_no_urls():
    engine = _engine(response_max_bytes=20_000, index_inline_max_bytes=0)  # all in S3
    _publish(engine, 6, 3000)
    consumer = engine.subscriptions.subscribe(TOPIC, "s", "c", "Exclusive", earliest=True)
    rounds = _drain(engine, consumer.consumer_id, by_reference=False, limit=20_000)
    assert [len(r) for r in rounds] == [4, 2]  # ~4.8 KB each with the message's fields


def test_an_entry_larger_than_the_budget_still_goes_out_alone():
    engine = _engine(response_max_bytes=1_000)
    _publish(engine, 3, 3000)
    consumer = engine.subscriptions.subscribe(TOPIC, "s", "c", "Shared", earliest=True)
    rounds: list[list[int]] = []
    while got := engine.subscriptions.receive(TOPIC, "s", consumer.consumer_id, 100, 0, True):
        rounds.append([d.entry_id for d in got])
    assert rounds == [[0], [1], [2]]


def test_key_shared_dispatch_is_bounded_the_same_way():
    engine = _engine(response_max_bytes=20_000)
    _publish(engine, 10, 3000)
    consumer = engine.subscriptions.subscribe(TOPIC, "s", "c", "Key_Shared", earliest=True)
    rounds = _drain(engine, consumer.consumer_id, by_reference=True, limit=20_000)
    assert [len(r) for r in rounds] == [4, 4, 2]
    assert [i for r in rounds for i in r] == list(range(10))
