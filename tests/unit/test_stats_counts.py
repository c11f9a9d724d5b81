"""Topic stats count messages (issue 11, defect 9), on the memory service: ``msgInCounter``
counts the messages of the entries (a batch of n counts n, a chunked message once),
``bytesInCounter`` their bytes, and ``msgBacklog`` the unacknowledged messages, never below 0
(a partly acknowledged batch counts what is left of it)."""

from __future__ import annotations

from edge_http import call
from stats_support import consumer_call, produce, stats, stored_bytes, subscribe

from magnetar_core.adapters.memory import MemoryTables, memory_stores
from magnetar_core.domain.runtime import Runtime
from magnetar_core.engine import Engine
from magnetar_core.services.stats import Stats
from magnetar_local.memory_service import memory_settings
from magnetar_wire import ChunkInfo, EntryMessage, encode_entry
from magnetar_wire.names import TopicName

BASE = "persistent/public/default/st"


def chunked(payload: bytes, parts: int) -> list[bytes]:
    size = -(-len(payload) // parts)
    return [
        encode_entry(
            [
                EntryMessage(
                    payload=payload[i * size : (i + 1) * size],
                    sequence_id=7,
                    publish_time_ms=1,
                    chunk=ChunkInfo("u", i, parts, len(payload)),
                )
            ],
            producer_name="chunker",
        )  # fmt: skip
        for i in range(parts)
    ]


def test_partitioned_stats_count_messages_bytes_and_the_rest_of_a_partly_acked_batch(svc):
    svc.create_partitioned_topic(BASE, 2)
    p0, p1 = f"{BASE}-partition-0", f"{BASE}-partition-1"
    c0 = subscribe(svc, p0, "s")
    subscribe(svc, p1, "s")
    batch = produce(svc, p0, "YQ==", "Yg==", "Yw==", "ZA==", "ZQ==")  # one entry, 5 messages
    produce(svc, p0, "Zg==")
    produce(svc, p1, "YQ==", "Yg==", "Yw==")
    produce(svc, p1, "ZA==", "ZQ==")
    for entry in chunked(b"0123456789", 2):  # one message in two entries
        status, answer, _ = call(f"{svc.url}/v1/{p1}/messages", body=entry,
                                 headers={"Content-Type": "application/vnd.magnetar.entry"})  # fmt: skip
        assert status == 200, answer

    got = consumer_call(svc, p0, "s", c0, "receive", {"maxMessages": 100, "waitMs": 0})
    assert len(got["messages"]) == 6
    acked = consumer_call(svc, p0, "s", c0, "ack", {"messageIds": batch[:3]})
    assert acked == {"acknowledged": 3}

    one = stats(svc, p0)
    assert (one["msgInCounter"], one["entriesCount"]) == (6, 2)
    assert one["bytesInCounter"] == stored_bytes(svc, p0)
    sub = one["subscriptions"]["s"]
    assert (sub["msgBacklog"], sub["unackedMessages"]) == (3, 3)  # 2 of the batch + 1
    assert sub["consumers"][0]["unackedMessages"] == 3

    other = stats(svc, p1)
    assert (other["msgInCounter"], other["entriesCount"]) == (6, 4)
    assert other["subscriptions"]["s"]["msgBacklog"] == 6

    total = stats(svc, BASE, "partitioned-stats")
    assert (total["msgInCounter"], total["entriesCount"]) == (12, 6)
    assert total["bytesInCounter"] == stored_bytes(svc, p0) + stored_bytes(svc, p1)
    assert total["subscriptions"]["s"]["msgBacklog"] == 9
    assert total["subscriptions"]["s"]["unackedMessages"] == 3


def test_acking_the_rest_of_the_batch_brings_the_backlog_to_zero(svc):
    path = "persistent/public/default/st-one"
    consumer = subscribe(svc, path, "s")
    ids = produce(svc, path, "YQ==", "Yg==", "Yw==", "ZA==")
    consumer_call(svc, path, "s", consumer, "receive", {"maxMessages": 100, "waitMs": 0})
    seen = []
    for message_id in ids:
        consumer_call(svc, path, "s", consumer, "ack", {"messageIds": [message_id]})
        sub = stats(svc, path)["subscriptions"]["s"]
        seen.append((sub["msgBacklog"], sub["unackedMessages"]))
    assert seen == [(3, 3), (2, 2), (1, 1), (0, 0)]


def test_a_cursor_newer_than_the_index_read_never_makes_counts_negative():
    """The stats read the cursors, then the index; should the index answer from before the
    newest entries (a stale page), the entries it does not list count by what the cursor
    recorded of them, never below zero."""
    stores = memory_stores(MemoryTables())
    engine = Engine.assemble(memory_settings(), stores, Runtime(), None)
    topic = TopicName.parse("persistent://public/default/race")
    subs = engine.subscriptions
    c = subs.subscribe(topic, "s", "c", "Shared", earliest=True)
    messages = [EntryMessage(payload=b"%d" % i, sequence_id=i, publish_time_ms=1) for i in range(4)]
    engine.producer.publish(topic, encode_entry(messages, producer_name="p"))
    got = subs.receive(topic, "s", c.consumer_id, 10, 0)
    ledger = got[0].ledger_id
    subs.acknowledge(
        topic, "s", c.consumer_id, [f"{ledger}:0:-1:0", f"{ledger}:0:-1:1"], cumulative=False
    )

    class StaleLog:
        """The log as read before the entry was committed."""

        def head(self, pk: str) -> int:
            return -1

        def range_counts(self, pk: str, start: int, end: int) -> list:
            return []

    ref = engine.topics.resolve(topic, create=False)
    parts = (stores.producer_state, stores.compaction, engine.runtime.now_ms)
    stale = Stats(engine.topics, StaleLog(), stores.cursors, *parts)  # type: ignore[arg-type]
    sub = stale.partition_stats(ref)["subscriptions"]["s"]
    assert (sub["msgBacklog"], sub["unackedMessages"]) == (0, 2)
    assert sub["consumers"][0]["unackedMessages"] == 2
    fresh = Stats(engine.topics, stores.log, stores.cursors, *parts).partition_stats(ref)
    assert fresh["subscriptions"]["s"]["msgBacklog"] == 2
