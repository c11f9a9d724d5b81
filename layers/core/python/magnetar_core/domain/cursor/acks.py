"""Acknowledgements, negative acknowledgements and redelivery of a cursor, pure.

A mixin of ``cursor.CursorState``: individual acks (entries or batch indexes), cumulative
acks, and sending entries in flight back to the redelivery set (redelivery count + 1) — or,
with a nack delay, to the delayed set under a due bucket (``cursor_delays``). On a
Key_Shared subscription the ``key_shared_acks`` hooks also release lease masks and draining
hashes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from magnetar_core.domain.cursor.key_shared_state import HashesOf, KeySharedState
from magnetar_core.domain.rangeset import RangeSet


class CursorAcks:
    """Mixin of ``CursorState``: the acknowledgement side (uses its fields)."""

    key_shared: KeySharedState | None
    leases: dict[str, RangeSet]
    redeliver: RangeSet
    acked: RangeSet
    batch_acks: dict[int, set[int]]
    batch_sizes: dict[int, int]
    redelivery_counts: dict[int, int]
    read_position: int
    mark_delete: int
    delayed: dict[int, RangeSet]

    # -- acknowledgement -------------------------------------------------------------------

    def acknowledge(
        self, positions: Iterable[tuple[int, int]], hashes_of: HashesOf | None = None
    ) -> int:
        """Acknowledge ``(entry_id, batch_index)`` positions individually.

        ``batch_index`` -1 acks the whole entry; otherwise one message of a batch entry, whose
        size the cursor recorded when it dispatched it. Positions never dispatched are
        ignored. On Key_Shared, ``hashes_of`` loads hashes when acks release draining ones.
        Returns how many positions changed the state.
        """
        positions = list(positions)
        touched = self._ks_before_ack(positions, hashes_of) if self.key_shared else []
        changed = 0
        for entry_id, batch_index in positions:
            if entry_id <= self.mark_delete or entry_id in self.acked:
                continue
            if entry_id >= self.read_position:
                continue
            size = self.batch_sizes.get(entry_id, 1)
            if batch_index < 0 or size <= 1:
                self._ack_entry(entry_id)
            elif batch_index >= size:
                continue
            else:
                indexes = self.batch_acks.setdefault(entry_id, set())
                if batch_index in indexes:
                    continue
                indexes.add(batch_index)
                if len(indexes) >= size:
                    self._ack_entry(entry_id)
            changed += 1
        self._ks_after_ack(touched)
        self._advance_mark_delete()
        return changed

    def acknowledge_cumulative(self, entry_id: int, batch_index: int) -> int:
        """Acknowledge everything up to and including one position (Exclusive only).

        Returns how many entries became acknowledged.
        """
        if entry_id >= self.read_position:
            entry_id, batch_index = self.read_position - 1, -1
        batch_size = self.batch_sizes.get(entry_id, 1)
        full = entry_id
        if 0 <= batch_index < batch_size - 1:
            indexes = self.batch_acks.setdefault(entry_id, set())
            indexes.update(range(batch_index + 1))
            if len(indexes) < batch_size:
                full = entry_id - 1
        before = self.mark_delete
        if full > self.mark_delete:
            self.mark_delete = full
            self.forget_up_to(full)
        self._drop_empty_leases()
        self._advance_mark_delete()
        return max(0, self.mark_delete - before)

    def forget_up_to(self, up_to: int) -> None:
        """Drop every record of entries at or below ``up_to`` (acknowledged now): acks,
        redeliveries, leases, batch acks and sizes, redelivery counts, Key_Shared masks and
        delayed entries."""
        self.acked.remove_up_to(up_to)
        self.redeliver.remove_up_to(up_to)
        for lease in self.leases.values():
            lease.remove_up_to(up_to)
        for table in (self.batch_acks, self.batch_sizes, self.redelivery_counts):
            for key in [k for k in table if k <= up_to]:
                del table[key]
        self._ks_forget(lambda e: e <= up_to)
        self._forget_delayed(up_to=up_to)

    def _ack_entry(self, entry_id: int) -> None:
        self.acked.add(entry_id)
        self.redeliver.remove(entry_id)
        for lease in self.leases.values():
            lease.remove(entry_id)
        self.batch_acks.pop(entry_id, None)
        self.batch_sizes.pop(entry_id, None)
        self.redelivery_counts.pop(entry_id, None)
        self._ks_forget(lambda e: e == entry_id)
        if self.delayed:
            self._forget_delayed([entry_id])
        self._drop_empty_leases()

    def skip_missing(self, first_present: int) -> int:
        """Step the read position over ids the log no longer holds (deleted by the expiry
        job: acknowledged by every durable cursor, or expired) up to ``first_present``, the
        first id the log still has at or after it; they count as acknowledged. Returns how
        many ids were skipped."""
        gap = first_present - self.read_position
        if gap <= 0:
            return 0
        self.acked.add_range(self.read_position, first_present - 1)
        self.read_position = first_present
        self._advance_mark_delete()
        return gap

    def _advance_mark_delete(self) -> None:
        ranges = self.acked.ranges()
        if ranges and ranges[0][0] <= self.mark_delete + 1:
            self.mark_delete = max(self.mark_delete, ranges[0][1])
            self.acked.remove_up_to(self.mark_delete)

    def _drop_empty_leases(self) -> None:
        for consumer_id in [c for c, lease in self.leases.items() if not lease]:
            del self.leases[consumer_id]

    # -- negative acknowledgement and redelivery -------------------------------------------

    def negative_acknowledge(
        self,
        consumer_id: str,
        entry_ids: Iterable[int],
        hashes_of: HashesOf | None = None,
        bucket_of: Callable[[int], int | None] | None = None,
    ) -> int:
        """Send entries in flight to ``consumer_id`` back for redelivery (count + 1).

        ``bucket_of(redelivery_count)`` gives the due bucket of a delayed nack (None: at
        once); a delayed entry waits in the delayed set until its bucket is released.
        Returns how many entries went back.
        """
        lease = self.leases.get(consumer_id)
        moved = 0
        entry_ids = sorted(e for e in set(entry_ids) if lease is not None and e in lease)
        self._ks_release(consumer_id, entry_ids, hashes_of)
        for entry_id in entry_ids:
            if lease is not None and entry_id in lease:
                lease.remove(entry_id)
                bucket = bucket_of(self.redelivery_counts.get(entry_id, 0)) if bucket_of else None
                self._requeue(entry_id, bucket)
                moved += 1
        self._drop_empty_leases()
        return moved

    def redeliver_all(self, consumer_id: str, hashes_of: HashesOf | None = None) -> int:
        """Send every entry in flight to ``consumer_id`` back for redelivery (count + 1)."""
        lease = self.leases.get(consumer_id)
        if not lease:
            return 0
        self._ks_release(consumer_id, list(lease), hashes_of)
        del self.leases[consumer_id]
        for entry_id in lease:
            self._requeue(entry_id)
        return len(lease)

    def _requeue(self, entry_id: int, bucket: int | None = None) -> None:
        if self.pending(bucket):
            self.defer(entry_id, bucket)
        else:
            self.redeliver.add(entry_id)
        self.redelivery_counts[entry_id] = self.redelivery_counts.get(entry_id, 0) + 1
