"""SDK -> HTTP -> handlers -> emulator: a TableView following updates and a delete, and an
asyncio producer/consumer round trip (issue 15)."""

from __future__ import annotations

import asyncio
import time
import uuid

import magnetar as pulsar


def _topic(prefix: str) -> str:
    return f"persistent://public/default/{prefix}-{uuid.uuid4().hex[:8]}"


def test_a_table_view_follows_updates_and_a_delete_on_the_embedded_stack(client):
    topic = _topic("table-view")
    producer = client.create_producer(topic)
    producer.send(b"red", partition_key="apple")
    producer.send(b"yellow", partition_key="banana")
    view = client.create_table_view(topic, schema=pulsar.StringSchema())
    try:
        assert (view.get("apple"), view.get("banana"), len(view)) == ("red", "yellow", 2)
        heard = []
        view.for_each_and_listen(lambda key, value: heard.append((key, value)))
        producer.send(b"green", partition_key="apple")
        producer.send(None, partition_key="banana")  # a tombstone deletes the key
        deadline = time.monotonic() + 10
        while len(heard) < 4 and time.monotonic() < deadline:
            time.sleep(0.01)  # the view's thread applies the messages: poll with a deadline
        assert heard[2:] == [("apple", "green"), ("banana", "")]
        assert (view.get("apple"), view.get("banana"), view.size()) == ("green", None, 1)
    finally:
        view.close()


def test_an_asyncio_producer_and_consumer_round_trip_on_the_embedded_stack(local_stack):
    topic = _topic("asyncio")

    async def main() -> list[bytes]:
        client = pulsar.asyncio.Client(local_stack.url)
        try:
            consumer = await client.subscribe(topic, "sub")
            producer = await client.create_producer(topic)
            await asyncio.gather(*(producer.send(f"m{i}".encode()) for i in range(3)))
            got = []
            for _ in range(3):
                msg = await asyncio.wait_for(consumer.receive(), 10)
                await consumer.acknowledge(msg)
                got.append(msg.data())
            return got
        finally:
            await client.close()

    assert asyncio.run(main()) == [b"m0", b"m1", b"m2"]
