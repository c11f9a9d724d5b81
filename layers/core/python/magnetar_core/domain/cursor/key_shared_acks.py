"""Key_Shared acknowledgements and redelivery, pure: releasing masks and draining hashes.

An ack or a negative ack of messages held by a consumer drops them from its lease masks and,
when that consumer has draining hashes, counts them out of those (the hashes come from the
``hashes_of`` loader, called only then).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from magnetar_core.domain.cursor.key_shared_state import HashesOf, KeySharedState
from magnetar_core.domain.keyshared import DrainingHashes
from magnetar_core.domain.rangeset import RangeSet


class KeySharedAcks:
    """Mixin of ``CursorState``: what acks and redeliveries do to the Key_Shared state."""

    key_shared: KeySharedState | None
    leases: dict[str, RangeSet]
    redeliver: RangeSet
    acked: RangeSet
    batch_acks: dict[int, set[int]]
    batch_sizes: dict[int, int]
    read_position: int
    mark_delete: int

    # -- acknowledgement and redelivery ----------------------------------------------------

    def _ks_before_ack(
        self, positions: list[tuple[int, int]], hashes_of: HashesOf | None
    ) -> list[int]:
        """Release the acknowledged messages from masks and draining counts; returns the
        entries touched (their redelivery membership is refreshed after the ack)."""
        ks = self.key_shared
        released: list[tuple[int, int, str]] = []
        touched: list[int] = []
        for entry_id, batch_index in positions:
            if entry_id <= self.mark_delete or entry_id in self.acked:
                continue
            if entry_id >= self.read_position:
                continue
            size = self.batch_sizes.get(entry_id, 1)
            acked = self.batch_acks.get(entry_id, set())
            if batch_index < 0 or size <= 1:
                indexes = [i for i in range(size) if i not in acked]
            elif batch_index < size and batch_index not in acked:
                indexes = [batch_index]
            else:
                continue
            touched.append(entry_id)
            for consumer_id in list(self.leases):
                mine = self._ks_held_by(consumer_id, entry_id, size)
                for i in indexes:
                    if i in mine:
                        released.append((entry_id, i, consumer_id))
                mask = ks.masks.get(consumer_id, {}).get(entry_id)
                if mask is not None:
                    mask.difference_update(indexes)
                    if not mask:
                        self._ks_drop(consumer_id, entry_id)
        self._ks_release_draining(released, hashes_of)
        return touched

    def _ks_after_ack(self, touched: list[int]) -> None:
        for entry_id in touched:
            size = self.batch_sizes.get(entry_id, 1)
            if entry_id in self.redeliver and not self._ks_available(entry_id, size):
                self.redeliver.remove(entry_id)

    def _ks_release(
        self, consumer_id: str, entry_ids: Iterable[int], hashes_of: HashesOf | None
    ) -> None:
        """Before a consumer's entries go back for redelivery: drop its masks of them and
        count their messages out of its draining hashes."""
        ks = self.key_shared
        if ks is None:
            return
        released = []
        draining = ks.draining_at(consumer_id)
        for entry_id in entry_ids:
            if draining:
                size = self.batch_sizes.get(entry_id, 1)
                held = self._ks_held_by(consumer_id, entry_id, size)
                released += [(entry_id, i, consumer_id) for i in sorted(held)]
            ks.masks.get(consumer_id, {}).pop(entry_id, None)
        if not ks.masks.get(consumer_id, True):
            del ks.masks[consumer_id]
        self._ks_release_draining(released, hashes_of)

    def _ks_release_draining(
        self, released: list[tuple[int, int, str]], hashes_of: HashesOf | None
    ) -> None:
        ks = self.key_shared
        released = [r for r in released if ks.draining_at(r[2])]
        if not released:
            return
        if hashes_of is None:
            raise ValueError("hashes_of is needed to release draining hashes")
        hashes = hashes_of(sorted({e for e, _, _ in released}))
        for entry_id, i, consumer_id in released:
            per = hashes.get(entry_id, ())
            if i < len(per):
                ks.draining.on_ack(per[i], consumer_id)

    def _ks_drop(self, consumer_id: str, entry_id: int) -> None:
        masks = self.key_shared.masks
        masks[consumer_id].pop(entry_id, None)
        if not masks[consumer_id]:
            del masks[consumer_id]
        lease = self.leases.get(consumer_id)
        if lease is not None:
            lease.remove(entry_id)
            if not lease:
                del self.leases[consumer_id]

    def _ks_forget(self, acked: Callable[[int], bool] | None = None) -> None:
        """Drop masks of entries now acknowledged (``acked(entry_id)``); with None, every
        mask and every draining hash (a seek drops everything in flight)."""
        ks = self.key_shared
        if ks is None:
            return
        if acked is None:
            ks.masks = {}
            state = ks.draining.to_dict()
            state.pop("e", None)
            ks.draining = DrainingHashes.from_dict(state)
            return
        for m in ks.masks.values():
            for entry_id in [e for e in m if acked(e)]:
                del m[entry_id]
        ks.masks = {c: m for c, m in ks.masks.items() if m}
