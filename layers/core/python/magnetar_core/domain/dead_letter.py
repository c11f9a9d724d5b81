"""Dead letter topic (Pulsar's ``DeadLetterPolicy``), pure: the policy, outbox items and the
entry a dead-lettered entry becomes.

A subscription's policy says after how many redeliveries a message stops being delivered
and goes to the dead letter topic (default ``<base topic>-<subscription>-DLQ``). Pulsar does
this in the consumer; here the dispatcher does it (see ``dead_lettering``): the cursor
write that takes an exhausted entry out of the redelivery set records it in an *outbox*
with a per-cursor sequence id, and the entry is published under a deterministic producer
name with deduplication forced on, then acknowledged. A retried or resumed publish is a
duplicate the log refuses, so each entry reaches the dead letter topic exactly once.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from magnetar_core.domain.errors import InvalidMessage
from magnetar_wire import (
    DecodedEntry,
    EntryMessage,
    decode_entry,
    encode_entry,
    read_metadata,
    stored_payload,
)
from magnetar_wire.ids import format_message_id
from magnetar_wire.names import TopicName

REAL_TOPIC = "REAL_TOPIC"
"""Property: the full name of the topic (partition) the message was dead-lettered from."""
ORIGIN_MESSAGE_ID = "ORIGIN_MESSAGE_ID"
"""Property: the message's id on that topic, ``ledger:entry:partition:batch``."""
DEAD_LETTER_TYPES = ("Shared", "Key_Shared")
"""Subscription types that dead-letter (as Pulsar: the others never count redeliveries)."""
_FIELDS = {"maxRedeliverCount", "deadLetterTopic", "initialSubscriptionName"}
_SUBSCRIPTION = re.compile(r"^[A-Za-z0-9_=:.\-]{1,256}$")


@dataclass(frozen=True)
class DeadLetterPolicy:
    """``max_redeliver_count`` (>= 1) redeliveries, then the dead letter topic.

    A message is delivered with redelivery counts 0..max (max + 1 times); an entry whose
    next delivery would carry a higher count goes to ``dead_letter_topic`` (a full topic
    name; None: the default) instead. ``initial_subscription_name`` is created at Earliest
    on that topic before the first message is published to it.
    """

    max_redeliver_count: int
    dead_letter_topic: str | None = None
    initial_subscription_name: str | None = None

    @classmethod
    def parse(cls, data: object) -> DeadLetterPolicy | None:
        """The subscribe body's ``deadLetterPolicy`` object, or None when absent / null.

        Raises InvalidMessage (not an object, unknown fields, a count below 1, a bad or
        non-persistent topic, a bad subscription name); InvalidTopicName for a bad topic.
        """
        if data is None:
            return None
        if not isinstance(data, Mapping) or set(data) - _FIELDS:
            raise InvalidMessage(
                "deadLetterPolicy must be an object of maxRedeliverCount, deadLetterTopic, "
                "initialSubscriptionName"
            )
        count = data.get("maxRedeliverCount")
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise InvalidMessage(
                f"deadLetterPolicy.maxRedeliverCount must be an integer >= 1, not {count!r}"
            )
        topic = data.get("deadLetterTopic")
        if topic is not None:
            if not isinstance(topic, str):
                raise InvalidMessage("deadLetterPolicy.deadLetterTopic must be a topic name")
            name = TopicName.parse(topic)
            if not name.persistent:
                raise InvalidMessage(
                    f"deadLetterPolicy.deadLetterTopic {topic!r} must be a persistent topic"
                )
            topic = str(name)
        initial = data.get("initialSubscriptionName")
        if initial is not None and (
            not isinstance(initial, str) or not _SUBSCRIPTION.fullmatch(initial)
        ):
            raise InvalidMessage(
                f"deadLetterPolicy.initialSubscriptionName {initial!r} is not a valid "
                "subscription name (1-256 letters, digits and - _ = : .)"
            )
        return cls(count, topic, initial)

    def topic_for(self, topic: TopicName, subscription: str) -> TopicName:
        """The dead letter topic of ``subscription`` on ``topic`` (a partition counts as its
        partitioned topic: every partition dead-letters into one topic)."""
        if self.dead_letter_topic is not None:
            return TopicName.parse(self.dead_letter_topic)
        base = topic.base
        return TopicName(
            base.domain, base.tenant, base.namespace, f"{base.local}-{subscription}-DLQ"
        )

    def exhausted(self, redelivery_count: int) -> bool:
        """Whether a delivery with ``redelivery_count`` is one too many."""
        return redelivery_count > self.max_redeliver_count

    def to_dict(self) -> dict:
        out: dict = {"max": self.max_redeliver_count}
        if self.dead_letter_topic is not None:
            out["topic"] = self.dead_letter_topic
        if self.initial_subscription_name is not None:
            out["init"] = self.initial_subscription_name
        return out

    @classmethod
    def from_dict(cls, data: Mapping) -> DeadLetterPolicy:
        return cls(int(data["max"]), data.get("topic"), data.get("init"))


@dataclass(frozen=True)
class DeadLetter:
    """One outbox item: entry ``entry_id`` (its messages ``batch_indexes``; None: all of
    them, ``count`` messages) goes to ``topic`` with sequence ids ``sequence_id`` ..
    ``sequence_id + count - 1``; ``initial_subscription`` is created there first."""

    sequence_id: int
    entry_id: int
    batch_indexes: tuple[int, ...] | None
    count: int
    topic: str
    initial_subscription: str | None = None

    def to_list(self) -> list:
        indexes = list(self.batch_indexes) if self.batch_indexes is not None else None
        return [
            self.sequence_id,
            self.entry_id,
            indexes,
            self.count,
            self.topic,
            self.initial_subscription,
        ]

    @classmethod
    def from_list(cls, data: list) -> DeadLetter:
        seq, entry, indexes, count, topic, initial = data
        return cls(
            int(seq),
            int(entry),
            tuple(indexes) if indexes is not None else None,
            int(count),
            topic,
            initial,
        )


def producer_name(topic: TopicName, subscription: str, outbox_id: str) -> str:
    """The dead letter producer of one cursor (Pulsar's ``<topic>-<subscription>-...-DLQ``):
    deterministic, so every engine resuming the outbox commits as the same producer and its
    sequence ids deduplicate; ``outbox_id`` tells apart a re-created subscription."""
    return f"{topic}-{subscription}-{outbox_id}-DLQ"


@dataclass(frozen=True)
class Origin:
    """Where a dead-lettered entry came from: its topic (partition) and ledger."""

    topic: TopicName
    ledger_id: int
    partition: int


def dead_letter_entry(
    data: bytes, item: DeadLetter, origin: Origin, producer: str, now_ms: int
) -> bytes:
    """The entry published to the dead letter topic for ``item``, from the original entry's
    bytes: the item's messages with payload, key, ordering key, properties, event time and
    chunk info kept, ``REAL_TOPIC`` / ``ORIGIN_MESSAGE_ID`` added (unless present already,
    as Pulsar: a message that came through a retry topic keeps its first origin), no
    delivery delay, publish time ``now_ms`` and the item's sequence ids; same codec and
    batching. An end-to-end encrypted entry moves whole (the service cannot split its
    payload section): every message, the section and its encryption copied as they are.
    Raises EntryFormatError / ChecksumMismatch for a corrupt original.
    """
    meta = read_metadata(data)
    encryption = meta.encryption
    if encryption is None:
        decoded = decode_entry(data)
    else:  # placeholder payloads of the right sizes; the stored section replaces them
        decoded = DecodedEntry(meta.header, meta.producer_name, tuple(
            EntryMessage(b"\0" * m.size, m.sequence_id, m.publish_time_ms, m.key,
                         m.ordering_key, m.properties, m.event_time_ms, m.deliver_at_ms,
                         m.null_value, m.chunk, m.schema_version)
            for m in meta.messages), encryption)  # fmt: skip
    batched = decoded.header.batched
    indexes = item.batch_indexes
    if indexes is None or encryption is not None:
        indexes = tuple(range(len(decoded.messages)))
    messages = []
    for j, i in enumerate(indexes):
        m = decoded.messages[i]
        properties = dict(m.properties)
        properties.setdefault(REAL_TOPIC, str(origin.topic))
        properties.setdefault(
            ORIGIN_MESSAGE_ID,
            format_message_id(
                origin.ledger_id, item.entry_id, origin.partition, i if batched else -1
            ),
        )
        messages.append(
            replace(
                m,
                sequence_id=item.sequence_id + min(j, item.count - 1),
                publish_time_ms=now_ms,
                properties=properties,
                deliver_at_ms=0,
            )
        )
    section = stored_payload(data)
    return encode_entry(
        messages, producer_name=producer, codec=decoded.header.codec, batched=batched,
        encrypt=None if encryption is None else (lambda _: (encryption, section)),
    )  # fmt: skip
