"""The asyncio ``Producer``: ``send`` and ``flush`` wait on the event loop, no thread per call."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from functools import partial
from typing import Any

from .. import exceptions as exc
from .._enums import Result
from ..message_id import MessageId
from ..producer import Producer as SyncProducer
from ._bridge import Executor, PulsarException, callback_future, converted

__all__ = ["Producer"]


class Producer:
    """pulsar-client's ``pulsar.asyncio.Producer``. Create with ``await Client.create_producer``."""

    def __init__(self, producer: SyncProducer, executor: Executor, blocking: bool) -> None:
        """``blocking``: the producer was made with ``block_if_queue_full`` (its sends may
        wait for room, so they are queued from the client's executor, one at a time, in the
        order of the ``send`` calls)."""
        self._producer = producer
        self._executor = executor
        self._blocking = blocking
        self._pending: set[asyncio.Future] = set()
        self._enqueueing = asyncio.Lock()  # FIFO: blocking sends enter the queue in call order

    async def send(self, content: Any, properties: dict | None = None,
                   partition_key: str | None = None, ordering_key: str | None = None,
                   sequence_id: int | None = None, replication_clusters: list | None = None,
                   disable_replication: bool | None = None, event_timestamp: int | None = None,
                   deliver_at: int | None = None,
                   deliver_after: timedelta | None = None) -> MessageId:  # fmt: skip
        """Publish one message; returns its id once the service stored it. With batching
        (on by default here, as pulsar-client's asyncio producer) the message waits up to
        ``batching_max_publish_delay_ms`` for its batch.

        Raises:
            TypeError: ``content`` does not match the schema.
            ValueError: an argument of the wrong type.
            PulsarException: ``Timeout``, ``ProducerQueueIsFull``, ``MessageTooBig``,
                ``ProducerFenced``, ``AlreadyClosed``, ...
        """
        future, callback = callback_future(asyncio.get_running_loop())
        call = partial(self._producer.send_async, content, callback, properties=properties,
                       partition_key=partition_key, ordering_key=ordering_key,
                       sequence_id=sequence_id, replication_clusters=replication_clusters,
                       disable_replication=disable_replication or False,
                       event_timestamp=event_timestamp, deliver_at=deliver_at,
                       deliver_after=deliver_after)  # fmt: skip
        if self._blocking:
            async with self._enqueueing:
                await self._executor.run(call)
        else:
            try:
                call()
            except exc.PulsarException as e:
                raise converted(e) from None
        self._pending.add(future)
        future.add_done_callback(self._pending.discard)
        msg_id: MessageId = await future
        return msg_id

    async def flush(self) -> None:
        """Send the open batches and wait until every message sent so far is stored or
        failed (a failure is raised by its ``send``, not here).

        Raises PulsarException(AlreadyClosed) on a closed producer.
        """
        core = self._producer._core
        if core.closed:
            raise PulsarException(Result.AlreadyClosed, "the producer is closed")
        core.flush_batches()
        if self._pending:
            await asyncio.wait(set(self._pending))

    async def close(self) -> None:
        """Send what is queued, then close (on the client's executor: it joins the sender
        thread and releases the registration); after the client's ``close``, nothing to do.

        Raises PulsarException(AlreadyClosed) when the producer was closed already, as
        pulsar-client's asyncio producer does.
        """
        if self._executor.closed:
            return
        if self._producer._core.closed:
            raise PulsarException(Result.AlreadyClosed, "the producer is already closed")
        await self._executor.run(self._producer.close)

    def topic(self) -> str:
        """The full topic name."""
        return self._producer.topic()

    def producer_name(self) -> str:
        """The producer's name (given, or assigned by the service)."""
        return self._producer.producer_name()

    def last_sequence_id(self) -> int:
        """The highest sequence id the service acknowledged; -1 before any publish."""
        return self._producer.last_sequence_id()

    def is_connected(self) -> bool:
        """True until the producer is closed or fenced."""
        return self._producer.is_connected()
