"""In-memory producer state in the cursors table, under reserved subscription names:
``$producers`` (the exclusive lease and access epoch), ``$dedup`` (a snapshot of the
deduplication state) and ``$expired`` (totals of expired entries), as
``adapters.aws.producers``."""

from __future__ import annotations

import copy

from magnetar_core.adapters.memory.tables import MemoryTables
from magnetar_core.domain.counters import ExpiredTotals
from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.producers import DedupSnapshot, ProducerLease

LEASE = "$producers"
SNAPSHOT = "$dedup"
EXPIRED = "$expired"


class ProducerStateStore:
    """Reads and conditionally writes the lease and the dedup snapshot."""

    def __init__(self, tables: MemoryTables) -> None:
        self._tables = tables
        self._table = tables.cursors

    def lease(self, pk: str) -> ProducerLease:
        """The partition's lease (epoch 0, no holder, version 0 when never written)."""
        with self._tables.lock:
            stored = self._table.get(pk, LEASE)
        return copy.copy(stored) if stored is not None else ProducerLease()

    def put_lease(self, pk: str, lease: ProducerLease) -> None:
        """Write ``lease`` if unchanged since read (version); raises ConditionFailed.
        On success ``lease.version`` is the new version."""
        item = ProducerLease(
            epoch=lease.epoch,
            holder=lease.holder,
            mode=(lease.mode or "Exclusive") if lease.holder is not None else None,
            seen_ms=lease.seen_ms,
            version=lease.version + 1,
            role=lease.role if lease.holder is not None else None,
        )
        with self._tables.lock:
            stored = self._table.get(pk, LEASE)
            if (stored.version if stored is not None else 0) != lease.version:
                raise ConditionFailed(f"writing the producer lease of {pk}")
            self._table.put(pk, LEASE, item)
            lease.version += 1

    def snapshot(self, pk: str) -> DedupSnapshot:
        """The dedup snapshot (``upto`` -1, empty, when none was written)."""
        with self._tables.lock:
            stored = self._table.get(pk, SNAPSHOT)
        return DedupSnapshot(stored.upto, dict(stored.last)) if stored else DedupSnapshot()

    def put_snapshot(self, pk: str, snapshot: DedupSnapshot) -> None:
        """Write a snapshot unless one at or beyond its ``upto`` is stored; raises
        ConditionFailed."""
        with self._tables.lock:
            stored = self._table.get(pk, SNAPSHOT)
            if stored is not None and stored.upto >= snapshot.upto:
                raise ConditionFailed(f"writing the dedup snapshot of {pk}")
            self._table.put(pk, SNAPSHOT, DedupSnapshot(snapshot.upto, dict(snapshot.last)))

    def expired_totals(self, pk: str) -> ExpiredTotals:
        """The totals the expire job folded (``through`` -1, zeros, when none)."""
        with self._tables.lock:
            stored = self._table.get(pk, EXPIRED)
        return copy.copy(stored) if stored is not None else ExpiredTotals()

    def put_expired_totals(self, pk: str, totals: ExpiredTotals) -> None:
        """Store ``totals`` unless some at or beyond its ``through`` are stored; raises
        ConditionFailed."""
        with self._tables.lock:
            stored = self._table.get(pk, EXPIRED)
            if stored is not None and stored.through >= totals.through:
                raise ConditionFailed(f"writing the expired totals of {pk}")
            self._table.put(pk, EXPIRED, copy.copy(totals))
