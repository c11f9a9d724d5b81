"""Positions: start a cursor at a message id, seek by message id or publish time, and the
last message id of a topic. Entry ids are dense, so a publish-time seek is a binary search
over index items (one small read per probe)."""

from __future__ import annotations

from magnetar_core.domain.cursor.state import CursorState
from magnetar_core.domain.errors import InvalidMessage
from magnetar_core.domain.log import IndexEntry
from magnetar_core.services.subscriptions.base import SubscriptionContext
from magnetar_core.services.subscriptions.grants import Grants, Revoked, fold_revoked
from magnetar_core.services.topics import PartitionRef
from magnetar_wire.ids import format_message_id, parse_message_id
from magnetar_wire.names import TopicName

_PAGE = 16
"""Index items per query when a probe looks for the next entry holding messages."""
EARLIEST = "earliest"
LATEST = "latest"


class Seeking:
    """Where cursors start and how they move back and forth."""

    def __init__(self, context: SubscriptionContext) -> None:
        self._ctx = context

    def _head(self, ref: PartitionRef) -> int:
        return self._ctx.log.head(ref.key)

    def _entry(self, ref: PartitionRef, entry_id: int) -> IndexEntry | None:
        return self._ctx.index.resolve(ref.key, [entry_id], self._ctx.log.get_many).get(entry_id)

    def position_of(
        self, ref: PartitionRef, message_id: str, inclusive: bool
    ) -> tuple[int, int, int]:
        """``(entry_id, skip, batch_size)`` a cursor starts at for ``message_id``.

        ``message_id`` is ``earliest``, ``latest`` or a text id ``l:e:p:b``; the start is
        after it unless ``inclusive``. Raises InvalidMessage for a malformed id.
        """
        if message_id == EARLIEST:
            return 0, 0, 1
        if message_id == LATEST:
            return self._head(ref) + 1, 0, 1
        try:
            ledger, entry_id, _partition, batch = parse_message_id(message_id)
        except ValueError as exc:
            raise InvalidMessage(str(exc)) from exc
        if ledger < ref.ledger_id or entry_id < 0:
            return 0, 0, 1
        if ledger > ref.ledger_id:
            return self._head(ref) + 1, 0, 1
        item = self._entry(ref, entry_id)
        size = item.count if item is not None and item.count > 0 else 1
        if batch < 0:
            return (entry_id, 0, size) if inclusive else (entry_id + 1, 0, 1)
        return entry_id, batch if inclusive else batch + 1, size

    def start_of(self, ref: PartitionRef, message_id: str, inclusive: bool) -> tuple[int, int, int]:
        """Where a new cursor starts for ``message_id``: as ``position_of``, except that
        ``latest`` with ``inclusive`` starts at the last message (Pulsar's reader created at
        ``MessageId.latest`` with ``startMessageIdInclusive`` reads it; an empty topic
        starts at its end). Raises InvalidMessage for a malformed id."""
        if message_id == LATEST and inclusive:
            last = self._last_message_id(ref)
            if last is not None:
                return self.position_of(ref, last, True)
        return self.position_of(ref, message_id, inclusive)

    def entry_at_time(self, ref: PartitionRef, timestamp_ms: int) -> int:
        """The first entry whose messages were published at or after ``timestamp_ms``
        (ids holding no message before it may be passed over: a start there skips nothing).

        A binary search over index items (one cached read per probe); a probe that finds no
        message (an id the log no longer holds, a marker) looks at the next entry holding
        messages instead (``_messages_from``: one query), so ids deleted by the expiry job
        or markers in between never stop the search early."""
        low, high = 0, self._head(ref) + 1
        while low < high:
            middle = (low + high) // 2
            item = self._entry(ref, middle)
            if item is None or item.count == 0:
                item = self._messages_from(ref, middle, high)
            if item is not None and item.publish_max_ms < timestamp_ms:
                low = item.entry_id + 1
            else:
                high = middle
        return low

    def _messages_from(self, ref: PartitionRef, start: int, end: int) -> IndexEntry | None:
        """The first entry holding messages with id in ``[start, end)`` (None: none)."""
        while start < end:
            page = self._ctx.log.read_from(ref.key, start, _PAGE)
            for item in page:
                if item.entry_id >= end:
                    return None
                if item.count > 0:
                    return item
            if len(page) < _PAGE:
                return None
            start = page[-1].entry_id + 1
        return None

    def seek(
        self,
        topic: TopicName,
        subscription: str,
        consumer_id: str,
        *,
        message_id: str | None = None,
        timestamp_ms: int | None = None,
        inclusive: bool = False,
        role: str | None = None,
    ) -> None:
        """Reset the subscription to a message id or a publish time (first message at or
        after it). Raises InvalidMessage (neither or both given, a negative timestamp),
        ConsumerNotFound, AuthorizationError (``role`` is not the consumer's)."""
        if (message_id is None) == (timestamp_ms is None):
            raise InvalidMessage("Seek needs exactly one of messageId or timestamp")
        if timestamp_ms is not None and timestamp_ms < 0:
            raise InvalidMessage(f"Field 'timestamp' must be epoch milliseconds >= 0, not {timestamp_ms}")  # fmt: skip
        ref = self._ctx.topics.resolve(topic, create=False)
        if message_id is not None:
            entry_id, skip, size = self.position_of(ref, message_id, inclusive)
        else:
            assert timestamp_ms is not None  # exactly one of the two is given (checked above)
            entry_id, skip, size = self.entry_at_time(ref, timestamp_ms), 0, 1

        revoked = Revoked(Grants(self._ctx), ref, [], None)

        def change(state: CursorState) -> tuple[None, bool]:
            self._ctx.require_consumer(state, consumer_id, role)
            fold_revoked(state, revoked, self._ctx.hashes_of(ref))
            state.seek(entry_id, skip, size)
            return None, True

        self._ctx.update(ref, subscription, change, prepare=revoked.take_all)

    def last_message_id(self, topic: TopicName) -> str | None:
        """The id of the last message of a topic or partition (None when empty)."""
        return self.last_message(topic)[0]

    def last_message(self, topic: TopicName) -> tuple[str | None, bool]:
        """``last_message_id`` and whether the topic or partition was terminated: its
        ledger ends with a fence, so no message will ever follow (no extra request)."""
        ref = self._ctx.topics.resolve(topic, create=False)
        last = self._ctx.log.last(ref.key)  # what ``head`` reads, the fence included
        fenced = last is not None and last.fence
        if last is None or not fenced:
            head = -1 if last is None else last.entry_id
            return self._last_message_id(ref, head, last), False
        head = last.entry_id - 1
        item = self._entry(ref, head) if head >= 0 else None
        return self._last_message_id(ref, head, item), True

    def _last_message_id(
        self, ref: PartitionRef, head: int | None = None, item: IndexEntry | None = None
    ) -> str | None:
        if head is None:
            head = self._head(ref)
            item = self._entry(ref, head) if head >= 0 else None
        if item is None or item.count == 0:  # a marker (or expired): page back to a message
            item = self._ctx.log.last_with_messages(ref.key, head) if head >= 0 else None
        if item is None:
            return None
        batch = item.count - 1 if item.batched else -1
        return format_message_id(ref.ledger_id, item.entry_id, ref.partition, batch)
