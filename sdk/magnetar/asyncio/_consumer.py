"""The asyncio ``Consumer`` and ``Reader``: ``receive`` / ``read_next`` wait on the event loop
(woken by the receiver queue, no thread per call); acknowledgements are queued at once (sent
grouped within 100 ms, as the synchronous consumer's); seek, unsubscribe, close and the last
message id are HTTP calls run on the client's executor."""

from __future__ import annotations

import logging
from typing import Any

from .. import exceptions as exc
from .._validate import check_type_or_none
from ..consumer import Consumer as SyncConsumer
from ..message import Message, MessageId
from ..reader import Reader as SyncReader
from ._bridge import Executor, converted, next_message

__all__ = ["Consumer", "Reader"]


class Consumer:
    """pulsar-client's ``pulsar.asyncio.Consumer``. Create with ``await Client.subscribe``."""

    def __init__(self, consumer: SyncConsumer, executor: Executor, log: logging.Logger) -> None:
        self._consumer = consumer
        self._executor = executor
        self._log = log

    async def receive(self) -> Message:
        """The next message. Raises PulsarException(AlreadyClosed) once closed."""
        return await next_message(self._consumer._core)

    async def acknowledge(self, message: Message | MessageId) -> None:
        """Acknowledge one message. Raises ValueError (type), PulsarException."""
        self._settle(self._consumer.acknowledge, message)

    async def acknowledge_cumulative(self, message: Message | MessageId) -> None:
        """Acknowledge every message up to and including this one.

        Raises PulsarException(CumulativeAcknowledgementNotAllowedError) on Shared and
        KeyShared subscriptions.
        """
        self._settle(self._consumer.acknowledge_cumulative, message)

    async def negative_acknowledge(self, message: Message | MessageId) -> None:
        """Have the message redelivered after ``negative_ack_redelivery_delay_ms``."""
        self._settle(self._consumer.negative_acknowledge, message)

    async def unsubscribe(self) -> None:
        """Delete the subscription and close the consumer. Raises PulsarException
        (``ConsumerBusy`` when other consumers are connected)."""
        await self._executor.run(self._consumer.unsubscribe)

    async def seek(self, messageid: MessageId | int) -> None:  # noqa: N803 - pulsar-client's
        """Reset the subscription to a message id or a publish time (epoch ms).

        Raises ValueError for another type.
        """
        if not isinstance(messageid, (MessageId, int)) or isinstance(messageid, bool):
            raise ValueError(f"invalid messageid type {type(messageid)}")
        await self._executor.run(self._consumer.seek, messageid)

    async def close(self) -> None:
        """Send pending acks, unregister and stop the consumer's threads (done already
        after the client's ``close``)."""
        if not self._executor.closed:
            await self._executor.run(self._consumer.close)

    async def get_last_message_id(self) -> MessageId:
        """The id of the topic's last message (``MessageId.earliest`` when empty)."""
        return await self._executor.run(self._consumer.get_last_message_id)

    def redeliver_unacknowledged_messages(self) -> None:
        """Have everything unacknowledged redelivered; returns at once (errors are logged)."""
        self._executor.submit(self._consumer.redeliver_unacknowledged_messages, self._log)

    def topic(self) -> str:
        return self._consumer.topic()

    def subscription_name(self) -> str:
        return self._consumer.subscription_name()

    def consumer_name(self) -> str:
        return self._consumer.consumer_name()

    def is_connected(self) -> bool:
        return self._consumer.is_connected()

    @staticmethod
    def _settle(fn: Any, message: Message | MessageId) -> None:
        try:
            fn(message)
        except exc.PulsarException as e:
            raise converted(e) from None


class Reader:
    """pulsar-client's ``pulsar.asyncio.Reader``. Create with ``await Client.create_reader``."""

    def __init__(self, reader: SyncReader, executor: Executor) -> None:
        self._reader = reader
        self._executor = executor

    async def read_next(self, timeout_millis: int | None = None) -> Message:
        """The next message, waiting up to ``timeout_millis`` (None: forever).

        Raises ValueError (type), PulsarException (``Timeout``, ``AlreadyClosed``).
        """
        check_type_or_none(int, timeout_millis, "timeout_millis")
        msg = await next_message(self._reader._core, timeout_millis)
        self._reader._after = msg.message_id()
        return msg

    async def has_message_available(self) -> bool:
        """True when a message after the last one read exists (asks the service)."""
        return await self._executor.run(self._reader.has_message_available)

    async def seek(self, messageid: MessageId | int) -> None:  # noqa: N803 - pulsar-client's
        """Move to a message id or a publish time (epoch ms). Raises ValueError (type)."""
        if not isinstance(messageid, (MessageId, int)) or isinstance(messageid, bool):
            raise ValueError(f"invalid messageid type {type(messageid)}")
        await self._executor.run(self._reader.seek, messageid)

    async def close(self) -> None:
        """Close the reader (its cursor is deleted; done already after the client's
        ``close``)."""
        if not self._executor.closed:
            await self._executor.run(self._reader.close)

    def topic(self) -> str:
        return self._reader.topic()

    def is_connected(self) -> bool:
        return self._reader.is_connected()
