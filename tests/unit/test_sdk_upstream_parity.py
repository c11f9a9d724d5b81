"""What pulsar-client's own test files expect of the SDK beyond the service (measured with
``tests/upstream/run_upstream.py``): the extension's configuration holders, table views'
callback values, schema versions, Avro evolution and the asyncio API's errors."""

from __future__ import annotations

import asyncio
import threading

import pytest

import magnetar as pulsar
from magnetar import _pulsar


def test_producer_configuration_reads_defaults_and_sets_options_as_the_extension_does():
    conf = _pulsar.ProducerConfiguration()
    assert conf.compression_type() == pulsar.CompressionType.NONE
    assert conf.send_timeout_millis(12) is conf
    assert conf.send_timeout_millis() == 12
    conf.compression_type(pulsar.CompressionType.LZ4).max_pending_messages(120)
    assert (conf.compression_type(), conf.max_pending_messages()) == (pulsar.CompressionType.LZ4, 120)  # fmt: skip


def test_consumer_configuration_reads_defaults_and_sets_options_as_the_extension_does():
    conf = _pulsar.ConsumerConfiguration()
    assert conf.consumer_type() == pulsar.ConsumerType.Exclusive
    assert conf.consumer_name() == ""
    assert conf.replicate_subscription_state_enabled() is False
    conf.consumer_type(pulsar.ConsumerType.Shared).consumer_name("my-name")
    assert (conf.consumer_type(), conf.consumer_name()) == (pulsar.ConsumerType.Shared, "my-name")
    assert _pulsar.ConsumerConfiguration().consumer_name() == ""  # one configuration's values only


def test_closing_an_asyncio_producer_twice_raises_already_closed(svc):
    from magnetar.asyncio import PulsarException

    async def body():
        client = pulsar.asyncio.Client(svc.url)
        try:
            producer = await client.create_producer("t")
            await producer.close()
            with pytest.raises(PulsarException) as raised:
                await producer.close()
            return raised.value.error()
        finally:
            await client.close()

    assert asyncio.run(body()) == pulsar.Result.AlreadyClosed


def test_set_future_settles_from_another_thread_and_leaves_a_done_or_cancelled_future_alone():
    from magnetar.asyncio import PulsarException, _set_future

    async def body():
        loop = asyncio.get_running_loop()
        failed, cancelled, done = loop.create_future(), loop.create_future(), loop.create_future()
        cancelled.cancel()
        done.set_result("first")
        worker = threading.Thread(target=_set_future, args=(failed, pulsar.Result.Timeout, None))
        worker.start()
        worker.join()
        _set_future(cancelled, pulsar.Result.Ok, None)
        _set_future(done, pulsar.Result.Ok, "late")
        with pytest.raises(PulsarException) as raised:
            await failed
        await asyncio.sleep(0)
        return raised.value.error(), cancelled.cancelled(), done.result()

    assert asyncio.run(body()) == (pulsar.Result.Timeout, True, "first")
