"""Cursor state of one subscription on one partition (Pulsar's ManagedCursor), pure.

Positions inside a cursor are entry ids of one ledger. Everything at or below
``mark_delete`` is acknowledged; above it, ``acked`` holds individually acknowledged entries
and ``batch_acks`` the acknowledged batch indexes of partly acknowledged entries.
``read_position`` is the next entry never dispatched; ``redeliver`` holds entries below it
that are ready to be dispatched again; ``leases`` says which entries are in flight to which
consumer; ``delayed`` holds entries waiting for a timer, by due bucket (``cursor_delays``);
``dead_letters`` entries on their way to the dead letter topic (``cursor_dead_letters``).
Every mutation returns what it did, so callers can shape responses and tests can assert
exactly. Acks live in ``cursor_acks``; Key_Shared's message-level routing in
``key_shared_cursor`` / ``key_shared_acks`` (state in ``key_shared_state``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from magnetar_core.domain.cursor.acks import CursorAcks
from magnetar_core.domain.cursor.dead_letters import CursorDeadLetters
from magnetar_core.domain.cursor.delays import CursorDelays
from magnetar_core.domain.cursor.key_shared import KeySharedCursor
from magnetar_core.domain.cursor.key_shared_state import (
    KEY_SHARED,
    HashesOf,
    KeySharedOptions,
    KeySharedState,
)
from magnetar_core.domain.dead_letter import DeadLetter, DeadLetterPolicy
from magnetar_core.domain.errors import ConsumerBusy
from magnetar_core.domain.rangeset import RangeSet

EXCLUSIVE = "Exclusive"
SHARED = "Shared"
FAILOVER = "Failover"
SUBSCRIPTION_TYPES = (EXCLUSIVE, SHARED, FAILOVER, KEY_SHARED)
__all__ = ["KEY_SHARED", "KeySharedOptions", "KeySharedState"]


@dataclass
class ConsumerInfo:
    """A registered consumer. Times are epoch milliseconds."""

    consumer_id: str
    name: str
    connected_ms: int
    seen_ms: int
    priority: int = 0
    spread: bool = False

    def to_dict(self) -> dict:
        data = {"name": self.name, "since": self.connected_ms, "seen": self.seen_ms}
        if self.priority:
            data["prio"] = self.priority
        if self.spread:
            data["spread"] = True
        return data

    @classmethod
    def from_dict(cls, consumer_id: str, data: Mapping) -> ConsumerInfo:
        return cls(
            consumer_id,
            data["name"],
            int(data["since"]),
            int(data["seen"]),
            int(data.get("prio", 0)),
            bool(data.get("spread", False)),
        )


@dataclass(frozen=True)
class Delivery:
    """One entry handed to a consumer: ``batch_indexes`` None means every message of it."""

    entry_id: int
    redelivery_count: int
    batch_indexes: tuple[int, ...] | None


@dataclass
class CursorState(CursorAcks, CursorDelays, CursorDeadLetters, KeySharedCursor):
    """The mutable state of a subscription cursor; ``version`` guards optimistic writes.

    ``key_shared`` holds a Key_Shared subscription's selector, draining hashes and
    message-level leases (see ``key_shared_cursor``); None for the other types.
    ``delayed`` maps due buckets (epoch ms) to waiting entries, ``released`` the buckets
    whose timers fired and ``released_max`` the latest consumed (see ``cursor_delays``);
    ``timer_id`` names this cursor's timers (set with its first delayed bucket).
    ``dead_letter_policy`` is the subscription's (the latest subscriber's);
    ``dead_letters`` the outbox, ``dead_letter_next_sequence`` its next sequence id and
    ``dead_letter_id`` names its producer (see ``cursor_dead_letters``).
    """

    subscription: str
    sub_type: str
    mark_delete: int
    read_position: int
    acked: RangeSet = field(default_factory=RangeSet)
    batch_acks: dict[int, set[int]] = field(default_factory=dict)
    batch_sizes: dict[int, int] = field(default_factory=dict)
    redeliver: RangeSet = field(default_factory=RangeSet)
    leases: dict[str, RangeSet] = field(default_factory=dict)
    redelivery_counts: dict[int, int] = field(default_factory=dict)
    consumers: dict[str, ConsumerInfo] = field(default_factory=dict)
    version: int = 0
    durable: bool = True
    key_shared: KeySharedState | None = None
    delayed: dict[int, RangeSet] = field(default_factory=dict)
    released: set[int] = field(default_factory=set)
    released_max: int = 0
    timer_id: str = ""
    read_compacted: bool = False
    """Serve the compacted view up to the compaction horizon first (``compaction_reads``)."""
    dead_letter_policy: DeadLetterPolicy | None = None
    dead_letters: list[DeadLetter] = field(default_factory=list)
    dead_letter_next_sequence: int = 0
    dead_letter_id: str = ""

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
        self.acked = RangeSet()
        self.dead_letters = []
        self.batch_acks, self.batch_sizes, self.redelivery_counts = {}, {}, {}
        self.redeliver = RangeSet()
        self.leases = {}
        self.delayed = {}
        self._ks_forget()
        if skip >= batch_size:
            entry_id, skip = entry_id + 1, 0
        entry_id = max(entry_id, 0)
        self.mark_delete = entry_id - 1
        self.read_position = entry_id
        if skip > 0:
            self.batch_acks[entry_id] = set(range(skip))
            self.batch_sizes[entry_id] = batch_size

    # -- consumers -------------------------------------------------------------------------

    def add_consumer(
        self,
        info: ConsumerInfo,
        sub_type: str,
        key_shared: KeySharedOptions | None = None,
        hashes_of: HashesOf | None = None,
    ) -> None:
        """Register a consumer; raises ConsumerBusy on an Exclusive clash or a type clash.

        A Key_Shared consumer joins the selector with ``key_shared`` options (default
        AUTO_SPLIT); ``hashes_of`` loads hashes of messages in flight, to block moved hashes.
        Raises ConsumerAssignError / HashRangeConflict (STICKY ranges), ConsumerBusy (its
        options differ from the subscription's).
        """
        if self.consumers and sub_type != self.sub_type:
            raise ConsumerBusy(
                f"Subscription '{self.subscription}' is {self.sub_type} and has consumers; "
                f"a consumer of type {sub_type} cannot join it"
            )
        if self.consumers and sub_type == EXCLUSIVE:
            raise ConsumerBusy(
                f"Exclusive consumer is already connected to subscription '{self.subscription}'"
            )
        if sub_type == KEY_SHARED:
            options = key_shared or KeySharedOptions()
            self._ks_join(info.consumer_id, info.name, options, hashes_of)
        else:
            self.key_shared = None
        self.sub_type = sub_type
        self.consumers[info.consumer_id] = info

    def remove_consumer(self, consumer_id: str) -> int:
        """Unregister a consumer; its in-flight entries go back for redelivery (count + 1).

        Returns how many entries went back.
        """
        self.consumers.pop(consumer_id, None)
        self._ks_leave(consumer_id)
        return self.redeliver_all(consumer_id)

    def expire_consumers(self, now_ms: int, lease_ms: int) -> list[str]:
        """Disconnect consumers not seen for ``lease_ms``; their entries go back for
        redelivery. Returns the ids removed."""
        gone = [cid for cid, info in self.consumers.items() if now_ms - info.seen_ms > lease_ms]
        for consumer_id in gone:
            self.remove_consumer(consumer_id)
        return gone

    def touch(self, consumer_id: str, now_ms: int, every_ms: int) -> bool:
        """Record that a consumer is alive, at most once every ``every_ms``; True if recorded."""
        info = self.consumers.get(consumer_id)
        if info is None or now_ms - info.seen_ms < every_ms:
            return False
        info.seen_ms = now_ms
        return True

    def in_flight(self) -> RangeSet:
        """Every entry leased to any consumer."""
        union = RangeSet()
        for lease in self.leases.values():
            for start, end in lease.ranges():
                union.add_range(start, end)
        return union

    # -- dispatch --------------------------------------------------------------------------

    def dispatch(
        self,
        consumer_id: str,
        candidates: Iterable[tuple[int, int]],
        max_messages: int,
        max_unacked_entries: int,
        due: Mapping[int, int] | None = None,
    ) -> list[Delivery]:
        """Lease entries to ``consumer_id``: redeliveries first, then new entries in order.

        ``candidates`` are ``(entry_id, message_count)`` of entries that exist, ascending for
        new ones: the caller passes the redelivery entries it resolved and the entries it
        read at or after the read position. Stops once ``max_messages`` messages are handed
        out (an entry is never split) or the consumer holds ``max_unacked_entries``.
        ``due`` maps entries that must wait to their due bucket: those go to the delayed set
        instead (unless the bucket counts as released already).
        """
        waiting = self.delayed_union() if self.delayed else RangeSet()
        lease = self.leases.setdefault(consumer_id, RangeSet())
        held = len(lease)
        given = 0
        out: list[Delivery] = []
        for entry_id, count in candidates:
            if given >= max_messages or held >= max_unacked_entries:
                break
            if count == 0:  # a marker: nothing to deliver, step over it
                if entry_id == self.read_position:
                    self.read_position += 1
                    self.acked.add(entry_id)
                continue
            if entry_id in waiting:
                continue
            if entry_id in self.redeliver:
                self.redeliver.remove(entry_id)
            elif entry_id == self.read_position:
                self.read_position += 1
            else:
                continue
            if entry_id <= self.mark_delete or entry_id in self.acked:
                continue
            if due and self.pending(due.get(entry_id)):
                self.defer(entry_id, due[entry_id])
                continue
            mask = self._delivery_mask(entry_id, count)
            given += count if mask is None else len(mask)
            out.append(Delivery(entry_id, self.redelivery_counts.get(entry_id, 0), mask))
            if not self.durable:  # a reader's cursor holds nothing back: done once handed out
                self._ack_entry(entry_id)
                continue
            if count > 1:
                self.batch_sizes[entry_id] = count
            lease.add(entry_id)
            held += 1
        if not lease:
            self.leases.pop(consumer_id, None)
        self._advance_mark_delete()
        return out

    def _delivery_mask(self, entry_id: int, count: int) -> tuple[int, ...] | None:
        acked = self.batch_acks.get(entry_id)
        if not acked:
            return None
        return tuple(i for i in range(count) if i not in acked)

    # -- figures ---------------------------------------------------------------------------

    def unacked_entries(self, consumer_id: str | None = None) -> int:
        """Entries in flight (to one consumer, or to all)."""
        if consumer_id is not None:
            lease = self.leases.get(consumer_id)
            return len(lease) if lease else 0
        return sum(len(lease) for lease in self.leases.values())
