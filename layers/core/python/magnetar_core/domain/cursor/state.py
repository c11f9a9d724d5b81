"""Cursor state of one subscription on one partition (Pulsar's ManagedCursor), pure.

``CursorState`` is the aggregate: one value object per concern — ``acks`` (AckRecords),
``reads`` (ReadState), ``roster`` (ConsumerRoster), ``delays`` (DelayedSet), ``outbox``
(DeadLetterOutbox), ``key_shared`` (KeySharedState, None unless Key_Shared) — and the public
operations (the acknowledgement ones in its base class, ``Acknowledging``). Rules that span
parts work on them one operation at a time: ``SharedDispatch``, ``KeySharedCursor``
(dispatch), ``Acknowledgements``, ``Membership`` and ``DeadLettering``. The records callers
read and assign (``mark_delete``, ``leases``...) are ``Delegated`` to the parts. Every
mutation returns what it did, so callers can shape responses and tests can assert exactly.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from magnetar_core.domain.counters import OutCounters
from magnetar_core.domain.cursor.acknowledgements import Acknowledgements
from magnetar_core.domain.cursor.acknowledging import Acknowledging
from magnetar_core.domain.cursor.acks import AckRecords
from magnetar_core.domain.cursor.consumers import ConsumerRoster
from magnetar_core.domain.cursor.dead_letter_rules import DeadLettering
from magnetar_core.domain.cursor.dead_letters import DeadLetterOutbox
from magnetar_core.domain.cursor.dealt import Dealt
from magnetar_core.domain.cursor.delays import DelayedSet
from magnetar_core.domain.cursor.delegated import Delegated
from magnetar_core.domain.cursor.dispatching import SharedDispatch, fair_share
from magnetar_core.domain.cursor.key_shared import KeySharedCursor
from magnetar_core.domain.cursor.key_shared_state import HashesOf, KeySharedOptions, KeySharedState
from magnetar_core.domain.cursor.membership import Membership
from magnetar_core.domain.cursor.reads import ReadState
from magnetar_core.domain.cursor.records import (
    EXCLUSIVE,
    FAILOVER,
    KEY_SHARED,
    SHARED,
    SUBSCRIPTION_TYPES,
    ConsumerInfo,
    Delivery,
)
from magnetar_core.domain.dead_letter import DeadLetter, DeadLetterPolicy
from magnetar_core.domain.rangeset import RangeSet
from magnetar_core.domain.response_budget import Room
from magnetar_wire.names import TopicName

__all__ = ["EXCLUSIVE", "FAILOVER", "KEY_SHARED", "SHARED", "SUBSCRIPTION_TYPES", "CursorState"]


@dataclass(init=False)
class CursorState(Acknowledging):
    """The mutable state of a subscription cursor; ``version`` guards optimistic writes.

    ``durable`` is False for a reader's cursor (it holds nothing back); ``read_compacted``
    serves the compacted view up to the compaction horizon first (``compaction_reads``);
    ``out`` counts what was dispatched (stats), and is kept across seeks.
    """

    subscription: str
    sub_type: str
    version: int
    durable: bool
    read_compacted: bool
    key_shared: KeySharedState | None
    acks: AckRecords
    reads: ReadState
    roster: ConsumerRoster
    delays: DelayedSet
    outbox: DeadLetterOutbox
    out: OutCounters
    dealt: dict[str, Dealt]
    """Dispatch rounds' slots by consumer (``rounds``): entries leased to it, not yet taken
    onto its grant item."""

    mark_delete = Delegated[int]("acks")
    acked = Delegated[RangeSet]("acks")
    batch_acks = Delegated[dict[int, set[int]]]("acks")
    batch_sizes = Delegated[dict[int, int]]("acks")
    read_position = Delegated[int]("reads")
    redeliver = Delegated[RangeSet]("reads")
    redelivery_counts = Delegated[dict[int, int]]("reads")
    consumers = Delegated[dict[str, ConsumerInfo]]("roster")
    leases = Delegated[dict[str, RangeSet]]("roster")
    delayed = Delegated[dict[int, RangeSet]]("delays")
    released = Delegated[set[int]]("delays")
    released_max = Delegated[int]("delays")
    timer_id = Delegated[str]("delays")
    dead_letter_policy = Delegated[DeadLetterPolicy | None]("outbox", "policy")
    dead_letters = Delegated[list[DeadLetter]]("outbox", "items")
    dead_letter_next_sequence = Delegated[int]("outbox", "next_sequence")
    dead_letter_id = Delegated[str]("outbox", "producer_id")

    def __init__(
        self,
        subscription: str,
        sub_type: str,
        mark_delete: int,
        read_position: int,
        *,
        version: int = 0,
        durable: bool = True,
        read_compacted: bool = False,
        key_shared: KeySharedState | None = None,
        **records: Any,
    ) -> None:
        """A cursor from its records: ``records`` names any other ``Delegated`` attribute
        (``acked=``, ``leases=``, ``delayed=``, ``dead_letters=``...); the parts start empty
        otherwise. Raises TypeError for a name that is none of them."""
        self.subscription, self.sub_type, self.version = subscription, sub_type, version
        self.durable, self.read_compacted, self.key_shared = durable, read_compacted, key_shared
        self.acks, self.reads = AckRecords(mark_delete), ReadState(read_position)
        self.roster, self.delays, self.outbox = ConsumerRoster(), DelayedSet(), DeadLetterOutbox()
        self.out = OutCounters()
        self.dealt = {}
        for name, value in records.items():
            if not isinstance(getattr(type(self), name, None), Delegated):
                raise TypeError(f"CursorState() got an unexpected keyword argument {name!r}")
            setattr(self, name, value)

    @classmethod
    def new(
        cls, subscription: str, sub_type: str, last_entry_id: int, earliest: bool
    ) -> CursorState:
        """A cursor at Earliest (before entry 0) or Latest (after ``last_entry_id``)."""
        start = -1 if earliest else last_entry_id
        return cls(subscription, sub_type, mark_delete=start, read_position=start + 1)

    def seek(self, entry_id: int, skip: int = 0, batch_size: int = 1) -> None:
        """Reset to deliver from ``entry_id`` on, its first ``skip`` messages excluded.

        Everything in flight is dropped (Pulsar disconnects consumers on seek; ours learn it
        from their next receive), so is every ack above the new position, and so are dead
        letters not yet published (their entries come again; sequence ids are not reused).
        """
        if skip >= batch_size:
            entry_id, skip = entry_id + 1, 0
        entry_id = max(entry_id, 0)
        self.acks.reset(entry_id, skip, batch_size)
        self.reads.reset(entry_id)
        self.roster.leases = {}
        self.dealt = {}
        self.delays.delayed = {}
        self.outbox.items = []
        if self.key_shared is not None:
            self.key_shared.forget()

    def add_consumer(
        self,
        info: ConsumerInfo,
        sub_type: str,
        key_shared: KeySharedOptions | None = None,
        hashes_of: HashesOf | None = None,
    ) -> None:
        """Register a consumer; a Key_Shared one joins the selector with ``key_shared``
        options (``Membership.join``, which says what it raises)."""
        membership = self._membership()
        self.key_shared = membership.join(info, sub_type, self.sub_type, key_shared, hashes_of)
        self.sub_type = sub_type

    def remove_consumer(self, consumer_id: str) -> int:
        """Unregister a consumer; its in-flight entries go back for redelivery (count + 1).
        Returns how many entries went back."""
        return self._membership().leave(consumer_id)

    def expire_consumers(self, now_ms: int, lease_ms: int) -> list[str]:
        """Disconnect consumers not seen for ``lease_ms``; their entries go back for
        redelivery. Returns the ids removed."""
        return self._membership().expire(now_ms, lease_ms)

    def touch(self, consumer_id: str, now_ms: int, every_ms: int) -> bool:
        """Record that a consumer is alive, at most once every ``every_ms``; True if recorded."""
        return self.roster.touch(consumer_id, now_ms, every_ms)

    def in_flight(self) -> RangeSet:
        """Every entry leased to any consumer."""
        return self.roster.in_flight()

    def unacked_entries(self, consumer_id: str | None = None) -> int:
        """Entries in flight (to one consumer, or to all)."""
        return self.roster.unacked_entries(consumer_id)

    def unacked_messages(self, consumer_id: str) -> int:
        """Messages in flight to one consumer (batch indexes counted one by one)."""
        if self.key_shared is not None:
            return self._key_shared_cursor(self.key_shared).unacked_messages(consumer_id)
        lease = self.leases.get(consumer_id)
        return sum(self.acks.unacked_messages(e) for e in lease) if lease else 0

    def delayed_count(self) -> int:
        """How many entries wait in the delayed set."""
        return self.delays.count()

    def dispatch(
        self,
        consumer_id: str,
        candidates: Iterable[tuple[int, int]],
        max_messages: int,
        max_unacked_entries: int,
        due: Mapping[int, int] | None = None,
        room: Room | None = None,
        max_entries: int | None = None,
    ) -> list[Delivery]:
        """Lease whole entries to ``consumer_id`` (``SharedDispatch.dispatch``)."""
        return SharedDispatch(*self._parts(), self._reader()).dispatch(
            consumer_id, candidates, max_messages, max_unacked_entries, due, room, max_entries
        )

    def share_of(self, consumer_id: str, available_entries: int) -> int | None:
        """The entries one receive of ``consumer_id`` may lease of ``available_entries``: on
        a durable Shared cursor its share among the consumers (``fair_share``), else None
        (no bound: Exclusive and Failover have one active consumer, a reader one)."""
        if self.sub_type != SHARED or not self.durable:
            return None
        held = {cid: len(lease) for cid, lease in self.leases.items()}
        return fair_share(available_entries, held, len(self.consumers), consumer_id)

    def key_shared_window(self, window: int) -> tuple[list[int], bool]:
        """The first ``window`` redelivery entries, and whether there are more (then the
        dispatcher hands out no new entries, which keeps each key's order)."""
        return self.reads.window(window)

    def dispatch_key_shared(
        self,
        consumer_id: str,
        candidates: Iterable[tuple[int, tuple[int, ...]]],
        max_messages: int,
        max_unacked_messages: int,
        max_masked_entries: int = 10_000,
        due: Mapping[int, int] | None = None,
        room: Room | None = None,
    ) -> list[Delivery]:
        """Lease to ``consumer_id`` the messages the selector gives it, in entry order
        (``KeySharedCursor.dispatch``); none unless the subscription is Key_Shared."""
        if self.key_shared is None:
            return []
        return self._key_shared_cursor(self.key_shared).dispatch(
            consumer_id,
            candidates,
            max_messages,
            max_unacked_messages,
            max_masked_entries,
            due,
            room,
        )

    def collect_dead_letters(self, topic: TopicName, new_id: str) -> int:
        """Move exhausted entries (Shared and Key_Shared only) from the redelivery set to the
        dead letter outbox, whose ``dead_letter_id`` becomes ``new_id`` when it has none;
        returns how many moved."""
        return self._dead_lettering().collect(topic, self.subscription, new_id)

    def settle_dead_letters(self, through_sequence: int, hashes_of: HashesOf | None = None) -> int:
        """Acknowledge the entries of outbox items with a sequence id up to
        ``through_sequence`` (published) and drop them from the outbox; returns how many."""
        return self._dead_lettering().settle(through_sequence, hashes_of)

    def _membership(self) -> Membership:
        return Membership(self._acknowledgements(), self.subscription)

    def _dead_lettering(self) -> DeadLettering:
        return DeadLettering(self._acknowledgements(), self.outbox, self.sub_type)

    def _key_shared_cursor(self, ks: KeySharedState) -> KeySharedCursor:
        return KeySharedCursor(ks, *self._parts(), self._reader())

    def _reader(self) -> Acknowledgements | None:
        """The acknowledgement rules a reader's (non-durable) cursor applies at dispatch."""
        return None if self.durable else self._acknowledgements()
