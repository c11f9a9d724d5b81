"""Ports: the per-partition state beside the log — cursors (and the grants of Shared
subscriptions), the producer lease, dedup snapshot and expired totals, compaction.

See ``magnetar_core.ports`` for the conventions (keys, times, errors)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from magnetar_core.domain.compaction import CompactedEntry, CompactionState
from magnetar_core.domain.counters import ExpiredTotals
from magnetar_core.domain.cursor.grants import Grant, GrantChange
from magnetar_core.domain.cursor.state import CursorState
from magnetar_core.domain.producers import DedupSnapshot, ProducerLease


class CursorStore(Protocol):
    """Cursors, one versioned record per (partition ledger, subscription); the per-ledger
    producer records (lease, dedup snapshot) share the key space."""

    def get(self, pk: str, subscription: str) -> CursorState | None:
        """The cursor, strongly consistent, or None."""
        ...

    def put(self, pk: str, state: CursorState) -> None:
        """Write ``state`` if nobody wrote since it was read (``state.version``; 0: only if
        no cursor exists); on success ``state.version`` is the new version. Releases added
        by timers meanwhile that ``state`` did not consume are kept. Raises
        ConditionFailed."""
        ...

    def delete(self, pk: str, state: CursorState) -> None:
        """Delete the cursor if unchanged since ``state`` was read; raises ConditionFailed."""
        ...

    def list(self, pk: str) -> list[CursorState]:
        """Every cursor of one partition ledger (producer records not included)."""
        ...

    def delete_all(self, pk: str) -> int:
        """Delete every record of one partition ledger (cursors, producer lease, dedup
        snapshot); returns how many."""
        ...

    # -- grants: one item per consumer of a Shared subscription (domain.cursor.grants) ----

    def grant(self, pk: str, subscription: str, consumer_id: str) -> Grant | None:
        """The consumer's grant item, strongly consistent, or None."""
        ...

    def hand_out(
        self, pk: str, subscription: str, consumer_id: str, role: str | None, count: int = 1
    ) -> Grant | None:
        """Take the next ``count`` deliveries of the consumer's grant (``handed + count``,
        atomically) and return the item as changed (``Grant.taken(count)``: fewer at the
        queue's end); None when there is none to take: no item, all handed out, revoked,
        or registered by a role other than ``role`` (None: not checked)."""
        ...

    def put_grant(self, pk: str, subscription: str, consumer_id: str, change: GrantChange) -> bool:
        """Record a new grant (``GrantChange``) if the item's ``rev`` is still
        ``change.rev`` (no item, when ``change.fresh``), bumping it, and, taking a dealt
        slot (``change.dealt_seq``), if it is not revoked and took no slot as late (or was
        voided: ``void_slot``); False otherwise."""
        ...

    def ack_granted(
        self,
        pk: str,
        subscription: str,
        consumer_id: str,
        entry_ids: frozenset[int],
        role: str | None,
    ) -> bool:
        """Add ``entry_ids`` to the item's acks if every one of them is in its ``leased``
        set (and ``role`` may act on it, None: not checked); False (nothing recorded)
        otherwise."""
        ...

    def revoke_grant(
        self,
        pk: str,
        subscription: str,
        consumer_id: str,
        entry_ids: frozenset[int] | None,
    ) -> Grant | None:
        """Take ``entry_ids`` (None: every entry, and the queue: ``revoked``) out of the
        item's ``leased`` set, bumping ``rev``; returns the item as changed (its acks to
        fold), or None when there is no item. Revoking every entry writes a revoked item
        where there was none (so a dispatch round's slot cannot be taken after it)."""
        ...

    def void_slot(self, pk: str, subscription: str, consumer_id: str, seq: int) -> bool:
        """Take back a dispatch round's slot ``seq`` the consumer has not taken: record it
        as taken (the item's ``dealt_seq``, written even where there was no item, with
        ``rev`` 0, so the owner's next grant records on it as read) unless
        the item took it (or a later one) already; True when it was voided (its entries,
        leased to the consumer on the cursor, are then on no grant item)."""
        ...

    def grants_of(
        self, pk: str, subscription: str, consumer_ids: Sequence[str]
    ) -> dict[str, Grant | None]:
        """The grant items of ``consumer_ids``, strongly consistent (None: no item), by
        consumer: one BatchGetItem per 100."""
        ...


class ProducerStateStore(Protocol):
    """Per partition ledger: the exclusive producer lease, the dedup snapshot and the
    totals of expired entries (``$expired``: what the stats count of deleted items)."""

    def lease(self, pk: str) -> ProducerLease:
        """The lease (epoch 0, no holder, version 0 when none), strongly consistent."""
        ...

    def put_lease(self, pk: str, lease: ProducerLease) -> None:
        """Write ``lease`` if unchanged since read (``lease.version``); on success
        ``lease.version`` is the new version. Raises ConditionFailed."""
        ...

    def snapshot(self, pk: str) -> DedupSnapshot:
        """The stored dedup snapshot (empty, ``upto`` -1, when none)."""
        ...

    def put_snapshot(self, pk: str, snapshot: DedupSnapshot) -> None:
        """Store ``snapshot`` unless one as new or newer (``upto``) is stored; raises
        ConditionFailed then."""
        ...

    def expired_totals(self, pk: str) -> ExpiredTotals:
        """The totals the expire job folded (``through`` -1, zeros, when none)."""
        ...

    def put_expired_totals(self, pk: str, totals: ExpiredTotals) -> None:
        """Store ``totals`` unless some as far or further (``through``) are stored; raises
        ConditionFailed then."""
        ...


class CompactionStore(Protocol):
    """Topic compaction: the versioned ``$compaction`` pointer per partition ledger, and
    the compacted ledgers (kept entries keyed by their original entry ids)."""

    def get(self, pk: str) -> CompactionState:
        """The partition's compaction state (NOT_RUN, version 0, when never compacted),
        strongly consistent."""
        ...

    def put(self, pk: str, state: CompactionState) -> None:
        """Write ``state`` if unchanged since read (``state.version``; 0: only if absent);
        on success ``state.version`` is the new version. Raises ConditionFailed."""
        ...

    def read_from(self, ledger: str, start: int, limit: int) -> list[CompactedEntry]:
        """Up to ``limit`` kept entries of compacted ledger ``ledger`` with ids >=
        ``start``, ascending."""
        ...

    def get_many(self, ledger: str, entry_ids: Iterable[int]) -> dict[int, CompactedEntry]:
        """The kept entries of these ids, by id (ids the view dropped are absent)."""
        ...
