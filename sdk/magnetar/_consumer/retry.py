"""The retry letter topic, client-side as in Pulsar's Java client (``enable_retry=True``).

``Consumer.reconsume_later(msg, delay, properties)`` publishes a copy of ``msg`` to the retry
topic (default ``<topic>-<subscription>-RETRY``, or the dead letter policy's
``retry_letter_topic``; the consumer is subscribed to it too, with the same subscription, so
the copy comes back once ``delay`` has passed — on Shared and Key_Shared subscriptions,
which honour delayed delivery) and then acknowledges ``msg``. The copy keeps the payload,
key, ordering key, event time and properties, and carries:

- ``REAL_TOPIC``: the topic (partition) the message was first published to;
- ``ORIGIN_MESSAGE_ID``: its id there (``ledger:entry:partition:batch``);
- ``RECONSUMETIMES``: 1 the first time, one more on each ``reconsume_later`` of a copy;
- ``DELAY_TIME``: the delay in ms;

plus the custom ``properties`` (the four above win over custom ones of the same name).
When ``RECONSUMETIMES`` would exceed the policy's ``max_redeliver_count`` (16 without a
policy, as the Java client), the copy goes to the dead-letter topic instead (default
``<topic>-<subscription>-DLQ``; the policy's ``initial_subscription_name`` is created on it,
at Earliest, before the first publish), without delay.

Delivery into the retry / dead-letter topic is at least once. Each consumer publishes with
its own producers, whose names stay fixed for the consumer's lifetime
(``<subscription>-<consumer name>-<random>-RETRY`` / ``-DLQ``), one send at a time with
explicit, increasing sequence ids; a send that fails with a timeout or a connection error
is sent again with the SAME sequence id, so when the target namespace has deduplication on,
the service drops the second copy. The window that remains: the original is acknowledged
only after the publish succeeded, and that ack is grouped (up to 100 ms) and best effort,
so if the process dies (or the ack is lost) between the publish and the ack, the original
is redelivered and published again — a duplicate in the retry or dead-letter topic that
deduplication cannot catch (the next consumer uses another producer name and sequence).
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from magnetar import exceptions as exc
from magnetar._policies import ConsumerDeadLetterPolicy
from magnetar._topics import TopicName, parse_topic
from magnetar.message import Message

if TYPE_CHECKING:
    from magnetar.producer import Producer

    from .client_view import ClientView

__all__ = ["RetryLetters", "RetryTopics", "delay_ms_of"]

REAL_TOPIC = "REAL_TOPIC"
ORIGIN_MESSAGE_ID = "ORIGIN_MESSAGE_ID"
RECONSUMETIMES = "RECONSUMETIMES"
DELAY_TIME = "DELAY_TIME"
MAX_RECONSUME_TIMES = 16  # the Java client's default without a dead letter policy
SEND_ATTEMPTS = 3  # a timed-out send is tried this often, with the same sequence id
_RETRIABLE = (exc.Timeout, exc.ConnectError, exc.TooManyRequests, exc.ServiceUnitNotReady)


@dataclass(frozen=True)
class RetryTopics:
    """Where ``reconsume_later`` publishes: the retry topic, and the dead-letter topic once
    ``max_reconsume_times`` is exceeded."""

    retry: TopicName
    dead_letter: TopicName
    max_reconsume_times: int
    initial_subscription: str | None

    @classmethod
    def of(
        cls, topic: TopicName, subscription: str, policy: ConsumerDeadLetterPolicy | None
    ) -> RetryTopics:
        """The topics of a consumer of ``topic`` (its first topic) on ``subscription``.

        Raises InvalidTopicName for a malformed topic name in the policy.
        """
        retry = policy.retry_letter_topic if policy is not None else None
        dlq = policy.dead_letter_topic if policy is not None else None
        return cls(
            retry=parse_topic(retry or f"{topic}-{subscription}-RETRY"),
            dead_letter=parse_topic(dlq or f"{topic}-{subscription}-DLQ"),
            max_reconsume_times=policy.max_redeliver_count if policy else MAX_RECONSUME_TIMES,
            initial_subscription=policy.initial_subscription_name if policy else None,
        )


def delay_ms_of(delay: Any) -> int:
    """``reconsume_later``'s delay as ms: a ``timedelta`` or a number of milliseconds.

    Raises ValueError for another type or a negative delay.
    """
    if isinstance(delay, timedelta):
        ms = int(delay.total_seconds() * 1000)
    elif isinstance(delay, int | float) and not isinstance(delay, bool):
        ms = int(delay)
    else:
        raise ValueError(
            "Argument delay is expected to be of type 'timedelta' or 'int' (ms) and not "
            f"'{type(delay).__name__}'"
        )
    if ms < 0:
        raise ValueError("delay must not be negative")
    return ms


def _reconsume_times(props: dict[str, str]) -> int | None:
    try:
        return int(props[RECONSUMETIMES])
    except (KeyError, ValueError):
        return None


class _Target:
    """One lazily created producer with its own sequence ids (sends serialized)."""

    def __init__(self, topic: TopicName, suffix: str) -> None:
        self.topic = topic
        self.suffix = suffix
        self.producer: Producer | None = None
        self.next_seq = 1
        self.lock = threading.Lock()


class RetryLetters:
    """The retry / dead-letter publishing of one consumer (see the module docstring).
    ``client`` creates the producers; ``consumer_name`` is called when the first one is
    made (the service may assign the name at subscribe)."""

    def __init__(self, client: ClientView, topics: RetryTopics, subscription: str,
                 consumer_name: Callable[[], str]) -> None:  # fmt: skip
        self.topics = topics
        self._client = client
        self._subscription = subscription
        self._consumer_name = consumer_name
        self._nonce = uuid.uuid4().hex[:8]
        self._retry = _Target(topics.retry, "RETRY")
        self._dlq = _Target(topics.dead_letter, "DLQ")
        self._initial_done = topics.initial_subscription is None
        self._closed = False

    def publish(self, msg: Message, delay_ms: int, custom: dict | None) -> str:
        """Publish the copy of ``msg`` (to the retry topic, or to the dead-letter topic past
        the maximum); returns ``"retry"`` or ``"dead-letter"``. The caller acks ``msg``.

        Raises PulsarException when the publish failed (the original stays unacked).
        """
        props = {**msg.properties(), **(custom or {})}
        times = _reconsume_times(msg.properties())
        if times is None:
            props[REAL_TOPIC] = msg.topic_name()
            props[ORIGIN_MESSAGE_ID] = str(msg.message_id())
            times = 0
        props[RECONSUMETIMES] = str(times + 1)
        props[DELAY_TIME] = str(delay_ms)
        if times + 1 > self.topics.max_reconsume_times:
            self._create_initial_subscription()
            self._send(self._dlq, msg, props, None)
            return "dead-letter"
        self._send(self._retry, msg, props, timedelta(milliseconds=delay_ms) if delay_ms else None)
        return "retry"

    def _send(self, target: _Target, msg: Message, props: dict, after: timedelta | None) -> None:
        ordering = msg.ordering_key()
        with target.lock:
            if self._closed:
                raise exc.AlreadyClosed("the consumer is closed")
            if target.producer is None:
                name = f"{self._subscription}-{self._consumer_name()}-{self._nonce}-{target.suffix}"
                target.producer = self._client.create_producer(str(target.topic),
                                                               producer_name=name)  # fmt: skip
                target.next_seq = max(target.producer.last_sequence_id() + 1, 1)
            seq = target.next_seq
            target.next_seq += 1
            for attempt in range(SEND_ATTEMPTS):
                try:
                    target.producer.send(
                        None if msg.has_null_value() else msg.data(), properties=props,
                        partition_key=msg.partition_key() or None,
                        ordering_key=ordering or None,
                        sequence_id=seq, event_timestamp=msg.event_timestamp() or None,
                        deliver_after=after,
                    )  # fmt: skip
                    return
                except _RETRIABLE:
                    if attempt == SEND_ATTEMPTS - 1:
                        raise

    def _create_initial_subscription(self) -> None:
        """Create the policy's initial subscription on the dead-letter topic (once): a
        consumer registered at Earliest and closed again leaves the durable subscription
        (one that exists already is left as it is)."""
        if self._initial_done:
            return
        t = self._client._t
        name = self.topics.dead_letter
        n = self._client._partitions(name)
        for target in [name.partition(i) for i in range(n)] if n else [name]:
            sub = quote(self.topics.initial_subscription or "", safe="")
            base = f"/v1/{target.path()}/subscriptions/{sub}/consumers"
            try:
                resp = t.call("POST", base, json_body={"subscriptionType": "Shared",
                                                       "initialPosition": "Earliest"})  # fmt: skip
            except exc.ConsumerBusy:  # it exists, with consumers of another type
                continue
            t.call("DELETE", f"{base}/{resp['consumerId']}")
        self._initial_done = True

    def close(self) -> None:
        """Close the producers (waiting for a send in progress)."""
        for target in (self._retry, self._dlq):
            with target.lock:
                self._closed = True
                if target.producer is not None:
                    with contextlib.suppress(exc.PulsarException):
                        target.producer.close()
                    target.producer = None
