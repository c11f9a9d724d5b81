"""``Consumer``: receives messages of a subscription (pulsar-client's API)."""

from __future__ import annotations

import time
import weakref
from typing import Any

from . import exceptions as exc
from ._consumer import positions as _positions
from ._consumer.acks.tracker import AckTracker, Redelivery
from ._consumer.receiver import ConsumerCore
from ._consumer.retry import RetryLetters, delay_ms_of
from ._consumer.sub import Sub
from ._enums import ConsumerType
from ._policies import DEFAULT_BATCH_RECEIVE
from ._validate import check_type_or_none
from .message import Message, MessageId

__all__ = ["Consumer"]

_LATER = "arrives in a later Magnetar release"


class Consumer:
    """A consumer on one subscription of one or more topics (all partitions of a partitioned
    topic). Create with ``Client.subscribe``."""

    def __init__(self, core: ConsumerCore, *, topic: str, subscription: str,
                 consumer_type: ConsumerType, batch_policy: Any, listener: Any,
                 redelivery: Redelivery | None = None, retry: RetryLetters | None = None,
                 multi_topic: bool = False, inclusive: bool = False) -> None:  # fmt: skip
        self._core = core
        self._inclusive = inclusive
        self._multi = multi_topic
        self._topic = topic
        self._subscription = subscription
        self._type = consumer_type
        self._batch_policy = batch_policy or DEFAULT_BATCH_RECEIVE
        self._has_listener = listener is not None
        core.acks = AckTracker(core.post_ack, redelivery or Redelivery(), core.log)
        core.retry = retry
        if listener is not None:
            core.listener = (self, listener)
        core.start()
        self._finalizer = weakref.finalize(self, core.close)

    def topic(self) -> str:
        """The topic name, as pulsar-client returns it: for a regex subscription the pattern
        as a full topic name; for a list, the last topic's name followed by
        ``-TopicsConsumerFakeName-`` and 10 random hex digits."""
        return self._topic

    def subscription_name(self) -> str:
        """The subscription's name."""
        return self._subscription

    def consumer_name(self) -> str:
        """The consumer's name (given or assigned by the service)."""
        return self._core.body.get("consumerName") or ""

    def is_connected(self) -> bool:
        """True while open and the last receive of every partition succeeded."""
        return self._finalizer.alive and all(s.connected for s in self._core.subs)

    def receive(self, timeout_millis: int | None = None) -> Message:
        """The next message; waits up to ``timeout_millis`` (None: forever).

        Raises:
            Timeout: nothing arrived in time.
            InvalidConfiguration: the consumer has a message listener.
            AlreadyClosed: the consumer is closed.
        """
        check_type_or_none(int, timeout_millis, "timeout_millis")
        if self._has_listener:
            raise exc.InvalidConfiguration("receive() cannot be used with a message_listener")
        timeout = None if timeout_millis is None else timeout_millis / 1000
        return self._core.take(timeout)[1]

    def batch_receive(self) -> list[Message]:
        """Messages received within the batch receive policy's limits (may be empty)."""
        p = self._batch_policy
        deadline = time.monotonic() + max(p.timeout_ms(), 0) / 1000
        out: list[Message] = []
        size = 0
        while (p.max_num_message() <= 0 or len(out) < p.max_num_message()) and (
            p.max_num_bytes() <= 0 or size < p.max_num_bytes()
        ):
            try:
                msg = self._core.take(max(0.0, deadline - time.monotonic()))[1]
            except exc.Timeout:
                break
            out.append(msg)
            size += len(msg.data())
        return out

    def acknowledge(self, message: Message | MessageId) -> None:
        """Acknowledge one message (sent grouped: within 100 ms or 1000 acks)."""
        sub, msg_id = self._resolve(message)
        self._core.ack_tracker.ack(sub, msg_id)

    def acknowledge_cumulative(self, message: Message | MessageId) -> None:
        """Acknowledge every message up to and including this one.

        Raises:
            CumulativeAcknowledgementNotAllowedError: on Shared and KeyShared subscriptions.
        """
        if self._type in (ConsumerType.Shared, ConsumerType.KeyShared):
            raise exc.CumulativeAcknowledgementNotAllowedError(
                "Cumulative acknowledgement is not allowed on Shared and KeyShared subscriptions"
            )
        sub, msg_id = self._resolve(message)
        self._core.ack_tracker.ack_cumulative(sub, msg_id)

    def negative_acknowledge(self, message: Message | MessageId) -> None:
        """Ask for redelivery after ``negative_ack_redelivery_delay_ms`` (or the
        ``negative_ack_redelivery_backoff``'s delay for the message's redelivery count). The
        nack is sent with the next ack group (within 100 ms) and the service holds the
        message for the delay; it comes back with ``redelivery_count()`` + 1. Given the
        ``Message``, the nack carries its redelivery count: should the request be sent again
        or the message be nacked twice, the copy redelivered meanwhile stays."""
        sub, msg_id = self._resolve(message)
        seen = message.redelivery_count() if isinstance(message, Message) else None
        self._core.ack_tracker.nack(sub, msg_id, seen)

    def reconsume_later(self, message: Message, delay: Any,
                        properties: dict | None = None) -> None:  # fmt: skip
        """Consume ``message`` again after ``delay`` (a ``timedelta``, or milliseconds):
        publish a copy to the retry letter topic, then acknowledge ``message`` (needs
        ``enable_retry=True``; after the dead letter policy's ``max_redeliver_count``
        reconsumptions the copy goes to the dead-letter topic). ``properties`` are added to
        the copy's. Properties, topics and the at-least-once window: ``magnetar._consumer.retry``.

        Raises:
            InvalidConfiguration: the consumer was subscribed without ``enable_retry``.
            ValueError: ``message`` is not a Message, a bad ``delay`` or ``properties``.
            PulsarException: the publish failed (``message`` stays unacknowledged).
        """
        if self._core.retry is None:
            raise exc.InvalidConfiguration("reconsume_later needs subscribe(enable_retry=True)")
        if not isinstance(message, Message):
            raise ValueError(
                f"Argument message is expected to be of type 'Message' and not "
                f"'{type(message).__name__}'"
            )
        check_type_or_none(dict, properties, "properties")
        delay_ms = delay_ms_of(delay)
        sub, msg_id = self._resolve(message)
        self._core.retry.publish(message, delay_ms, properties)
        self._core.ack_tracker.ack(sub, msg_id)

    def redeliver_unacknowledged_messages(self) -> None:
        """Drop locally queued messages and have the service redeliver everything unacked."""
        self._check_open()
        self._core.clear_queue()
        self._core.ack_tracker.clear_unacked()
        for sub in self._core.subs:
            self._core.post(sub, "redeliver", {})

    def pause_message_listener(self) -> None:
        """Stop calling the listener (messages keep filling the receiver queue)."""
        self._core.set_paused(True)

    def resume_message_listener(self) -> None:
        """Resume calling the listener."""
        self._core.set_paused(False)

    def seek(self, messageid: Any) -> None:  # noqa: N803 - pulsar-client's name
        """Reset the subscription to a message id (after it, at it with
        ``start_message_id_inclusive``) or to a publish time in epoch ms (the first message at
        or after it). Locally queued messages are dropped."""
        self._check_open()
        _positions.seek(self._core, messageid, self._inclusive)

    def get_last_message_id(self) -> MessageId:
        """The id of the topic's last message (``MessageId.earliest`` when empty).

        Raises OperationNotSupported on multi-topic and partitioned consumers.
        """
        self._check_open()
        return _positions.last_message_id(self._core)

    def has_reached_end_of_topic(self) -> bool:
        """True when the topic (every partition, every topic of a multi-topic consumer) was
        terminated and this consumer has received all its messages: ``receive`` would only
        time out. Java's ``Consumer.hasReachedEndOfTopic`` (pulsar-client 3.13's Python
        ``Consumer`` has no such method); asks the service (one request per partition)."""
        self._check_open()
        return _positions.reached_end_of_topic(self._core, lambda sub: sub.last_taken)

    def unsubscribe(self) -> None:
        """Delete the subscription and close the consumer.

        Raises:
            ConsumerBusy: other consumers are connected to the subscription.
        """
        self._check_open()
        self._core.ack_tracker.flush()
        self._core.stop_watcher()  # no new topics while unsubscribing
        self._core.unsubscribing = True
        try:
            for sub in self._core.subs:
                self._core.post(sub, "unsubscribe", {})
        except BaseException:
            self._core.unsubscribing = False
            if self._core.watcher is not None:
                self._core.watcher.start()
            raise
        self._core.close(delete=False)
        self._finalizer.detach()

    def close(self) -> None:
        """Flush pending acks, unregister from the service and stop every thread."""
        self._finalizer()

    # ------------------------------------------------------------------ helpers

    def _check_open(self) -> None:
        if not self._finalizer.alive or self._core.stopping:
            raise exc.AlreadyClosed("the consumer is closed")

    def _resolve(self, message: Message | MessageId) -> tuple[Sub, MessageId]:
        self._check_open()
        if isinstance(message, Message):
            msg_id = message.message_id()
        elif isinstance(message, MessageId):
            msg_id = message
        else:
            raise ValueError(
                f"Argument message is expected to be of type 'Message' or 'MessageId' and "
                f"not '{type(message).__name__}'"
            )
        subs = self._core.subs
        if msg_id.topic():
            for sub in subs:
                if sub.topic == msg_id.topic():
                    return sub, msg_id
        if self._multi:  # as Pulsar's multi-topics consumer
            raise exc.OperationNotSupported(
                f"This message id's topic {msg_id.topic()!r} is not one this consumer is "
                "subscribed to"
                if msg_id.topic()
                else "This message id carries no topic, so "
                "a multi-topic consumer cannot tell where to acknowledge it; pass the Message, "
                "or MessageId.deserialize(data, topic)"
            )
        if len(subs) == 1:
            return subs[0], msg_id
        by_partition = [s for s in subs if s.partition == msg_id.partition() >= 0]
        if len(by_partition) == 1 and len({s.topic.rsplit("-partition-", 1)[0] for s in subs}) == 1:
            return by_partition[0], msg_id
        raise exc.OperationNotSupported(
            "This message id carries no topic, so a multi-topic consumer cannot tell where to "
            "acknowledge it; pass the Message, or MessageId.deserialize(data, topic)"
        )
