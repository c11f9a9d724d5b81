"""The produce commit protocol on the emulator: dense ids, no loss, no duplicate, fencing."""

from __future__ import annotations

import threading
import time

import pytest

from magnetar_core.domain.errors import ChecksumError, InvalidMessage, MessageTooBig, StorageFault
from magnetar_core.domain.log import log_key
from magnetar_core.services.entries import entry_bytes
from magnetar_wire import decode_entry


def _committed_payloads(engine, topic, ledger: int | None = None) -> dict[int, bytes]:
    """entry id -> first payload of the topic's ledger (``ledger``: that one instead), read
    back through the index (and S3 for entries there)."""
    key = log_key(str(topic), ledger or engine.topics.get(topic).ledger_id)
    out = {}
    for item in engine.producer._log.read_from(key, 0, 1000):
        if not item.marker:  # fences, epoch markers, holes
            data = entry_bytes(engine.producer._entries, item)
            out[item.entry_id] = decode_entry(data).messages[0].payload
    return out


def test_four_concurrent_producers_on_one_partition_get_dense_ids_with_no_loss_or_duplicate(
    new_engine, topic, make_entry
):
    per_producer = 15
    engines = [new_engine() for _ in range(4)]
    engines[0].topics.create(topic, 0)
    results: dict[bytes, int] = {}
    lock = threading.Lock()
    errors: list[BaseException] = []

    def produce(index: int) -> None:
        try:
            for n in range(per_producer):
                payload = f"p{index}-{n}".encode()
                result = engines[index].producer.publish(topic, make_entry(payload))
                with lock:
                    results[payload] = result.entry_id
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=produce, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert errors == []
    assert sorted(results.values()) == list(range(4 * per_producer))
    committed = _committed_payloads(engines[0], topic)
    assert sorted(committed) == list(range(4 * per_producer))
    assert {committed[eid]: eid for eid in committed} == results


def test_a_batch_entry_gets_one_entry_id_and_batch_indexes(engine, topic, make_entry):
    first = engine.producer.publish(topic, make_entry(b"a"))
    batch = engine.producer.publish(topic, make_entry(b"x", b"y", b"z"))

    ledger = engine.topics.get(topic).ledger_id
    assert first.message_ids == (f"{ledger}:0:-1:-1",)
    assert batch.message_ids == tuple(f"{ledger}:1:-1:{i}" for i in range(3))


def test_a_crash_before_the_index_write_commits_nothing_and_its_id_becomes_a_hole(
    settings, engine_clients, topic, monkeypatch, make_entry
):
    from dataclasses import replace

    from magnetar_core.engine import Engine

    engine = Engine.build(replace(settings, log_hole_after_ms=100), clients=engine_clients)
    engine.producer.publish(topic, make_entry(b"kept"))

    def crash(*_args, **_kwargs):
        raise StorageFault("simulated crash between taking an entry id and the index write")

    monkeypatch.setattr(engine.producer._log, "append", crash)
    with pytest.raises(StorageFault):
        engine.producer.publish(topic, make_entry(b"lost-before-commit"))
    monkeypatch.undo()

    after = engine.producer.publish(topic, make_entry(b"next"))
    assert after.entry_id == 2  # id 1 was taken by the crashed writer
    deadline = time.monotonic() + 10
    while _committed_payloads(engine, topic) != {0: b"kept", 2: b"next"}:
        assert time.monotonic() < deadline, "readers never settled the crashed writer's id"
    assert engine.producer._log.get_many(engine.topics.resolve(topic, create=False).key, [1]) == {}


def test_a_producer_with_a_stale_ledger_lands_in_the_recreated_topic(new_engine, topic, make_entry):
    producer_side, admin_side = new_engine(), new_engine()
    old = producer_side.producer.publish(topic, make_entry(b"old"))
    admin_side.topics.delete(topic, partitioned=False, force=True)

    result = producer_side.producer.publish(topic, make_entry(b"new"))

    assert result.entry_id == 0 and result.ledger_id > old.ledger_id  # never the old ids
    assert result.ledger_id == admin_side.topics.get(topic).ledger_id
    assert _committed_payloads(admin_side, topic, ledger=result.ledger_id) == {0: b"new"}


def test_bad_entries_are_refused_and_change_nothing(engine, topic, make_entry):
    engine.producer.publish(topic, make_entry(b"ok"))
    corrupted = bytearray(make_entry(b"payload"))
    corrupted[-1] ^= 0xFF
    with pytest.raises(ChecksumError):
        engine.producer.publish(topic, bytes(corrupted))
    with pytest.raises(MessageTooBig):
        engine.producer.publish(
            topic,
            make_entry(b"x" * (engine.namespaces.effective(topic).max_message_size_bytes + 1)),
        )

    assert _committed_payloads(engine, topic) == {0: b"ok"}


def test_producing_to_a_partitioned_base_name_routes_by_key_hash_as_the_sdk_does(
    engine, make_entry
):
    import uuid

    from magnetar_wire.names import TopicName
    from magnetar_wire.routing import partition_of_key

    base = TopicName.parse(f"persistent://public/default/routed-{uuid.uuid4().hex[:8]}")
    engine.topics.create(base, 4)
    java = engine.producer.publish(base, make_entry(b"a", key="customer-7"))
    murmur = engine.producer.publish(
        base, make_entry(b"b", key="customer-7"), hashing_scheme="Murmur3_32Hash"
    )
    keyless = {engine.producer.publish(base, make_entry(b"c")).partition for _ in range(4)}

    assert java.partition == partition_of_key("customer-7", 4, "JavaStringHash")
    assert str(java.topic) == f"{base}-partition-{java.partition}"
    assert murmur.partition == partition_of_key("customer-7", 4, "Murmur3_32Hash")
    assert keyless == {0, 1, 2, 3}  # round robin over the partitions
    with pytest.raises(InvalidMessage):
        engine.producer.publish(base, make_entry(b"d", key="k"), hashing_scheme="Boost")
