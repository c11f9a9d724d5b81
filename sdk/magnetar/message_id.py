"""``MessageId`` and ``ChunkMessageId``, as in pulsar-client: a message's position.

The text form of a message id is the HTTP API's ``ledger:entry:partition:batch`` (e.g.
``1:0:-1:-1``); ``str(MessageId)`` returns it and ``serialize()`` returns it UTF-8 encoded.
(pulsar-client prints ``(l,e,p,b)`` and serializes to protobuf; Magnetar uses one form
everywhere so ids can be pasted into curl calls.)
"""

from __future__ import annotations

import functools

from magnetar_wire.ids import format_message_id, parse_message_id

from ._validate import check_type, check_type_or_none

__all__ = ["ChunkMessageId", "MessageId", "id_texts"]

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
