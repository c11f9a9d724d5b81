"""``magnetar.asyncio`` (pulsar-client's ``pulsar.asyncio``) against the engine on in-memory
adapters. Each test runs its coroutine with ``asyncio.run``."""

from __future__ import annotations

import asyncio
import threading

import pytest

import magnetar as pulsar
from magnetar.asyncio import PulsarException
from magnetar_local.memory_service import sdk_threads

Result = pulsar.Result


def run(coro_fn, svc, **client_kw):
    """Run ``coro_fn(client)`` on a new event loop with an asyncio client of ``svc``,
    closing the client afterwards."""

    async def main():
        client = pulsar.asyncio.Client(svc.url, **client_kw)
        try:
            return await coro_fn(client)
        finally:
            await client.close()

    return asyncio.run(main())


def test_an_asyncio_producer_and_consumer_round_trip_messages_in_order(svc):
    async def body(client):
        consumer = await client.subscribe("t", "s", consumer_type=pulsar.ConsumerType.Shared)
        producer = await client.create_producer("t", producer_name="p")
        ids = await asyncio.gather(*(producer.send(f"m{i}".encode(), properties={"i": str(i)})
                                     for i in range(5)))  # fmt: skip
        got = []
        for _ in range(5):
            msg = await consumer.receive()
            got.append((msg.data(), msg.properties()["i"], msg.message_id()))
            await consumer.acknowledge(msg)
        assert [g[0] for g in got] == [f"m{i}".encode() for i in range(5)]
        assert [g[2] for g in got] == ids
        assert (producer.topic(), producer.producer_name(), producer.last_sequence_id()) == (
            "persistent://public/default/t",
            "p",
            4,
        )
        assert consumer.subscription_name() == "s" and consumer.topic().endswith("/t")
        with pytest.raises(PulsarException) as e:
            await consumer.acknowledge_cumulative(got[-1][2])
        assert e.value.error() == Result.CumulativeAcknowledgementNotAllowedError

    run(body, svc)


def test_a_receive_waits_on_the_loop_without_a_thread_until_a_message_arrives(svc):
    async def body(client):
        consumer = await client.subscribe("t", "s")
        producer = await client.create_producer("t", batching_enabled=False)
        threads = threading.active_count()
        waiting = [asyncio.ensure_future(consumer.receive()) for _ in range(3)]
        await asyncio.sleep(0)  # let them reach their waits
        assert not any(w.done() for w in waiting)
        assert threading.active_count() == threads  # no thread per pending receive
        for i in range(3):
            await producer.send(bytes([i]))
        got = await asyncio.wait_for(asyncio.gather(*waiting), 5)
        assert sorted(m.data() for m in got) == [b"\0", b"\1", b"\2"]

    run(body, svc)


def test_flush_waits_for_the_batched_sends_of_the_asyncio_producer(svc):
    async def body(client):
        producer = await client.create_producer("t", batching_max_publish_delay_ms=60000)
        sends = [asyncio.ensure_future(producer.send(b"x")) for _ in range(3)]
        await asyncio.sleep(0)
        assert not any(s.done() for s in sends)  # held in the batch (60 s delay)
        await asyncio.wait_for(producer.flush(), 5)
        assert all(s.done() for s in sends)
        ids = [s.result() for s in sends]
        assert [i.batch_index() for i in ids] == [0, 1, 2]
        await producer.close()
        with pytest.raises(PulsarException) as e:
            await producer.flush()
        assert e.value.error() == Result.AlreadyClosed

    run(body, svc)


def test_a_nacked_message_comes_back_to_the_asyncio_consumer(svc):
    async def body(client):
        consumer = await client.subscribe("t", "s", negative_ack_redelivery_delay_ms=50)
        producer = await client.create_producer("t")
        await producer.send(b"again")
        first = await consumer.receive()
        await consumer.negative_acknowledge(first)
        second = await asyncio.wait_for(consumer.receive(), 5)
        assert (second.data(), second.redelivery_count()) == (b"again", 1)
        await consumer.acknowledge(second.message_id())
        assert (await consumer.get_last_message_id()) == second.message_id()

    run(body, svc)


def test_an_asyncio_reader_reads_seeks_and_times_out(svc):
    async def body(client):
        producer = await client.create_producer("t", batching_enabled=False)
        ids = [await producer.send(bytes([i])) for i in range(3)]
        reader = await client.create_reader("t", pulsar.MessageId.earliest)
        assert [(await reader.read_next(5000)).data() for _ in range(3)] == [b"\0", b"\1", b"\2"]
        assert not await reader.has_message_available()
        with pytest.raises(PulsarException) as e:
            await reader.read_next(50)
        assert e.value.error() == Result.Timeout
        await reader.seek(ids[0])
        assert (await reader.read_next(5000)).message_id() == ids[1]
        with pytest.raises(ValueError, match="timeout_millis"):
            await reader.read_next("1")
        await reader.close()
        with pytest.raises(PulsarException) as e:
            await reader.read_next()
        assert e.value.error() == Result.AlreadyClosed

    run(body, svc)


def test_asyncio_errors_carry_pulsar_results_and_bad_arguments_raise_value_error(svc):
    async def body(client):
        first = await client.subscribe("t", "s")  # kept: a dropped consumer closes
        with pytest.raises(PulsarException) as e:
            await client.subscribe("t", "s")
        assert e.value.error() == Result.ConsumerBusy and str(e.value).startswith("13 ConsumerBusy")
        with pytest.raises(ValueError, match="Batching and chunking"):
            await client.create_producer("t", chunking_enabled=True)
        with pytest.raises(ValueError, match="lists of topics do not support pattern"):
            await client.subscribe(["a", "b"], "s", is_pattern_topic=True)
        with pytest.raises(ValueError, match="'str' or 'list'"):
            await client.subscribe(5, "s")
        assert await client.get_topic_partitions("t") == ["persistent://public/default/t"]
        assert first.is_connected()

    run(body, svc)


def test_a_pattern_subscription_and_an_unsubscribe_through_asyncio(svc):
    async def body(client):
        producer = await client.create_producer("fin-a")
        await producer.send(b"a")
        consumer = await client.subscribe("persistent://public/default/fin-.*", "s",
                                          is_pattern_topic=True,
                                          initial_position=pulsar.InitialPosition.Earliest)  # fmt: skip
        assert (await asyncio.wait_for(consumer.receive(), 5)).data() == b"a"
        await consumer.unsubscribe()
        with pytest.raises(PulsarException) as e:
            await consumer.receive()
        assert e.value.error() == Result.AlreadyClosed

    run(body, svc)


def test_closing_the_asyncio_client_leaves_no_sdk_thread_and_refuses_later_calls(svc):
    async def body():
        client = pulsar.asyncio.Client(svc.url)
        producer = await client.create_producer("t")
        await client.subscribe("t", "s")
        await client.close()
        assert not sdk_threads(), sdk_threads()
        with pytest.raises(PulsarException) as e:
            await producer.send(b"late")
        assert e.value.error() == Result.AlreadyClosed
        with pytest.raises(PulsarException) as e:
            await client.create_producer("t")
        assert e.value.error() == Result.AlreadyClosed

    asyncio.run(body())


def test_pulsar_asyncio_exposes_pulsar_clients_names():
    assert {"Client", "Producer", "Consumer", "Reader", "PulsarException"} <= set(
        pulsar.asyncio.__all__
    )
    assert not issubclass(PulsarException, pulsar.PulsarException)
    assert str(PulsarException(Result.Timeout)) == "3 Timeout"


def test_a_producer_that_blocks_when_full_queues_its_sends_from_the_executor(svc):
    async def body(client):
        producer = await client.create_producer("t", block_if_queue_full=True,
                                                max_pending_messages=1, batching_enabled=False)  # fmt: skip
        ids = await asyncio.gather(*(producer.send(bytes([i])) for i in range(4)))
        assert [i.entry_id() for i in ids] == [0, 1, 2, 3]

    run(body, svc)
