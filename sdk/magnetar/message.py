"""``MessageId`` and ``Message``, as in pulsar-client.

The text form of a message id is the HTTP API's ``ledger:entry:partition:batch`` (e.g.
``1:0:-1:-1``); ``str(MessageId)`` returns it and ``serialize()`` returns it UTF-8 encoded.
(pulsar-client prints ``(l,e,p,b)`` and serializes to protobuf; Magnetar uses one form
everywhere so ids can be pasted into curl calls.)
"""

from __future__ import annotations

import functools
from typing import Any

from magnetar_wire.ids import format_message_id, parse_message_id

from ._validate import check_type, check_type_or_none

__all__ = ["ChunkMessageId", "Message", "MessageId", "id_texts"]

_INT64_MAX = 2**63 - 1


@functools.total_ordering
class MessageId:
    """Position of a message: ``(ledger_id, entry_id, partition, batch_index)``.

    Ordering compares ``(ledger_id, entry_id, batch_index)``; equality also compares the
    partition.
    """

    earliest: MessageId
    latest: MessageId

    __slots__ = ("_batch", "_entry", "_ledger", "_partition", "_topic")

    def __init__(
        self, partition: int = -1, ledger_id: int = -1, entry_id: int = -1, batch_index: int = -1
    ) -> None:
        for name, value in (
            ("partition", partition),
            ("ledger_id", ledger_id),
            ("entry_id", entry_id),
            ("batch_index", batch_index),
        ):
            check_type(int, value, name)
        self._partition = partition
        self._ledger = ledger_id
        self._entry = entry_id
        self._batch = batch_index
        self._topic: str | None = None

    def ledger_id(self) -> int:
        """The ledger (log generation) of the entry."""
        return self._ledger

    def entry_id(self) -> int:
        """The entry's position in its partition: 0, 1, 2, ..."""
        return self._entry

    def partition(self) -> int:
        """The partition index, -1 for a non-partitioned topic."""
        return self._partition

    def batch_index(self) -> int:
        """The index in a batch entry, -1 for a non-batched message."""
        return self._batch

    def topic(self) -> str | None:
        """The topic the id belongs to, when known (ids of received messages)."""
        return self._topic

    def serialize(self) -> bytes:
        """The id as bytes (the UTF-8 text form ``l:e:p:b``)."""
        return str(self).encode("ascii")

    @staticmethod
    def deserialize(data: bytes | bytearray | str, topic: str | None = None) -> MessageId:
        """Rebuild an id from ``serialize()`` output (bytes or text)."""
        check_type((bytes, bytearray, str), data, "data")
        check_type_or_none(str, topic, "topic")
        text = data if isinstance(data, str) else bytes(data).decode("ascii", "replace")
        if text == str(MessageId.latest):
            return _with_topic(MessageId(-1, _INT64_MAX, _INT64_MAX, -1), topic)
        ledger, entry, partition, batch = parse_message_id(text)
        return _with_topic(MessageId(partition, ledger, entry, batch), topic)

    @classmethod
    def wrap(cls, msg_id: MessageId) -> MessageId:
        """A plain MessageId with the position (and topic) of ``msg_id``, as pulsar-client's
        ``MessageId.wrap`` turns the C extension's id into the Python type (here both are
        this class). Raises ValueError when ``msg_id`` is not a MessageId."""
        check_type(MessageId, msg_id, "msg_id")
        wrapped = MessageId(msg_id.partition(), msg_id.ledger_id(), msg_id.entry_id(),
                      msg_id.batch_index())  # fmt: skip
        return _with_topic(wrapped, msg_id.topic())

    @classmethod
    def from_text(cls, text: str, topic: str | None = None) -> MessageId:
        """Parse the HTTP API's text form ``l:e:p:b``."""
        return cls.deserialize(text, topic)

    def _key(self) -> tuple[int, int, int]:
        return (self._ledger, self._entry, self._batch)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MessageId):
            return NotImplemented
        return self._key() == other._key() and self._partition == other._partition

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, MessageId):
            return NotImplemented
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash((self._ledger, self._entry, self._partition, self._batch))

    def __str__(self) -> str:
        if self._ledger < -1 or self._entry < -1 or self._partition < -1 or self._batch < -1:
            return f"{self._ledger}:{self._entry}:{self._partition}:{self._batch}"
        return format_message_id(self._ledger, self._entry, self._partition, self._batch)

    def __repr__(self) -> str:
        return (
            f"MessageId(partition={self._partition}, ledger_id={self._ledger}, "
            f"entry_id={self._entry}, batch_index={self._batch})"
        )


def _with_topic(msg_id: MessageId, topic: str | None) -> MessageId:
    msg_id._topic = topic
    return msg_id


MessageId.earliest = MessageId(-1, -1, -1, -1)
MessageId.latest = MessageId(-1, _INT64_MAX, _INT64_MAX, -1)


class ChunkMessageId(MessageId):
    """The id of a chunked message: positioned (and compared) as its LAST chunk, and carrying
    every chunk's id so acknowledging it acknowledges all of them. Pulsar's ``ChunkMessageId``
    holds the first and last chunk ids; the text form and ``serialize()`` are the last chunk's.
    """

    __slots__ = ("_chunk_ids",)

    def __init__(self, chunk_ids: list[MessageId]) -> None:
        last = chunk_ids[-1]
        super().__init__(last.partition(), last.ledger_id(), last.entry_id(), last.batch_index())
        self._topic = last.topic()
        self._chunk_ids = tuple(chunk_ids)

    def chunk_message_ids(self) -> tuple[MessageId, ...]:
        """Every chunk's id, in chunk order."""
        return self._chunk_ids

    def first_chunk_message_id(self) -> MessageId:
        """The first chunk's id."""
        return self._chunk_ids[0]

    def last_chunk_message_id(self) -> MessageId:
        """The last chunk's id (this id's position)."""
        return self._chunk_ids[-1]


def id_texts(msg_id: MessageId) -> list[str]:
    """The text ids to acknowledge for ``msg_id``: every chunk of a chunked message."""
    if isinstance(msg_id, ChunkMessageId):
        return [str(c) for c in msg_id.chunk_message_ids()]
    return [str(msg_id)]


class Message:
    """A received message (read-only)."""

    __slots__ = (
        "_data",
        "_encryption",
        "_event_ts",
        "_id",
        "_key",
        "_null",
        "_ordering_key",
        "_producer",
        "_properties",
        "_publish_ts",
        "_redelivery",
        "_schema",
        "_schema_version",
        "_writer_schema",
        "_sequence_id",
        "_topic",
    )

    def __init__(
        self,
        data: bytes,
        message_id: MessageId,
        *,
        topic: str,
        properties: dict[str, str] | None = None,
        partition_key: str | None = None,
        ordering_key: bytes | None = None,
        publish_timestamp: int = 0,
        event_timestamp: int = 0,
        redelivery_count: int = 0,
        producer_name: str = "",
        sequence_id: int = 0,
        null_value: bool = False,
        schema: Any = None,
        schema_version: int | None = None,
        writer_schema: Any = None,
        encryption: Any = None,
    ) -> None:
        self._encryption = encryption  # an EncryptionContext, or None: a clear message
        self._data = b"" if null_value else bytes(data)
        self._id = message_id
        self._topic = topic
        self._properties = dict(properties or {})
        self._key = partition_key or ""
        self._ordering_key = ordering_key or b""
        self._publish_ts = publish_timestamp
        self._event_ts = event_timestamp or 0
        self._redelivery = redelivery_count
        self._producer = producer_name
        self._sequence_id = sequence_id
        self._null = null_value
        self._schema = schema
        self._schema_version = schema_version
        self._writer_schema = writer_schema  # AUTO_CONSUME decodes with it

    def data(self) -> bytes:
        """The raw payload (``b""`` for a null value)."""
        return self._data

    def value(self) -> Any:
        """The payload decoded with the consumer's schema (``None`` for a null value); the
        default ``BytesSchema`` returns the bytes. Raises what the schema's decoder raises
        for a payload it cannot read (e.g. ``ValueError`` for JSON that is not JSON)."""
        if self._null:
            return None
        if self._schema is None:
            return self._data
        decode_message = getattr(self._schema, "decode_message", None)
        if decode_message is not None:  # schemas that read the message key (key/value)
            return decode_message(self)
        return self._schema.decode(self._data)

    def properties(self) -> dict[str, str]:
        """The message's properties."""
        return dict(self._properties)

    def partition_key(self) -> str:
        """The message key, ``""`` when unset."""
        return self._key

    def ordering_key(self) -> str:
        """The ordering key as text (pulsar-client's type), ``""`` when unset; bytes that are
        not UTF-8 are decoded with replacement characters."""
        return self._ordering_key.decode("utf-8", "replace")

    def publish_timestamp(self) -> int:
        """Publish time, epoch milliseconds."""
        return self._publish_ts

    def event_timestamp(self) -> int:
        """Event time, epoch milliseconds; 0 when unset."""
        return self._event_ts

    def message_id(self) -> MessageId:
        """The message's id."""
        return self._id

    def topic_name(self) -> str:
        """The topic (the partition's name for partitioned topics)."""
        return self._topic

    def redelivery_count(self) -> int:
        """How many times the message was redelivered before this delivery."""
        return self._redelivery

    def producer_name(self) -> str:
        """Name of the producer that published the message."""
        return self._producer

    def sequence_id(self) -> int:
        """The producer-assigned sequence id."""
        return self._sequence_id

    def has_null_value(self) -> bool:
        """True for a null value (tombstone)."""
        return self._null

    def schema_version(self) -> str:
        """The version of the topic's schema the producer wrote with, as pulsar-client
        returns it: the version's 8 bytes, big-endian, as a string of those characters
        (``"\\x00" * 8`` for version 0; ``.encode("latin-1")`` gives the bytes,
        ``int.from_bytes(...)`` the number of the registry's ``GET .../schema/{version}``);
        ``""`` when the producer declared no schema (bytes)."""
        if self._schema_version is None:
            return ""
        return self._schema_version.to_bytes(8, "big", signed=True).decode("latin-1")

    def encryption_context(self) -> Any:
        """The end-to-end encryption details of the message (an ``EncryptionContext``),
        also when it was decrypted; ``None`` for a message that was not encrypted, as
        pulsar-client."""
        return self._encryption

    def __str__(self) -> str:
        return (
            f"Message(prod={self._producer}, seq={self._sequence_id}, "
            f"publish_time={self._publish_ts}, payload_size={len(self._data)}, "
            f"msg_id={self._id}, props={self._properties})"
        )

    __repr__ = __str__
