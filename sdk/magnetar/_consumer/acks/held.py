"""Client-side bookkeeping that keeps acknowledged messages from coming back.

The service leases whole entries: a negative ack of one message of a batch sends the whole
entry back, with every message of it not acknowledged *at that moment*. Messages of that
batch the consumer still holds (in its receiver queue or in the application) would then go
to another consumer too, and be acknowledged here afterwards: acknowledged messages
delivered again. So:

- ``BatchHolds`` holds back the nack of a batch message while this sub-consumer still holds
  other messages of the same entry (received, neither acknowledged nor negatively
  acknowledged): until they are settled, or — once none of them waits in the receiver queue
  any more — until the hold time is up (the application keeps some for long; ``AckTracker``).
  Messages dropped from the receiver queue (close, seek, subscribing again) stop holding;
- ``AckedIds`` remembers the ids this consumer acknowledged (bounded, oldest forgotten first)
  so that a copy dispatched before the ack reached the service is never handed to the
  application (Pulsar's client filters acknowledged batch indexes the same way).
"""

from __future__ import annotations

import collections
from typing import TYPE_CHECKING

from magnetar.message_id import MessageId

if TYPE_CHECKING:
    from magnetar._consumer.sub import Sub

__all__ = ["ACKED_MEMORY", "AckedIds", "BatchHolds", "Waiting"]

ACKED_MEMORY = 50_000  # acknowledged ids remembered per consumer
Key = tuple["Sub", int, int]  # (sub-consumer, ledger id, entry id)
Waiting = tuple["Sub", str, float]  # a held-back nack: (sub-consumer, id text, nacked at)


def _key(sub: Sub, msg_id: MessageId) -> Key:
    return (sub, msg_id.ledger_id(), msg_id.entry_id())


def _batched(msg_id: MessageId) -> bool:
    return msg_id.batch_index() >= 0


class BatchHolds:
    """Unsettled messages of batch entries per sub-consumer — in the receiver queue, or
    handed to the application — and nacks waiting for their entry to be settled. Not
    thread-safe: the ``AckTracker`` calls it under its lock."""

    def __init__(self) -> None:
        self._queued: dict[Key, set[int]] = {}
        self._handed: dict[Key, set[int]] = {}
        self._waiting: dict[Key, list[Waiting]] = {}

    def received(self, sub: Sub, msg_id: MessageId) -> None:
        """A message of a batch entry reached the receiver queue."""
        if _batched(msg_id):
            self._queued.setdefault(_key(sub, msg_id), set()).add(msg_id.batch_index())

    def handed(self, sub: Sub, msg_id: MessageId) -> bool:
        """A message of a batch entry was handed to the application; True when nacks of
        its entry wait (their hold time may start counting now)."""
        if not _batched(msg_id):
            return False
        key, index = _key(sub, msg_id), msg_id.batch_index()
        queued = self._queued.get(key)
        if queued is not None and index in queued:
            _discard(self._queued, key, index)
            self._handed.setdefault(key, set()).add(index)
        return key in self._waiting

    def settle(self, sub: Sub, msg_id: MessageId) -> list[Waiting]:
        """The message was acknowledged; returns the nacks of its entry that need not wait
        any longer."""
        if not _batched(msg_id):
            return []
        key = _key(sub, msg_id)
        self._forget(key, msg_id.batch_index())
        if key in self._queued or key in self._handed:
            return []
        return self._waiting.pop(key, [])

    def hold_nack(self, sub: Sub, msg_id: MessageId, text: str, now: float) -> bool:
        """Settle a negatively acknowledged message; True when its nack must wait (other
        messages of its entry are still held), False when it may go now together with the
        ``release`` of its entry."""
        if not _batched(msg_id):
            return False
        key = _key(sub, msg_id)
        self._forget(key, msg_id.batch_index())
        if key not in self._queued and key not in self._handed:
            return False
        self._waiting.setdefault(key, []).append((sub, text, now))
        return True

    def release(self, sub: Sub, msg_id: MessageId) -> list[Waiting]:
        """The nacks of ``msg_id``'s entry that waited (its entry is settled now)."""
        return self._waiting.pop(_key(sub, msg_id), []) if _batched(msg_id) else []

    def due(self, cutoff: float) -> list[Waiting]:
        """Remove and return the nacks of entries whose oldest nack was made at or before
        ``cutoff`` (their hold is up) and of which no message waits in the receiver queue
        any more (only the application holds some): messages still queued would be handed
        out here after the service sent them to another consumer too."""
        keys = [k for k, w in self._waiting.items()
                if k not in self._queued and min(t for _, _, t in w) <= cutoff]  # fmt: skip
        return [w for k in keys for w in self._waiting.pop(k)]

    def earliest(self) -> float | None:
        """When the oldest nack that only waits for the application was made (None: none)."""
        times = [t for k, w in self._waiting.items() if k not in self._queued for _, _, t in w]
        return min(times, default=None)

    def drop(self, sub: Sub | None = None) -> list[Waiting]:
        """Forget what ``sub`` (None: every sub-consumer) holds — its local messages were
        dropped and come again from the service; returns the nacks that waited."""
        for table in (self._queued, self._handed):
            for key in [k for k in table if sub is None or k[0] is sub]:
                del table[key]
        keys = [k for k in self._waiting if sub is None or k[0] is sub]
        return [w for k in keys for w in self._waiting.pop(k)]

    def _forget(self, key: Key, index: int) -> None:
        _discard(self._queued, key, index)
        _discard(self._handed, key, index)


def _discard(table: dict[Key, set[int]], key: Key, index: int) -> None:
    indexes = table.get(key)
    if indexes is not None:
        indexes.discard(index)
        if not indexes:
            del table[key]


class AckedIds:
    """Ids acknowledged by this consumer: the last ``limit`` individual ones and the highest
    cumulative one per sub-consumer. Not thread-safe (used under the tracker's lock)."""

    def __init__(self, limit: int = ACKED_MEMORY) -> None:
        self._limit = limit
        self._ids: collections.OrderedDict[tuple[Sub, int, int, int], None] = (
            collections.OrderedDict()
        )
        self._cumulative: dict[Sub, MessageId] = {}

    def add(self, sub: Sub, msg_id: MessageId) -> None:
        """Remember an individual ack."""
        key = (sub, msg_id.ledger_id(), msg_id.entry_id(), msg_id.batch_index())
        self._ids[key] = None
        self._ids.move_to_end(key)
        while len(self._ids) > self._limit:
            self._ids.popitem(last=False)

    def add_cumulative(self, sub: Sub, msg_id: MessageId) -> None:
        """Remember a cumulative ack (everything up to ``msg_id``)."""
        current = self._cumulative.get(sub)
        if current is None or current < msg_id:
            self._cumulative[sub] = msg_id

    def __contains__(self, item: tuple[Sub, MessageId]) -> bool:
        sub, msg_id = item
        cumulative = self._cumulative.get(sub)
        if cumulative is not None and not cumulative < msg_id:
            return True
        key = (sub, msg_id.ledger_id(), msg_id.entry_id(), msg_id.batch_index())
        return key in self._ids

    def clear(self) -> None:
        """Forget everything (after a seek, acknowledged messages may come again)."""
        self._ids.clear()
        self._cumulative.clear()
