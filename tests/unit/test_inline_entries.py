"""Inline entries: the index item codec with ``d``, DynamoDB's item size, the inline rule,
and the produce / read paths of the in-memory engine (no S3 object for a small entry)."""

from __future__ import annotations

import dataclasses

import pytest

from magnetar_core.adapters.memory import memory_stores
from magnetar_core.domain.log import IndexEntry, fits_inline, item_size
from magnetar_core.engine import Engine
from magnetar_core.ports import Stores
from magnetar_core.services.entries import entry_bytes
from magnetar_local.memory_service import memory_settings
from magnetar_wire import EntryMessage, decode_entry, encode_entry
from magnetar_wire.names import TopicName

PK = "persistent://public/default/t|1"
TOPIC = TopicName.parse("persistent://public/default/inline")

SMALL = IndexEntry(
    entry_id=7, object_key="", offset=0, length=5, count=1, batched=False,
    publish_min_ms=1_763_700_000_000, publish_max_ms=1_763_700_000_000, producer="p-1",
    sequence_min=3, sequence_max=3, key_hashes=(1234,), data=b"hello",
)  # fmt: skip


def test_an_inline_entry_survives_the_item_round_trip_with_its_bytes_in_d():
    item = SMALL.to_item(PK)
    assert item["d"] == {"B": b"hello"}
    assert item["obj"] == {"S": ""}
    back = IndexEntry.from_item(item)
    assert back == SMALL
    assert back.inline


def test_an_entry_in_s3_has_no_d_attribute_and_reads_back_as_not_inline():
    stored = dataclasses.replace(SMALL, object_key="entries/x", data=None)
    item = stored.to_item(PK)
    assert "d" not in item
    assert not IndexEntry.from_item(item).inline


def test_item_size_counts_names_and_values_as_dynamodb_does():
    item = {
        "pk": {"S": "ab"},  # 2 + 2
        "n": {"N": "12345"},  # 1 + (5 digits -> 3 bytes + 1)
        "b": {"BOOL": True},  # 1 + 1
        "d": {"B": b"\x00" * 10},  # 1 + 10
        "kb": {"NS": ["1", "22"]},  # 2 + 2 + 2
    }
    assert item_size(item) == 4 + 5 + 2 + 11 + 6


def test_item_size_refuses_a_value_of_no_known_type():
    with pytest.raises(ValueError, match="not a DynamoDB item value"):
        item_size({"x": {"S": "a", "N": "1"}})


def test_an_entry_fits_inline_exactly_up_to_the_item_limit():
    base = dataclasses.replace(SMALL, data=None)
    widest = dataclasses.replace(
        base, entry_id=2**63 - 1, epoch=2**63 - 1, exclusive=True, allocated_ms=2**63 - 1
    )
    overhead = widest.item_size_bytes(PK) + len("d")
    assert fits_inline(base, PK, 4096 - overhead, 4096)
    assert not fits_inline(base, PK, 4096 - overhead + 1, 4096)
    assert not fits_inline(base, PK, 1, 0)  # 0 turns inlining off
    committed = dataclasses.replace(widest, data=b"x" * (4096 - overhead))
    assert committed.item_size_bytes(PK) == 4096


def _engine(index_inline_max_bytes: int) -> tuple[Engine, Stores]:
    settings = memory_settings(index_inline_max_bytes=index_inline_max_bytes)
    stores = memory_stores()
    engine = Engine.assemble(settings, stores)
    engine.tenants.initialize_cluster()
    return engine, stores


def _entry(payload: bytes) -> bytes:
    return encode_entry([EntryMessage(payload=payload, sequence_id=0)], producer_name="p")


def test_a_small_entry_is_committed_inline_without_an_object_and_a_large_one_as_an_object():
    engine, stores = _engine(4096)
    small, large = _entry(b"s" * 100), _entry(b"L" * 5000)
    first = engine.producer.publish(TOPIC, small)
    second = engine.producer.publish(TOPIC, large)
    key = f"{TOPIC}|{first.ledger_id}"
    items = stores.log.get_many(key, [first.entry_id, second.entry_id])
    assert (items[0].data, items[0].object_key) == (small, "")
    assert items[1].data is None and items[1].object_key.startswith("entries/")
    assert list(stores.entries._objects) == [items[1].object_key]  # type: ignore[attr-defined]
    assert [entry_bytes(stores.entries, items[i]) for i in (0, 1)] == [small, large]


def test_with_inlining_off_every_entry_gets_an_object():
    engine, stores = _engine(0)
    result = engine.producer.publish(TOPIC, _entry(b"tiny"))
    item = stores.log.get_many(f"{TOPIC}|{result.ledger_id}", [0])[0]
    assert item.data is None and item.object_key in stores.entries._objects  # type: ignore[attr-defined]


def test_receive_by_reference_delivers_an_inline_entry_in_the_body_never_as_a_url():
    engine, stores = _engine(4096)
    consumer = engine.subscriptions.subscribe(TOPIC, "s", "c1", "Exclusive", earliest=True)
    engine.producer.publish(TOPIC, _entry(b"in the body"))
    got = engine.subscriptions.receive(TOPIC, "s", consumer.consumer_id, 10, 0, by_reference=True)
    assert [(d.url, decode_entry(d.data or b"").messages[0].payload) for d in got] == [
        (None, b"in the body")
    ]
