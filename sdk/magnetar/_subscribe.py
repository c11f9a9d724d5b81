"""Argument validation of ``Client.subscribe`` (pulsar-client's checks and messages)."""

from __future__ import annotations

import re
from typing import Any

from . import exceptions as exc
from ._enums import ConsumerType, InitialPosition, RegexSubscriptionMode
from ._multitopic import Pattern
from ._policies import ConsumerBatchReceivePolicy, ConsumerDeadLetterPolicy, ConsumerKeySharedPolicy
from ._topics import TopicName, parse_topic
from ._validate import check_type, check_type_or_none
from .schema import Schema

__all__ = ["validate_subscribe"]

_LATER = "arrives in a later Magnetar release"


def validate_subscribe(a: dict[str, Any]) -> list[TopicName] | Pattern:
    """Check the arguments of ``subscribe`` (given as a dict); return the parsed topics, or
    the parsed pattern of a regex subscription."""
    topic = a["topic"]
    check_type(str, a["subscription_name"], "subscription_name")
    check_type(ConsumerType, a["consumer_type"], "consumer_type")
    check_type_or_none(Schema, a["schema"], "schema")
    for name in ("receiver_queue_size", "max_total_receiver_queue_size_across_partitions",
                 "broker_consumer_stats_cache_time_ms", "negative_ack_redelivery_delay_ms",
                 "pattern_auto_discovery_period", "max_pending_chunked_message"):  # fmt: skip
        check_type(int, a[name], name)
    check_type_or_none(str, a["consumer_name"], "consumer_name")
    check_type_or_none(int, a["unacked_messages_timeout_ms"], "unacked_messages_timeout_ms")
    for name in ("is_read_compacted", "replicate_subscription_state_enabled",
                 "auto_ack_oldest_chunked_message_on_queue_full", "start_message_id_inclusive",
                 "batch_index_ack_enabled"):  # fmt: skip
        check_type(bool, a[name], name)
    check_type_or_none(dict, a["properties"], "properties")
    check_type(InitialPosition, a["initial_position"], "initial_position")
    check_type_or_none(
        ConsumerBatchReceivePolicy, a["batch_receive_policy"], "batch_receive_policy"
    )
    check_type_or_none(ConsumerKeySharedPolicy, a["key_shared_policy"], "key_shared_policy")
    check_type(RegexSubscriptionMode, a["regex_subscription_mode"], "regex_subscription_mode")
    check_type_or_none(ConsumerDeadLetterPolicy, a["dead_letter_policy"], "dead_letter_policy")
    listener = a["message_listener"]
    if listener is not None and not callable(listener):
        raise ValueError("Argument message_listener is expected to be a function")
    if not a["subscription_name"]:
        raise ValueError("subscription_name must not be empty")
    timeout = a["unacked_messages_timeout_ms"]
    if timeout and timeout < 10000:
        raise ValueError("Ack timeout should be greater than 10000 milliseconds (10 seconds)")
    if a["receiver_queue_size"] < 0:
        raise ValueError("receiver_queue_size must be >= 0")
    if a["negative_ack_redelivery_delay_ms"] < 0:
        raise ValueError("negative_ack_redelivery_delay_ms must be >= 0")
    if a["dead_letter_policy"] is not None:
        raise exc.OperationNotSupported(f"dead_letter_policy {_LATER}")
    if a["is_read_compacted"]:
        raise exc.OperationNotSupported(f"is_read_compacted {_LATER}")
    if a["crypto_key_reader"] is not None:
        raise exc.OperationNotSupported("end-to-end encryption is not supported by Magnetar")
    if isinstance(topic, str):
        return [parse_topic(topic)]
    if isinstance(topic, list):
        if not topic:
            raise ValueError("Argument topic is an empty list")
        for t in topic:
            check_type(str, t, "topic")
        return [parse_topic(t) for t in topic]
    if isinstance(topic, re.Pattern):
        return Pattern.parse(topic, a["regex_subscription_mode"])
    raise ValueError("Argument topic is expected to be of a type between (str, list, re.pattern)")
