"""Key_Shared subscriptions' pure domain: sticky key hashing, the three consumer selectors
(AUTO_SPLIT hash ranges, AUTO_SPLIT consistent hashing, STICKY) and Pulsar 4.0's draining
hashes tracker. No I/O: the dispatcher stores ``to_dict()`` states in the cursor item."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from magnetar_core.domain.keyshared.autosplit import AutoSplitSelector
from magnetar_core.domain.keyshared.consistent import ConsistentHashingSelector, ring_points
from magnetar_core.domain.keyshared.draining import DrainingHashes, moved_ranges
from magnetar_core.domain.keyshared.hashing import (
    HASH_RANGE_SIZE,
    MAX_HASH,
    NONE_KEY,
    ConsumerAssignError,
    HashRange,
    HashRangeConflict,
    KeySharedSelector,
    hash_of,
    murmur3_32,
    sticky_key,
    sticky_key_hash,
)
from magnetar_core.domain.keyshared.sticky import StickySelector, validate_ranges

__all__ = [
    "HASH_RANGE_SIZE",
    "MAX_HASH",
    "NONE_KEY",
    "AutoSplitSelector",
    "ConsistentHashingSelector",
    "ConsumerAssignError",
    "DrainingHashes",
    "HashRange",
    "HashRangeConflict",
    "KeySharedSelector",
    "StickySelector",
    "hash_of",
    "moved_ranges",
    "murmur3_32",
    "new_selector",
    "ring_points",
    "selector_from_dict",
    "sticky_key",
    "sticky_key_hash",
    "validate_ranges",
]

_BY_MODE: dict[str, Any] = {
    AutoSplitSelector.mode: AutoSplitSelector,
    ConsistentHashingSelector.mode: ConsistentHashingSelector,
    StickySelector.mode: StickySelector,
}


def new_selector(key_shared_mode: str, use_consistent_hashing: bool = False) -> KeySharedSelector:
    """An empty selector for a subscription's Key_Shared mode (``AUTO_SPLIT`` or ``STICKY``).

    ``use_consistent_hashing`` is the broker setting subscriptionKeySharedUseConsistentHashing:
    AUTO_SPLIT then uses the consistent hashing ring instead of split hash ranges.
    Raises ConsumerAssignError for another mode.
    """
    mode = key_shared_mode.upper()
    if mode == "AUTO_SPLIT":
        return ConsistentHashingSelector() if use_consistent_hashing else AutoSplitSelector()
    if mode == "STICKY":
        return StickySelector()
    raise ConsumerAssignError(
        f"unknown Key_Shared mode {key_shared_mode!r}: use AUTO_SPLIT or STICKY"
    )


def selector_from_dict(data: Mapping[str, Any]) -> KeySharedSelector:
    """Rebuild any selector from its ``to_dict()``; raises ValueError on an unknown mode."""
    cls = _BY_MODE.get(data.get("m"))  # type: ignore[arg-type]
    if cls is None:
        raise ValueError(f"unknown Key_Shared selector state mode {data.get('m')!r}")
    return cls.from_dict(data)
