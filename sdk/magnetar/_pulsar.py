"""``pulsar._pulsar``: the names ordinary programs take from pulsar-client's C extension.

pulsar-client re-exports its enums from the extension module ``_pulsar`` and programs
sometimes use them from there (``pulsar._pulsar.ConsumerType.Shared``,
``isinstance(x, _pulsar.MessageId)``). With ``import magnetar as pulsar`` these resolve to
the same objects as ``pulsar.<name>``. ``ProducerConfiguration`` and
``ConsumerConfiguration`` are the extension's option holders as programs (and pulsar-client's
own tests) use them: each option is a method, called without an argument it returns the
value (pulsar-client's default at first), with one it sets it and returns the configuration.
``Client`` takes keyword arguments, never these objects, as pulsar-client's Python API does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._enums import (
    BatchingType,
    CompressionType,
    ConsumerCryptoFailureAction,
    ConsumerType,
    InitialPosition,
    KeySharedMode,
    LoggerLevel,
    PartitionsRoutingMode,
    ProducerAccessMode,
    RegexSubscriptionMode,
    Result,
)
from .message import Message, MessageId
from .schema.schema import SchemaInfo, SchemaType

_UNSET: Any = object()


def _option(name: str, default: Any) -> Callable[..., Any]:
    def option(self: _Configuration, value: Any = _UNSET) -> Any:
        if value is _UNSET:
            return self._values.get(name, default)
        self._values[name] = value
        return self

    option.__name__ = option.__qualname__ = name
    option.__doc__ = f"``{name}()``: the value (default {default!r}); ``{name}(value)``: set it."
    return option


class _Configuration:
    """Options as methods: ``conf.name()`` reads, ``conf.name(value)`` sets and returns ``conf``."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._values!r})"


class ProducerConfiguration(_Configuration):
    """The options of a producer, with pulsar-client's defaults."""

    producer_name = _option("producer_name", "")
    send_timeout_millis = _option("send_timeout_millis", 30_000)
    initial_sequence_id = _option("initial_sequence_id", -1)
    compression_type = _option("compression_type", CompressionType.NONE)
    max_pending_messages = _option("max_pending_messages", 1000)
    max_pending_messages_across_partitions = _option("max_pending_messages_across_partitions", 50_000)  # fmt: skip
    block_if_queue_full = _option("block_if_queue_full", False)
    partitions_routing_mode = _option("partitions_routing_mode", PartitionsRoutingMode.RoundRobinDistribution)  # fmt: skip
    lazy_start_partitioned_producers = _option("lazy_start_partitioned_producers", False)
    batching_enabled = _option("batching_enabled", True)
    batching_max_messages = _option("batching_max_messages", 1000)
    batching_max_allowed_size_in_bytes = _option("batching_max_allowed_size_in_bytes", 128 * 1024)
    batching_max_publish_delay_ms = _option("batching_max_publish_delay_ms", 10)
    batching_type = _option("batching_type", BatchingType.Default)
    chunking_enabled = _option("chunking_enabled", False)
    access_mode = _option("access_mode", ProducerAccessMode.Shared)
    encryption_key = _option("encryption_key", None)
    crypto_key_reader = _option("crypto_key_reader", None)
    property = _option("property", None)


class ConsumerConfiguration(_Configuration):
    """The options of a consumer, with pulsar-client's defaults."""

    consumer_type = _option("consumer_type", ConsumerType.Exclusive)
    consumer_name = _option("consumer_name", "")
    receiver_queue_size = _option("receiver_queue_size", 1000)
    max_total_receiver_queue_size_across_partitions = _option("max_total_receiver_queue_size_across_partitions", 50_000)  # fmt: skip
    unacked_messages_timeout_ms = _option("unacked_messages_timeout_ms", 0)
    negative_ack_redelivery_delay_ms = _option("negative_ack_redelivery_delay_ms", 60_000)
    ack_grouping_time_ms = _option("ack_grouping_time_ms", 100)
    ack_grouping_max_size = _option("ack_grouping_max_size", 1000)
    broker_consumer_stats_cache_time_ms = _option("broker_consumer_stats_cache_time_ms", 30_000)
    read_compacted = _option("read_compacted", False)
    replicate_subscription_state_enabled = _option("replicate_subscription_state_enabled", False)
    subscription_initial_position = _option("subscription_initial_position", InitialPosition.Latest)  # fmt: skip
    regex_subscription_mode = _option("regex_subscription_mode", RegexSubscriptionMode.PersistentOnly)  # fmt: skip
    start_message_id_inclusive = _option("start_message_id_inclusive", False)
    batch_index_ack_enabled = _option("batch_index_ack_enabled", False)
    max_pending_chunked_message = _option("max_pending_chunked_message", 10)
    auto_ack_oldest_chunked_message_on_queue_full = _option("auto_ack_oldest_chunked_message_on_queue_full", False)  # fmt: skip
    expire_time_of_incomplete_chunked_message_ms = _option("expire_time_of_incomplete_chunked_message_ms", 60_000)  # fmt: skip
    crypto_failure_action = _option("crypto_failure_action", ConsumerCryptoFailureAction.FAIL)
    property = _option("property", None)


__all__ = [
    "BatchingType",
    "CompressionType",
    "ConsumerConfiguration",
    "ConsumerCryptoFailureAction",
    "ConsumerType",
    "InitialPosition",
    "KeySharedMode",
    "LoggerLevel",
    "Message",
    "MessageId",
    "PartitionsRoutingMode",
    "ProducerAccessMode",
    "ProducerConfiguration",
    "RegexSubscriptionMode",
    "Result",
    "SchemaInfo",
    "SchemaType",
]
