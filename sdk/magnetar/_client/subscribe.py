"""``Client.subscribe``'s work: argument validation (pulsar-client's checks and messages),
the subscribe body and redelivery settings built from the arguments, and opening the
consumer on its topics."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from magnetar import exceptions as exc
from magnetar._consumer.acks.tracker import Redelivery
from magnetar._consumer.multitopic import (
    Pattern,
    PatternWatcher,
    list_topics_fake_name,
    subscribe_topic,
)
from magnetar._consumer.receiver import ConsumerCore
from magnetar._consumer.retry import RetryLetters, RetryTopics
from magnetar._encryption.key_reader import Crypto, CryptoKeyReader
from magnetar._enums import (
    ConsumerCryptoFailureAction,
    ConsumerType,
    InitialPosition,
    RegexSubscriptionMode,
)
from magnetar._policies import (
    ConsumerBatchReceivePolicy,
    ConsumerDeadLetterPolicy,
    ConsumerKeySharedPolicy,
    MultiplierRedeliveryBackoff,
    dead_letter_body,
    key_shared_body,
)
from magnetar._producer.registration import declared_schema
from magnetar._topics import TopicName, parse_topic
from magnetar._validate import check_type, check_type_or_none
from magnetar.consumer import Consumer
from magnetar.schema import BytesSchema, Schema

if TYPE_CHECKING:
    from magnetar._consumer.client_view import ClientView

__all__ = ["open_consumer", "redelivery_of", "subscribe_body", "validate_subscribe"]

_LATER = "arrives in a later Magnetar release"
_SUB_TYPE = {ConsumerType.Exclusive: "Exclusive", ConsumerType.Shared: "Shared",
             ConsumerType.Failover: "Failover", ConsumerType.KeyShared: "Key_Shared"}  # fmt: skip
MIN_TICK_DURATION_MS = 100  # the Java client's MIN_TICK_TIME_MILLIS


def validate_subscribe(a: dict[str, Any]) -> list[TopicName] | Pattern:
    """Check the arguments of ``subscribe`` (given as a dict); return the parsed topics, or
    the parsed pattern of a regex subscription."""
    topic = a["topic"]
    check_type(str, a["subscription_name"], "subscription_name")
    check_type(ConsumerType, a["consumer_type"], "consumer_type")
    check_type_or_none(Schema, a["schema"], "schema")
    for name in ("receiver_queue_size", "max_total_receiver_queue_size_across_partitions",
                 "broker_consumer_stats_cache_time_ms", "negative_ack_redelivery_delay_ms",
                 "pattern_auto_discovery_period", "max_pending_chunked_message",
                 "tick_duration_ms"):  # fmt: skip
        check_type(int, a[name], name)
    check_type_or_none(str, a["consumer_name"], "consumer_name")
    check_type_or_none(int, a["unacked_messages_timeout_ms"], "unacked_messages_timeout_ms")
    for name in ("is_read_compacted", "replicate_subscription_state_enabled",
                 "auto_ack_oldest_chunked_message_on_queue_full", "start_message_id_inclusive",
                 "batch_index_ack_enabled", "enable_retry"):  # fmt: skip
        check_type(bool, a[name], name)
    check_type_or_none(dict, a["properties"], "properties")
    check_type(InitialPosition, a["initial_position"], "initial_position")
    check_type_or_none(
        ConsumerBatchReceivePolicy, a["batch_receive_policy"], "batch_receive_policy"
    )
    check_type_or_none(ConsumerKeySharedPolicy, a["key_shared_policy"], "key_shared_policy")
    check_type(RegexSubscriptionMode, a["regex_subscription_mode"], "regex_subscription_mode")
    check_type_or_none(ConsumerDeadLetterPolicy, a["dead_letter_policy"], "dead_letter_policy")
    for name in ("negative_ack_redelivery_backoff", "ack_timeout_redelivery_backoff"):
        check_type_or_none(MultiplierRedeliveryBackoff, a[name], name)
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
    if a["tick_duration_ms"] < MIN_TICK_DURATION_MS:
        raise ValueError(f"tick_duration_ms must be >= {MIN_TICK_DURATION_MS}")
    check_type_or_none(CryptoKeyReader, a["crypto_key_reader"], "crypto_key_reader")
    check_type(ConsumerCryptoFailureAction, a["crypto_failure_action"], "crypto_failure_action")
    if isinstance(topic, str):
        return [parse_topic(topic)]
    if isinstance(topic, list):
        if not topic:
            raise ValueError("Argument topic is an empty list")
        for t in topic:
            check_type(str, t, "topic")
        return [parse_topic(t) for t in topic]
    if isinstance(topic, re.Pattern):
        if a["enable_retry"]:
            raise exc.OperationNotSupported("enable_retry needs named topics, not a regex")
        return Pattern.parse(topic, a["regex_subscription_mode"])
    raise ValueError("Argument topic is expected to be of a type between (str, list, re.pattern)")


def subscribe_body(a: dict[str, Any], retry: RetryTopics | None) -> dict[str, Any]:
    """The subscribe request body (docs/http-api/consuming.md, "Subscribe") of the checked arguments ``a``.

    With a dead letter policy or ``retry`` (``enable_retry``), ``deadLetterPolicy`` is set;
    with ``retry`` the dead-letter topic is named explicitly (the retry topic's
    subscription must use the same one, as in the Java client) and defaults to the Java
    client's 16 redeliveries without a policy. Raises InvalidTopicName.
    """
    body: dict[str, Any] = {"subscriptionType": _SUB_TYPE[a["consumer_type"]],
                            "initialPosition": a["initial_position"].name}  # fmt: skip
    if a["consumer_name"]:
        body["consumerName"] = a["consumer_name"]
    if not isinstance(a["topic"], str):
        body["multiTopic"] = True  # Failover spreads non-partitioned topics by name hash
    if a["consumer_type"] == ConsumerType.KeyShared and a["key_shared_policy"] is not None:
        body.update(key_shared_body(a["key_shared_policy"]))
    schema = declared_schema(a["schema"])
    if schema is not None:
        body["schema"] = schema  # the registry registers or checks it (IncompatibleSchema)
    if a["is_read_compacted"]:
        body["readCompacted"] = True  # the compacted view up to the horizon, then the log
    policy = a["dead_letter_policy"]
    if retry is not None:
        policy = policy or ConsumerDeadLetterPolicy(retry.max_reconsume_times)
        body["deadLetterPolicy"] = dead_letter_body(policy, str(retry.dead_letter))
    elif policy is not None:
        topic = policy.dead_letter_topic
        body["deadLetterPolicy"] = dead_letter_body(
            policy, str(parse_topic(topic)) if topic else None
        )
    return body


def redelivery_of(a: dict[str, Any]) -> Redelivery:
    """The nack / ack-timeout settings of the checked arguments ``a``."""
    return Redelivery(
        nack_delay_ms=a["negative_ack_redelivery_delay_ms"],
        nack_backoff=a["negative_ack_redelivery_backoff"],
        ack_timeout_ms=a["unacked_messages_timeout_ms"] or 0,
        tick_ms=a["tick_duration_ms"],
        ack_timeout_backoff=a["ack_timeout_redelivery_backoff"],
    )


def open_consumer(client: ClientView, a: dict[str, Any]) -> Consumer:
    """``Client.subscribe`` with its arguments ``a``: check them, register on every topic /
    partition (and the retry topic with ``enable_retry``), and start the consumer. Raises
    what ``Client.subscribe`` documents."""
    topics = validate_subscribe(a)
    schema = a["schema"] if a["schema"] is not None else BytesSchema()
    subscription, topic = a["subscription_name"], a["topic"]
    retry = None
    if a["enable_retry"] and not isinstance(topics, Pattern):  # a regex was refused above
        retry = RetryTopics.of(topics[0], subscription, a["dead_letter_policy"])
    core = ConsumerCore(client._t, subscribe_body(a, retry), a["receiver_queue_size"], schema,
                        client._log, max_pending_chunked=a["max_pending_chunked_message"],
                        auto_ack_chunks=a["auto_ack_oldest_chunked_message_on_queue_full"])  # fmt: skip
    core.crypto = Crypto.of(a["crypto_key_reader"], a["crypto_failure_action"])
    try:
        if isinstance(topics, Pattern):
            watcher = PatternWatcher(client, core, topics, subscription,
                                     a["pattern_auto_discovery_period"], set())  # fmt: skip
            watcher.subscribe_new(topics.list(client._t, client._log), strict=True)
            core.watcher = watcher
            shown = topics.display
        else:
            extra = [retry.retry] if retry is not None and retry.retry not in topics else []
            for name in [*topics, *extra]:
                subscribe_topic(client, core, name, subscription)
            multi = isinstance(topic, list)
            shown = list_topics_fake_name(topics) if multi else str(topics[0])
    except BaseException:
        core.close(flush_acks=False)
        raise
    client._consumers.add(core)
    letters = None
    if retry is not None:
        letters = RetryLetters(client, retry, subscription,
                               lambda: core.body.get("consumerName") or "consumer")  # fmt: skip
    consumer = Consumer(core, topic=shown, subscription=subscription,
                        consumer_type=a["consumer_type"], redelivery=redelivery_of(a),
                        retry=letters, batch_policy=a["batch_receive_policy"],
                        listener=a["message_listener"],
                        multi_topic=not isinstance(topic, str) or retry is not None,
                        inclusive=a["start_message_id_inclusive"])  # fmt: skip
    if core.watcher is not None:
        core.watcher.start()
    return consumer
