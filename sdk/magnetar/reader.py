"""``Reader``: reads a topic from a position, on a non-durable cursor that holds nothing back."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from ._consumer import positions as _positions
from ._consumer.multitopic import subscribe_topic
from ._consumer.receiver import ConsumerCore
from ._encryption.key_reader import Crypto
from ._enums import ConsumerType
from ._producer.registration import declared_schema
from ._topics import TopicName
from .consumer import Consumer
from .message import Message, MessageId

if TYPE_CHECKING:
    from ._consumer.client_view import ClientView


class Reader:
    """pulsar-client's Reader: ``read_next``, ``has_message_available``, ``seek``, ``close``."""

    def __init__(self, client: ClientView, name: TopicName, start_message_id: MessageId, *,
                 reader_name: str | None, receiver_queue_size: int, inclusive: bool,
                 reader_listener: Any, read_compacted: bool = False,
                 schema: Any = None, subscription: str | None = None,
                 crypto: Crypto | None = None) -> None:  # fmt: skip
        """``subscription``: the cursor's name (a table view's; default ``reader-<random>``);
        ``crypto``: end-to-end decryption (``magnetar._consumer.encrypted``)."""
        body = {"subscriptionType": "Exclusive", "durable": False,
                "startMessageId": _positions.id_text(start_message_id),
                "startMessageIdInclusive": inclusive}  # fmt: skip
        if reader_name:
            body["consumerName"] = reader_name
        if read_compacted:
            body["readCompacted"] = True
        declared = declared_schema(schema)
        if declared is not None:  # checked (or registered) as a consumer's
            body["schema"] = declared
        core = ConsumerCore(client._t, body, receiver_queue_size,
                            schema if schema is not None else client._bytes_schema(),
                            client._log)  # fmt: skip
        if crypto is not None:
            core.crypto = crypto
        try:
            subscribe_topic(client, core, name, subscription or f"reader-{uuid.uuid4().hex[:12]}")
        except BaseException:
            core.close(flush_acks=False)
            raise
        client._consumers.add(core)
        listener = None
        if reader_listener is not None:

            def listener(_consumer: Any, msg: Message) -> None:
                reader_listener(self, msg)

        self._consumer = Consumer(core, topic=str(name), subscription=core.subs[0].base,
                                  consumer_type=ConsumerType.Exclusive, batch_policy=None,
                                  listener=listener)  # fmt: skip
        self._core = core
        self._inclusive = inclusive
        self._after = self._position_before(start_message_id, starting=True)

    def _position_before(self, start: MessageId, starting: bool = False) -> MessageId | None:
        """What a message must come after to be unread (None: anything counts). A reader
        created at ``latest`` with ``start_message_id_inclusive`` starts AT the last message
        (as Pulsar's); a later ``seek(latest)`` goes past it."""
        if start == MessageId.earliest:
            return None
        if start == MessageId.latest and starting and self._inclusive:
            return None
        if start == MessageId.latest:
            return _positions.last_message_id(self._core)
        return None if self._inclusive else start

    def topic(self) -> str:
        return self._consumer.topic()

    def read_next(self, timeout_millis: int | None = None) -> Message:
        """The next message; raises Timeout when none comes within ``timeout_millis``."""
        msg = self._consumer.receive(timeout_millis)
        self._after = msg.message_id()
        return msg

    def has_message_available(self) -> bool:
        """True when a message after the last one read exists (asks the service)."""
        with self._core.cond:
            if self._core.queue:
                return True
        last = _positions.last_message_id(self._core)
        if last == MessageId.earliest:
            return False
        return self._after is None or self._after < last

    def has_reached_end_of_topic(self) -> bool:
        """True when the topic was terminated and every message was read (then
        ``has_message_available`` is False for good). Java's
        ``Reader.hasReachedEndOfTopic``; asks the service."""
        return _positions.reached_end_of_topic(self._core, lambda _sub: self._after)

    def seek(self, messageid: Any) -> None:  # noqa: N803 - pulsar-client's name
        """Move to a message id (after it unless inclusive) or a publish time (epoch ms)."""
        _positions.seek(self._core, messageid, self._inclusive)
        self._after = self._position_before(messageid) if isinstance(messageid, MessageId) else None

    def is_connected(self) -> bool:
        return self._consumer.is_connected()

    def close(self) -> None:
        """Close the reader; its cursor is deleted with it."""
        self._consumer.close()
