"""``Message``, as in pulsar-client: a received message (its id, ``MessageId``, is in
``magnetar.message_id`` and importable from here too)."""

from __future__ import annotations

from typing import Any

from .message_id import ChunkMessageId, MessageId

__all__ = ["ChunkMessageId", "Message", "MessageId"]


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
