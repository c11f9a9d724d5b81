"""The asyncio ``Client``: pulsar-client 3.13's ``pulsar.asyncio.Client``, over the SDK's
``Client``. Creating producers, consumers and readers registers them over HTTP, so those
calls run on the client's executor (``_bridge``); what the handles do afterwards mostly
does not."""

from __future__ import annotations

import re
from typing import Any

from magnetar._encryption.key_reader import CryptoKeyReader

from .._enums import (
    BatchingType,
    CompressionType,
    ConsumerCryptoFailureAction,
    ConsumerType,
    InitialPosition,
    PartitionsRoutingMode,
    ProducerAccessMode,
    RegexSubscriptionMode,
)
from .._policies import (
    ConsumerBatchReceivePolicy,
    ConsumerDeadLetterPolicy,
    ConsumerKeySharedPolicy,
)
from .._validate import check_type
from ..client import Client as SyncClient
from ..message_id import MessageId
from ..schema import Schema
from ._bridge import Executor
from ._consumer import Consumer, Reader
from ._producer import Producer

__all__ = ["Client"]


class Client:
    """The asynchronous ``Client``: ``Client(service_url, **kwargs)`` takes
    ``pulsar.Client``'s keyword arguments."""

    def __init__(self, service_url: str, **kwargs: Any) -> None:
        """Raises what ``magnetar.Client`` raises (ValueError for wrong arguments)."""
        self._client = SyncClient(service_url, **kwargs)
        self._executor = Executor()

    async def create_producer(self, topic: str, producer_name: str | None = None,
                              schema: Schema | None = None,
                              initial_sequence_id: int | None = None,
                              send_timeout_millis: int = 30000,
                              compression_type: CompressionType = CompressionType.NONE,
                              max_pending_messages: int = 1000,
                              max_pending_messages_across_partitions: int = 50000,
                              block_if_queue_full: bool = False, batching_enabled: bool = True,
                              batching_max_messages: int = 1000,
                              batching_max_allowed_size_in_bytes: int = 128 * 1024,
                              batching_max_publish_delay_ms: int = 10,
                              chunking_enabled: bool = False,
                              message_routing_mode: PartitionsRoutingMode = PartitionsRoutingMode.RoundRobinDistribution,
                              lazy_start_partitioned_producers: bool = False,
                              properties: dict | None = None,
                              batching_type: BatchingType = BatchingType.Default,
                              encryption_key: str | None = None,
                              crypto_key_reader: CryptoKeyReader | None = None,
                              access_mode: ProducerAccessMode = ProducerAccessMode.Shared,
                              message_router: Any = None,
                              encryption_keys: list[str] | None = None) -> Producer:  # fmt: skip
        """A producer on ``topic``; batching is ON by default (as pulsar-client's asyncio
        producer, unlike ``pulsar.Client.create_producer``).

        Raises:
            ValueError: batching together with chunking; wrong argument types.
            PulsarException: what the service answers (``InvalidTopicName``,
                ``ProducerFenced``, ...).
        """
        if batching_enabled and chunking_enabled:
            raise ValueError("Batching and chunking of messages can't be enabled together.")
        args = {k: v for k, v in locals().items() if k != "self"}
        producer = await self._executor.run(self._client.create_producer, **args)
        return Producer(producer, self._executor, block_if_queue_full)

    async def subscribe(self, topic: str | list[str], subscription_name: str,
                        consumer_type: ConsumerType = ConsumerType.Exclusive,
                        schema: Schema | None = None, receiver_queue_size: int = 1000,
                        max_total_receiver_queue_size_across_partitions: int = 50000,
                        consumer_name: str | None = None,
                        unacked_messages_timeout_ms: int | None = None,
                        broker_consumer_stats_cache_time_ms: int = 30000,
                        negative_ack_redelivery_delay_ms: int = 60000,
                        is_read_compacted: bool = False, properties: dict | None = None,
                        initial_position: InitialPosition = InitialPosition.Latest,
                        crypto_key_reader: CryptoKeyReader | None = None,
                        replicate_subscription_state_enabled: bool = False,
                        max_pending_chunked_message: int = 10,
                        auto_ack_oldest_chunked_message_on_queue_full: bool = False,
                        start_message_id_inclusive: bool = False,
                        batch_receive_policy: ConsumerBatchReceivePolicy | None = None,
                        key_shared_policy: ConsumerKeySharedPolicy | None = None,
                        batch_index_ack_enabled: bool = False,
                        regex_subscription_mode: RegexSubscriptionMode = RegexSubscriptionMode.PersistentOnly,
                        dead_letter_policy: ConsumerDeadLetterPolicy | None = None,
                        crypto_failure_action: ConsumerCryptoFailureAction = ConsumerCryptoFailureAction.FAIL,
                        is_pattern_topic: bool = False) -> Consumer:  # fmt: skip
        """Subscribe to a topic, a list of topics, or (``is_pattern_topic=True``) the
        topics matching the regex ``topic``.

        Raises:
            ValueError: a list with ``is_pattern_topic``; a topic neither str nor list;
                wrong argument types.
            PulsarException: what the service answers (``ConsumerBusy``, ...).
        """
        if isinstance(topic, str):
            topics: Any = re.compile(topic) if is_pattern_topic else topic
        elif isinstance(topic, list):
            if is_pattern_topic:
                raise ValueError("Argument 'topic' must be a string when 'is_pattern_topic' is "
                                 "True; lists of topics do not support pattern subscriptions")  # fmt: skip
            topics = topic
        else:
            raise ValueError("Argument 'topic' is expected to be of type 'str' or 'list'")
        args = {k: v for k, v in locals().items()
                if k not in ("self", "topic", "topics", "is_pattern_topic")}  # fmt: skip
        consumer = await self._executor.run(self._client.subscribe, topics, **args)
        return Consumer(consumer, self._executor, self._client._log)

    async def create_reader(self, topic: str, start_message_id: MessageId,
                            schema: Schema | None = None, receiver_queue_size: int = 1000,
                            reader_name: str | None = None,
                            subscription_role_prefix: str | None = None,
                            is_read_compacted: bool = False,
                            crypto_key_reader: CryptoKeyReader | None = None,
                            start_message_id_inclusive: bool = False,
                            crypto_failure_action: ConsumerCryptoFailureAction = ConsumerCryptoFailureAction.FAIL,
                            ) -> Reader:  # fmt: skip
        """A reader of ``topic`` from ``start_message_id`` (see ``pulsar.Client.create_reader``).

        Raises ValueError (argument types), PulsarException (``InvalidTopicName``, ...).
        """
        args = {k: v for k, v in locals().items() if k != "self"}
        reader = await self._executor.run(self._client.create_reader, **args)
        return Reader(reader, self._executor)

    async def get_topic_partitions(self, topic: str) -> list[str]:
        """The partition names of ``topic``, or ``[topic]`` when it is not partitioned."""
        check_type(str, topic, "topic")
        return await self._executor.run(self._client.get_topic_partitions, topic)

    async def close(self) -> None:
        """Close every producer (sending what is queued), consumer and reader, then stop
        the executor's threads; later calls raise PulsarException(AlreadyClosed)."""
        if self._executor.closed:
            return
        await self._executor.run(self._client.close)
        self._executor.shutdown(wait=True)  # its threads are idle now: joined at once

    def shutdown(self) -> None:
        """Close at once (queued messages fail), as ``pulsar.Client.shutdown``."""
        self._client.shutdown()
        self._executor.shutdown(wait=True)
