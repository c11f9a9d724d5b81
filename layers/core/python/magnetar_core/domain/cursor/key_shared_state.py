"""Key_Shared options and state kept in a cursor: selector, draining hashes, lease masks.

Serialised into the cursor item's JSON under ``ks`` (see ``storage.cursors``); masks travel as
hex bitmaps so a partly leased batch entry costs a few bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from magnetar_core.domain.keyshared import (
    ConsumerAssignError,
    DrainingHashes,
    KeySharedSelector,
    selector_from_dict,
)

KEY_SHARED = "Key_Shared"
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
    """The selector, the draining hashes and the message-level leases of batch entries."""

    selector: KeySharedSelector
    draining: DrainingHashes
    masks: dict[str, dict[int, set[int]]] = field(default_factory=dict)

    @property
    def mode(self) -> str:
        """``AUTO_SPLIT`` (hash ranges or consistent hashing) or ``STICKY``."""
        return STICKY if self.selector.mode == "sticky" else AUTO_SPLIT

    def draining_at(self, consumer_id: str) -> bool:
        """Whether some hash is draining at ``consumer_id``."""
        return self.draining.stats(consumer_id)["drainingHashesCount"] > 0

    def to_dict(self) -> dict[str, Any]:
        """Compact JSON: masks as hex bitmaps (bit ``i`` set: batch index ``i`` held)."""
        masks = {
            cid: {str(e): format(sum(1 << i for i in idx), "x") for e, idx in m.items()}
            for cid, m in self.masks.items()
            if m
        }
        out: dict[str, Any] = {"s": self.selector.to_dict(), "d": self.draining.to_dict()}
        if masks:
            out["m"] = masks
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> KeySharedState:
        masks = {
            cid: {int(e): _bits(int(h, 16)) for e, h in m.items()}
            for cid, m in data.get("m", {}).items()
        }
        return cls(selector_from_dict(data["s"]), DrainingHashes.from_dict(data["d"]), masks)


def _bits(value: int) -> set[int]:
    return {i for i in range(value.bit_length()) if value >> i & 1}
