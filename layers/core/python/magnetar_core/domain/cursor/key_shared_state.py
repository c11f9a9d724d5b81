"""Key_Shared options and state kept in a cursor: selector, draining hashes, lease masks,
delay masks.

The state's own rules live here (who joins how, which batch indexes a consumer holds, what
an ack releases from draining hashes); ``key_shared`` and ``key_shared_acks`` combine them
with the cursor's other parts. Serialised into the cursor item's JSON under ``ks`` (see
``adapters.aws.cursors``); masks travel as hex bitmaps so a partly leased (or partly
delayed) batch entry costs a few bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from magnetar_core.domain.cursor.records import KEY_SHARED
from magnetar_core.domain.errors import ConsumerBusy
from magnetar_core.domain.keyshared import (
    ConsumerAssignError,
    DrainingHashes,
    KeySharedSelector,
    moved_ranges,
    new_selector,
    selector_from_dict,
)
from magnetar_core.domain.keyshared.draining import Move
from magnetar_core.domain.rangeset import RangeSet

__all__ = ["AUTO_SPLIT", "KEY_SHARED", "STICKY", "HashesOf", "KeySharedOptions", "KeySharedState"]
AUTO_SPLIT = "AUTO_SPLIT"
STICKY = "STICKY"
_MODES = {"AUTOSPLIT": AUTO_SPLIT, "AUTO_SPLIT": AUTO_SPLIT, "STICKY": STICKY}

HashesOf = Callable[[list[int]], Mapping[int, tuple[int, ...]]]
"""Loads the per-message sticky key hashes of entries: ``entry_ids -> {entry_id: hashes}``."""


@dataclass(frozen=True)
class KeySharedOptions:
    """What a Key_Shared consumer asks for when it subscribes.

    ``mode`` is ``AUTO_SPLIT`` or ``STICKY`` (``AutoSplit`` / ``Sticky`` accepted);
    ``sticky_ranges`` are inclusive ``(start, end)`` hash ranges (STICKY only);
    ``use_consistent_hashing`` makes AUTO_SPLIT use the hash ring. Mode, out-of-order and
    consistent hashing are fixed by the first consumer of a subscription with none.
    """

    mode: str = AUTO_SPLIT
    sticky_ranges: tuple[tuple[int, int], ...] = ()
    allow_out_of_order: bool = False
    use_consistent_hashing: bool = False

    @classmethod
    def parse(
        cls,
        mode: str | None,
        sticky_ranges: Any = None,
        allow_out_of_order: bool = False,
        use_consistent_hashing: bool = False,
    ) -> KeySharedOptions:
        """Validate a subscribe request's fields; raises ConsumerAssignError."""
        canonical = _MODES.get((mode or AUTO_SPLIT).upper())
        if canonical is None:
            raise ConsumerAssignError(f"Unknown keySharedMode {mode!r}: use AutoSplit or Sticky")
        ranges = sticky_ranges or []
        if not isinstance(ranges, list) or not all(
            isinstance(r, list) and len(r) == 2 and all(_is_int(x) for x in r) for r in ranges
        ):
            raise ConsumerAssignError("stickyRanges must be a list of [start, end] integer pairs")
        if ranges and canonical != STICKY:
            raise ConsumerAssignError("stickyRanges are only accepted with keySharedMode Sticky")
        return cls(
            canonical,
            tuple((r[0], r[1]) for r in ranges),
            bool(allow_out_of_order),
            bool(use_consistent_hashing),
        )


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


@dataclass
class KeySharedState:
    """The selector, the draining hashes, the message-level leases of batch entries and
    the delay masks: for an entry in the cursor's delayed set, the batch indexes that wait
    (absent: the whole entry waits; its other messages stay available to their consumers,
    see ``KeySharedAcks.delay_parts``)."""

    selector: KeySharedSelector
    draining: DrainingHashes
    masks: dict[str, dict[int, set[int]]] = field(default_factory=dict)
    delayed: dict[int, set[int]] = field(default_factory=dict)

    @property
    def mode(self) -> str:
        """``AUTO_SPLIT`` (hash ranges or consistent hashing) or ``STICKY``."""
        return STICKY if self.selector.mode == "sticky" else AUTO_SPLIT

    def draining_at(self, consumer_id: str) -> bool:
        """Whether some hash is draining at ``consumer_id``."""
        return self.draining.stats(consumer_id)["drainingHashesCount"] > 0

    @classmethod
    def for_join(
        cls, current: KeySharedState | None, options: KeySharedOptions, subscription: str
    ) -> KeySharedState:
        """The state a consumer with ``options`` joins: ``current``, or a new one when there
        is none or nobody is in its selector. Raises ConsumerBusy when the mode or the
        out-of-order setting of ``current`` differs from the options."""
        if current is None or not current.selector.consumers():
            selector = new_selector(options.mode, options.use_consistent_hashing)
            return cls(selector, DrainingHashes(options.allow_out_of_order))
        ordered = current.draining.allow_out_of_order_delivery
        if (current.mode, ordered) != (options.mode, options.allow_out_of_order):
            raise ConsumerBusy(
                f"Key_Shared subscription '{subscription}' uses {current.mode} with "
                f"allowOutOfOrderDelivery={ordered}; a consumer asking for {options.mode} "
                f"with allowOutOfOrderDelivery={options.allow_out_of_order} cannot join it"
            )
        return current

    def join(self, consumer_id: str, name: str, options: KeySharedOptions) -> list[Move]:
        """Add a consumer to the selector; returns the hash ranges that moved between
        consumers (none when out-of-order delivery is allowed: nothing drains then).
        Raises ConsumerAssignError / HashRangeConflict (STICKY ranges), state unchanged."""
        before = self.selector.ranges()
        self.selector.add(consumer_id, name, list(options.sticky_ranges) or None)
        if self.draining.allow_out_of_order_delivery:
            return []
        return moved_ranges(before, self.selector.ranges())

    def leave(self, consumer_id: str) -> None:
        """Remove a consumer from the selector and forget its draining hashes and masks."""
        self.selector.remove(consumer_id)
        self.draining.on_consumer_removed(consumer_id)
        self.masks.pop(consumer_id, None)

    # -- masks -----------------------------------------------------------------------------

    def mask_of(self, consumer_id: str, entry_id: int) -> set[int] | None:
        """The batch indexes of ``entry_id`` the consumer holds, when it holds only some."""
        return self.masks.get(consumer_id, {}).get(entry_id)

    def masked_entries(self) -> int:
        """How many partial leases (consumer, entry) the subscription keeps."""
        return sum(len(m) for m in self.masks.values())

    def held_by(
        self,
        consumer_id: str,
        entry_id: int,
        count: int,
        lease: RangeSet | None,
        acked: Collection[int],
    ) -> set[int]:
        """Batch indexes of ``entry_id`` (``count`` messages) the consumer holds, given its
        ``lease`` and the entry's ``acked`` batch indexes."""
        if lease is None or entry_id not in lease:
            return set()
        mask = self.mask_of(consumer_id, entry_id)
        if mask is not None:
            return set(mask)
        return {i for i in range(count) if i not in acked}

    def available(
        self, entry_id: int, count: int, leases: Mapping[str, RangeSet], acked: Collection[int]
    ) -> list[int]:
        """Batch indexes of an entry that are neither acknowledged nor held by anyone."""
        taken = set(acked)
        for consumer_id, lease in leases.items():
            taken |= self.held_by(consumer_id, entry_id, count, lease, acked)
        return [i for i in range(count) if i not in taken]

    def add_mask(self, consumer_id: str, entry_id: int, mine: Iterable[int], partial: bool) -> None:
        """Record that the consumer now holds batch indexes ``mine`` of the entry too: they
        join its mask, or start one when the lease is ``partial`` (else no mask: all)."""
        prior = self.mask_of(consumer_id, entry_id)
        if prior is not None:
            prior.update(mine)
        elif partial:
            self.masks.setdefault(consumer_id, {})[entry_id] = set(mine)

    def unmask(self, consumer_id: str, entry_id: int, indexes: Iterable[int]) -> bool:
        """Take acknowledged ``indexes`` out of the consumer's mask of the entry; True when
        that left the mask empty (then the mask is gone and so must the lease be)."""
        mask = self.mask_of(consumer_id, entry_id)
        if mask is None:
            return False
        mask.difference_update(indexes)
        if mask:
            return False
        self.drop_mask(consumer_id, entry_id)
        return True

    def drop_mask(self, consumer_id: str, entry_id: int) -> None:
        """Forget the consumer's mask of the entry (and its mask table once empty)."""
        mine = self.masks.get(consumer_id)
        if mine is None:
            return
        mine.pop(entry_id, None)
        if not mine:
            del self.masks[consumer_id]

    def forget(self, acked: Callable[[int], bool] | None = None) -> None:
        """Drop masks of entries now acknowledged (``acked(entry_id)``); with None, every
        mask and every draining hash (a seek drops everything in flight)."""
        if acked is None:
            self.masks, self.delayed = {}, {}
            state = self.draining.to_dict()
            state.pop("e", None)
            self.draining = DrainingHashes.from_dict(state)
            return
        for m in self.masks.values():
            for entry_id in [e for e in m if acked(e)]:
                del m[entry_id]
        self.masks = {c: m for c, m in self.masks.items() if m}
        self.undelay([e for e in self.delayed if acked(e)])

    # -- delay masks -----------------------------------------------------------------------

    def delay(self, entry_id: int, indexes: Iterable[int]) -> None:
        """Batch indexes ``indexes`` of a delayed entry wait (with those that waited)."""
        self.delayed.setdefault(entry_id, set()).update(indexes)

    def undelay(self, entry_ids: Iterable[int]) -> None:
        """Forget the delay masks of entries no longer in the delayed set."""
        for entry_id in entry_ids:
            self.delayed.pop(entry_id, None)

    # -- draining --------------------------------------------------------------------------

    def release_draining(
        self, released: list[tuple[int, int, str]], hashes_of: HashesOf | None
    ) -> None:
        """Count messages ``(entry_id, batch_index, consumer_id)`` that left their consumer
        (acked or sent back) out of its draining hashes. ``hashes_of`` is called only when
        one of those consumers has draining hashes; raises ValueError if it is None then."""
        released = [r for r in released if self.draining_at(r[2])]
        if not released:
            return
        if hashes_of is None:
            raise ValueError("hashes_of is needed to release draining hashes")
        hashes = hashes_of(sorted({e for e, _, _ in released}))
        for entry_id, i, consumer_id in released:
            per = hashes.get(entry_id, ())
            if i < len(per):
                self.draining.on_ack(per[i], consumer_id)

    def to_dict(self) -> dict[str, Any]:
        """Compact JSON: lease masks (``m``) and delay masks (``dm``) as hex bitmaps (bit
        ``i`` set: batch index ``i`` held, or waiting)."""
        masks = {
            cid: {str(e): _hex(idx) for e, idx in m.items()} for cid, m in self.masks.items() if m
        }
        out: dict[str, Any] = {"s": self.selector.to_dict(), "d": self.draining.to_dict()}
        if masks:
            out["m"] = masks
        if self.delayed:
            out["dm"] = {str(e): _hex(idx) for e, idx in self.delayed.items()}
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> KeySharedState:
        """Load what ``to_dict`` wrote."""
        masks = {
            cid: {int(e): _bits(int(h, 16)) for e, h in m.items()}
            for cid, m in data.get("m", {}).items()
        }
        delayed = {int(e): _bits(int(h, 16)) for e, h in data.get("dm", {}).items()}
        selector, draining = selector_from_dict(data["s"]), DrainingHashes.from_dict(data["d"])
        return cls(selector, draining, masks, delayed)


def _hex(indexes: Iterable[int]) -> str:
    return format(sum(1 << i for i in indexes), "x")


def _bits(value: int) -> set[int]:
    return {i for i in range(value.bit_length()) if value >> i & 1}
