"""Reading messages without consuming them, as pulsar-admin's peek-messages,
examine-message and get-message-by-id do: the n-th entry of a subscription's backlog, the
n-th entry from either end of a topic, an entry by id. Nothing changes: no cursor is
written. Each costs one index query over the range it looks at (``range_counts``), one
index item and one object read (the entry's bytes)."""

from __future__ import annotations

from dataclasses import dataclass

from magnetar_core.domain.errors import (
    NotAllowed,
    NotFound,
    PreconditionFailed,
    SubscriptionNotFound,
)
from magnetar_core.domain.log import IndexEntry
from magnetar_core.services.entries import entry_bytes
from magnetar_core.services.subscriptions.base import SubscriptionContext
from magnetar_core.services.topics import PartitionRef
from magnetar_wire.names import TopicName

EARLIEST = "earliest"
LATEST = "latest"


@dataclass(frozen=True)
class Peeked:
    """One entry read for an operator: where it is, its index item and its bytes exactly as
    produced (``magnetar_wire.decode_entry`` reads them)."""

    ref: PartitionRef
    item: IndexEntry
    data: bytes


class Peeking:
    """Peek, examine and get-by-id on one log (a non-partitioned topic or a partition).

    Every method raises TopicNotFound (404), NotAllowed (405) on a partitioned topic's
    name or a non-persistent topic (name a partition, as Pulsar asks), PreconditionFailed
    (412) for a position below 1, NotFound (404) "Message not found" beyond the messages
    there are."""

    def __init__(self, context: SubscriptionContext) -> None:
        self._ctx = context

    def _ref(self, name: TopicName, verb: str) -> PartitionRef:
        if not name.persistent:
            raise NotAllowed(f"{verb} is only for persistent topics, not {name}")
        if name.partition_index < 0 and self._ctx.topics.get(name).partitions:
            raise NotAllowed(
                f"{verb} on a partitioned topic is not allowed; name one of its partitions "
                f"({name}-partition-0 ...)"
            )
        return self._ctx.topics.resolve(name, create=False)

    def _with_messages(self, ref: PartitionRef, start: int) -> list[int]:
        head = self._ctx.log.head(ref.key)
        if head < start:
            return []
        rows = self._ctx.log.range_counts(ref.key, start, head)
        return [row.entry_id for row in rows if row.messages]

    def _read(self, ref: PartitionRef, entry_id: int) -> Peeked:
        item = self._ctx.log.get_many(ref.key, [entry_id]).get(entry_id)
        if item is None or item.marker:
            raise NotFound(f"Message not found: entry {ref.ledger_id}:{entry_id} of {ref.topic}")
        data = entry_bytes(self._ctx.entries, item)
        return Peeked(ref, item, data)

    def nth_in_backlog(self, name: TopicName, subscription: str, position: int) -> Peeked:
        """The ``position``-th (1 = the first) unacknowledged entry of the subscription's
        backlog. Also raises SubscriptionNotFound (404) "Subscription not found"."""
        _at_least_one(position)
        ref = self._ref(name, "Peek messages")
        state = self._ctx.cursors.get(ref.key, subscription)
        if state is None:
            raise SubscriptionNotFound(
                f"Subscription not found: '{subscription}' on {ref.topic}; "
                "GET .../subscriptions lists the topic's subscriptions"
            )
        pending = [
            e for e in self._with_messages(ref, state.mark_delete + 1) if not state.acks.is_acked(e)
        ]
        if position > len(pending):
            raise NotFound(
                f"Message not found: the backlog of '{subscription}' on {ref.topic} holds "
                f"{len(pending)} entries, not {position}"
            )
        return self._read(ref, pending[position - 1])

    def examine(self, name: TopicName, initial_position: str, position: int) -> Peeked:
        """The ``position``-th entry holding messages counted from the first
        (``earliest``) or back from the last (``latest``; 1 = the last) entry the topic
        still holds."""
        _at_least_one(position)
        ref = self._ref(name, "Examine messages")
        entries = self._with_messages(ref, 0)
        if position > len(entries):
            raise NotFound(
                f"Message not found: {ref.topic} holds {len(entries)} entries, not {position}"
            )
        index = position - 1 if initial_position == EARLIEST else len(entries) - position
        return self._read(ref, entries[index])

    def by_id(self, name: TopicName, ledger_id: int, entry_id: int) -> Peeked:
        """The entry ``ledger_id:entry_id``."""
        ref = self._ref(name, "Get message by id")
        if ledger_id != ref.ledger_id or entry_id < 0:
            raise NotFound(
                f"Message not found: {ledger_id}:{entry_id} is not an entry of {ref.topic} "
                f"(its ledger is {ref.ledger_id})"
            )
        return self._read(ref, entry_id)


def _at_least_one(position: int) -> None:
    if position < 1:
        raise PreconditionFailed(f"messagePosition must be at least 1, not {position}")
