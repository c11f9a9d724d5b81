"""Deduplication on the emulator: per producer name, crashes between steps, cold rebuilds."""

from __future__ import annotations

import uuid

import pytest

from magnetar_core.domain.errors import StorageFault
from magnetar_local.tenancy import ensure_namespaces
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.names import TopicName


@pytest.fixture
def dedup_topic(engine) -> TopicName:
    topic = TopicName.parse(f"persistent://public/dedup-{uuid.uuid4().hex[:8]}/t")
    ensure_namespaces(engine, f"{topic.tenant}/{topic.namespace}")
    engine.namespaces.set_deduplication(topic.tenant, topic.namespace, True)
    return topic


def _entry(producer: str, *sequence_ids: int) -> bytes:
    messages = [
        EntryMessage(payload=f"{producer}-{s}".encode(), sequence_id=s, publish_time_ms=1)
        for s in sequence_ids
    ]
    return encode_entry(messages, producer_name=producer)


def _committed(engine, topic) -> list[tuple[str, int]]:
    key = engine.topics.resolve(topic, create=False).key
    return [
        (e.producer, e.sequence_max)
        for e in engine.producer._log.read_from(key, 0, 1000)
        if e.count
    ]


def test_a_resend_of_an_old_sequence_id_is_acknowledged_and_dropped(engine, dedup_topic):
    for seq in range(3):
        assert engine.producer.publish(dedup_topic, _entry("p", seq)).duplicate is False
    again = engine.producer.publish(dedup_topic, _entry("p", 1))
    other = engine.producer.publish(dedup_topic, _entry("q", 1))

    assert again.duplicate is True and again.message_ids == ("-1:-1:-1:-1",)
    assert other.duplicate is False
    assert _committed(engine, dedup_topic) == [("p", 0), ("p", 1), ("p", 2), ("q", 1)]


def test_last_sequence_id_survives_a_new_process(engine, new_engine, dedup_topic):
    engine.producer.publish(dedup_topic, _entry("p", 0, 1, 2))
    engine.producer.publish(dedup_topic, _entry("p", 7))

    cold = new_engine()
    assert cold.access.register(dedup_topic, "p", "Shared").last_sequence_id == 7
    assert cold.access.register(dedup_topic, "fresh", "Shared").last_sequence_id == -1
    assert cold.producer.publish(dedup_topic, _entry("p", 7)).duplicate is True


def test_a_crash_between_the_object_write_and_the_commit_loses_nothing_and_duplicates_nothing(
    engine, dedup_topic, monkeypatch
):
    def crash(*_args, **_kwargs):
        raise StorageFault("simulated crash before the index commit")

    monkeypatch.setattr(engine.producer._log, "append", crash)
    with pytest.raises(StorageFault):
        engine.producer.publish(dedup_topic, _entry("p", 0))
    monkeypatch.undo()

    assert engine.producer.publish(dedup_topic, _entry("p", 0)).duplicate is False
    assert engine.producer.publish(dedup_topic, _entry("p", 0)).duplicate is True
    assert _committed(engine, dedup_topic) == [("p", 0)]


def test_a_crash_between_the_commit_and_the_dedup_update_does_not_duplicate_the_resend(
    engine, new_engine, dedup_topic, monkeypatch
):
    def crash(*_args, **_kwargs):
        raise StorageFault("simulated crash after the commit")

    monkeypatch.setattr(engine.producer._dedup, "committed", crash)
    with pytest.raises(StorageFault):
        engine.producer.publish(
            dedup_topic, _entry("p", 5)
        )  # committed, but the client saw an error
    monkeypatch.undo()

    resend_same_process = engine.producer.publish(dedup_topic, _entry("p", 5))
    resend_other_process = new_engine().producer.publish(dedup_topic, _entry("p", 5))

    assert resend_same_process.duplicate is True
    assert resend_other_process.duplicate is True
    assert _committed(engine, dedup_topic) == [("p", 5)]


def test_without_deduplication_resends_are_stored_again(engine, topic):
    engine.producer.publish(topic, _entry("p", 1))
    assert engine.producer.publish(topic, _entry("p", 1)).duplicate is False
    assert engine.access.register(topic, "p", "Shared").last_sequence_id == -1


def _chunk(producer: str, sequence_id: int, chunk_id: int, total: int) -> bytes:
    from magnetar_wire import ChunkInfo

    chunk = ChunkInfo(
        uuid=f"{producer}-{sequence_id}",
        chunk_id=chunk_id,
        total_chunks=total,
        total_size=3 * total,
    )
    message = EntryMessage(payload=b"abc", sequence_id=sequence_id, publish_time_ms=1, chunk=chunk)
    return encode_entry([message], producer_name=producer)


def test_chunks_of_one_message_share_its_sequence_id_and_only_the_last_one_completes_it(
    engine, new_engine, dedup_topic
):
    results = [
        engine.producer.publish(dedup_topic, _chunk("p", 4, i, 3)).duplicate for i in range(3)
    ]
    resent = engine.producer.publish(dedup_topic, _chunk("p", 4, 0, 3))
    cold = new_engine()

    assert results == [False, False, False]
    assert resent.duplicate is True
    assert cold.access.register(dedup_topic, "p", "Shared").last_sequence_id == 4
    assert cold.producer.publish(dedup_topic, _chunk("p", 4, 1, 3)).duplicate is True
    assert _committed(engine, dedup_topic) == [("p", 4)] * 3
