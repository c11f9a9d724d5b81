"""Chunking, reassembly and large entries (uploads, receive by URL) against the engine on in-memory adapters."""

from __future__ import annotations

import os

import pytest
import requests

import magnetar as pulsar
from magnetar._consumer import chunks as _chunks
from magnetar_wire import ChunkInfo, EntryMessage, encode_entry

TOPIC = "persistent/public/default/t"


def post_chunk(svc, producer: str, uuid: str, i: int, total: int, part: bytes, size: int) -> None:
    """Commit one chunk entry directly (to interleave chunks deterministically)."""
    entry = encode_entry([EntryMessage(payload=part, sequence_id=1,
                                       chunk=ChunkInfo(uuid, i, total, size))],
                         producer_name=producer, batched=False)  # fmt: skip
    r = requests.post(f"{svc.url}/v1/{TOPIC}/messages", data=entry,
                      headers={"Content-Type": "application/vnd.magnetar.entry"}, timeout=5)  # fmt: skip
    r.raise_for_status()


def acked_ids(svc) -> list[str]:
    return [i for r in svc.recorded("ack") for i in r.body["messageIds"]]


def test_without_chunking_a_message_above_the_max_size_raises_and_nothing_is_sent(svc, client):
    svc.configure(max_message_size_bytes=1000)
    producer = client.create_producer("t")
    with pytest.raises(pulsar.MessageTooBig):
        producer.send(os.urandom(2000))
    got = []
    producer.send_async(os.urandom(2000), lambda r, m: got.append(r))
    producer.flush()
    assert got == [pulsar.Result.MessageTooBig] and svc.recorded_entries() == []


def test_chunks_fit_the_limit_share_the_sequence_id_and_come_back_whole(svc, client):
    svc.configure(max_message_size_bytes=1000)
    consumer = client.subscribe("t", "s")
    producer = client.create_producer("t", chunking_enabled=True, producer_name="p",
                                      compression_type=pulsar.CompressionType.LZ4)  # fmt: skip
    payload = os.urandom(4500)
    msg_id = producer.send(payload, properties={"a": "b"}, partition_key="k")
    posts = svc.recorded_entries()
    chunks = [p.body.messages[0].chunk for p in posts]
    assert len(posts) >= 5 and all(len(p.body.messages) == 1 for p in posts)
    assert [c.chunk_id for c in chunks] == list(range(len(posts)))
    assert {(c.uuid, c.total_chunks, c.total_size) for c in chunks} == {
        ("p-0", len(posts), 4500)}  # fmt: skip
    assert {p.body.messages[0].sequence_id for p in posts} == {0}
    assert str(msg_id) == f"1:{len(posts) - 1}:-1:-1"
    msg = consumer.receive(5000)
    assert (msg.data(), msg.properties(), msg.partition_key()) == (payload, {"a": "b"}, "k")
    assert msg.message_id() == msg_id
    consumer.acknowledge(msg)
    consumer.close()
    assert acked_ids(svc) == [f"1:{i}:-1:-1" for i in range(len(posts))]


def test_a_payload_that_compresses_below_the_limit_is_not_chunked(svc, client):
    svc.configure(max_message_size_bytes=1000)
    producer = client.create_producer("t", chunking_enabled=True,
                                      compression_type=pulsar.CompressionType.ZSTD)  # fmt: skip
    producer.send(b"\0" * 50_000)
    [post] = svc.recorded_entries()
    assert post.body.messages[0].chunk is None


def test_interleaved_chunks_of_two_producers_are_reassembled(svc, client):
    consumer = client.subscribe("t", "s", initial_position=pulsar.InitialPosition.Earliest)
    a, b = b"A" * 30, b"B" * 20
    post_chunk(svc, "pa", "x-1", 0, 3, a[:10], 30)
    post_chunk(svc, "pb", "x-1", 0, 2, b[:10], 20)  # same uuid, another producer
    post_chunk(svc, "pa", "x-1", 1, 3, a[10:20], 30)
    post_chunk(svc, "pb", "x-1", 1, 2, b[10:], 20)
    post_chunk(svc, "pa", "x-1", 2, 3, a[20:], 30)
    first, second = consumer.receive(5000), consumer.receive(5000)
    assert [(first.producer_name(), first.data()), (second.producer_name(), second.data())] == [
        ("pb", b), ("pa", a)]  # fmt: skip
    assert str(first.message_id()) == "1:3:-1:-1" and str(second.message_id()) == "1:4:-1:-1"


@pytest.mark.parametrize("auto_ack", [False, True])
def test_a_full_chunk_queue_drops_the_oldest_incomplete_message(svc, client, auto_ack):
    consumer = client.subscribe("t", "s", max_pending_chunked_message=1,
                                auto_ack_oldest_chunked_message_on_queue_full=auto_ack)  # fmt: skip
    post_chunk(svc, "p", "old", 0, 2, b"o1", 4)
    post_chunk(svc, "p", "new", 0, 2, b"n1", 4)  # the queue holds 1: "old" is dropped
    post_chunk(svc, "p", "old", 1, 2, b"o2", 4)  # a chunk of a dropped message
    post_chunk(svc, "p", "new", 1, 2, b"n2", 4)
    assert consumer.receive(5000).data() == b"n1n2"
    with pytest.raises(pulsar.Timeout):
        consumer.receive(200)
    consumer.close()
    expected = ["1:0:-1:-1", "1:2:-1:-1"] if auto_ack else []
    assert sorted(set(acked_ids(svc)) - {"1:1:-1:-1", "1:3:-1:-1"}) == expected


def test_incomplete_chunked_messages_expire(svc, client, monkeypatch):
    monkeypatch.setattr(_chunks, "CHUNK_EXPIRY_SECONDS", 0.0)
    consumer = client.subscribe("t", "s", auto_ack_oldest_chunked_message_on_queue_full=True)
    post_chunk(svc, "p", "u", 0, 2, b"a", 2)
    assert svc.wait_for(lambda s: len(s.recorded("ack")) == 1)
    assert acked_ids(svc) == ["1:0:-1:-1"]
    post_chunk(svc, "p", "u", 1, 2, b"b", 2)  # its first chunk expired: dropped too
    with pytest.raises(pulsar.Timeout):
        consumer.receive(300)


def test_entries_above_one_mib_are_uploaded_with_a_plain_put_and_produced_by_reference(svc):
    client = pulsar.Client(svc.url, authentication=pulsar.AuthenticationToken("secret"))
    consumer = client.subscribe("t", "s")
    producer = client.create_producer("t")
    payload = os.urandom(2 * 1024 * 1024)
    producer.send(payload)
    [upload], [put], [post] = (svc.recorded(k) for k in ("upload", "s3_put", "produce"))
    assert upload.headers.get("Authorization") == "Bearer secret"
    assert "Authorization" not in put.headers and put.method == "PUT"
    assert post.headers["Content-Type"] == "application/json" and post.query == {"epoch": "0"}
    assert consumer.receive(5000).data() == payload
    client.close()


def test_entries_received_without_data_are_fetched_from_their_url(svc, client):
    svc.configure(response_inline_budget_bytes=0, index_inline_max_bytes=0)  # an S3 object
    consumer = client.subscribe("t", "s")
    producer = client.create_producer("t")
    producer.send(b"by url")
    assert consumer.receive(5000).data() == b"by url"
    assert len(svc.recorded("s3_get")) == 1


def test_an_11_mib_payload_is_sent_as_uploaded_chunks_and_reassembled(svc, client):
    consumer = client.subscribe("t", "s")
    producer = client.create_producer("t", chunking_enabled=True)
    payload = os.urandom(11 * 1024 * 1024)
    producer.send(payload)
    assert len(svc.recorded_entries()) == 3 and len(svc.recorded("s3_put")) == 3
    assert consumer.receive(10000).data() == payload
