"""AUTO_SPLIT hash range selector: one contiguous region of ``0..65535`` per consumer.

As the seed describes (Pulsar's HashRangeAutoSplitStickyKeyConsumerSelector):

* the first consumer gets the whole range ``[0, 65535]``;
* a joining consumer splits the largest region in half, taking the *lower* half; the region's
  owner keeps the upper half. Among equally large regions the lowest one (smallest hashes) is
  split, which reproduces the seed's picture (C2 takes ``[0, 32767]``, C3 ``[0, 16383]``, C4
  ``[32768, 49151]``). A region of odd size ``n`` gives ``n // 2`` hashes to the newcomer;
* a leaving consumer's region is merged into the region on its right, or on its left when it
  held the last region (the one ending at 65535).

So a join moves keys only from the split region's owner to the newcomer, and a leave moves
only the leaver's keys, to one neighbour. The regions always cover ``0..65535`` exactly once
while any consumer is connected.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from typing import Any

from magnetar_core.domain.keyshared.hashing import (
    MAX_HASH,
    ConsumerAssignError,
    HashRange,
    check_hash,
)

MODE = "auto_split"


class AutoSplitSelector:
    """Contiguous regions, stored as their inclusive end hashes in ascending order.

    Region ``i`` is ``[ends[i-1] + 1, ends[i]]`` (``[0, ends[0]]`` for the first) and belongs
    to ``owners[i]``; the last end is always 65535 while the selector is not empty.
    """

    mode = MODE

    def __init__(self) -> None:
        self._ends: list[int] = []
        self._owners: list[str] = []

    def add(
        self, consumer_id: str, consumer_name: str, ranges: Sequence[HashRange] | None = None
    ) -> None:
        """Give ``consumer_id`` the lower half of the largest region (all of it if first).

        ``consumer_name`` does not influence AUTO_SPLIT. Raises ConsumerAssignError if the
        consumer is already added, if ``ranges`` are given (only STICKY accepts them), or if
        every region is a single hash (65,536 consumers).
        """
        if ranges:
            raise ConsumerAssignError(
                f"consumer {consumer_id!r} asked for hash ranges {list(ranges)}, but this "
                "Key_Shared subscription uses AUTO_SPLIT, which assigns ranges itself: "
                "subscribe without ranges, or use a STICKY subscription"
            )
        if consumer_id in self._owners:
            raise ConsumerAssignError(f"consumer {consumer_id!r} is already connected")
        if not self._owners:
            self._ends, self._owners = [MAX_HASH], [consumer_id]
            return
        best, best_size, start = 0, -1, 0
        for i, end in enumerate(self._ends):
            size = end - start + 1
            if size > best_size:  # strictly larger: the lowest region wins ties
                best, best_size = i, size
            start = end + 1
        if best_size < 2:
            raise ConsumerAssignError(
                f"cannot add consumer {consumer_id!r}: every one of the {MAX_HASH + 1} hashes "
                "already has its own consumer"
            )
        region_start = self._ends[best - 1] + 1 if best else 0
        self._ends.insert(best, region_start + best_size // 2 - 1)
        self._owners.insert(best, consumer_id)

    def remove(self, consumer_id: str) -> None:
        """Merge the consumer's region into its right neighbour (left if it is the last).

        Does nothing if the consumer is not connected.
        """
        if consumer_id not in self._owners:
            return
        i = self._owners.index(consumer_id)
        if len(self._owners) == 1:
            self._ends, self._owners = [], []
        elif i < len(self._owners) - 1:
            del self._ends[i], self._owners[i]  # the right region now starts where ours did
        else:
            self._owners[i] = self._owners[i - 1]  # the left neighbour extends to 65535
            del self._ends[i - 1], self._owners[i - 1]

    def select(self, h: int) -> str | None:
        """The consumer owning hash ``h`` (0..65535), or None if no consumer is connected.

        Raises ValueError if ``h`` is not a valid hash.
        """
        check_hash(h)
        if not self._owners:
            return None
        return self._owners[bisect_left(self._ends, h)]

    def ranges(self) -> dict[str, list[HashRange]]:
        """Each consumer's inclusive region, as a one-item list (keyHashRangeArrays)."""
        out: dict[str, list[HashRange]] = {}
        start = 0
        for end, owner in zip(self._ends, self._owners, strict=True):
            out[owner] = [(start, end)]
            start = end + 1
        return out

    def consumers(self) -> list[str]:
        """Connected consumer ids in the order of their regions (lowest hashes first)."""
        return list(self._owners)

    def to_dict(self) -> dict[str, Any]:
        """Compact JSON-ready state: ``{"m": "auto_split", "r": [[end, consumer_id], ...]}``."""
        return {"m": MODE, "r": [[e, o] for e, o in zip(self._ends, self._owners, strict=True)]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AutoSplitSelector:
        """Rebuild from ``to_dict()`` output; raises ValueError if it is not a valid state."""
        if data.get("m") != MODE:
            raise ValueError(f"not an AUTO_SPLIT selector state: mode {data.get('m')!r}")
        sel = cls()
        prev = -1
        for end, owner in data.get("r", []):
            if not isinstance(end, int) or not prev < end <= MAX_HASH:
                raise ValueError(f"AUTO_SPLIT region ends must ascend within 0..{MAX_HASH}")
            if not isinstance(owner, str) or owner in sel._owners:
                raise ValueError(f"AUTO_SPLIT region owner {owner!r} is invalid or repeated")
            sel._ends.append(end)
            sel._owners.append(owner)
            prev = end
        if sel._ends and sel._ends[-1] != MAX_HASH:
            raise ValueError(f"AUTO_SPLIT regions must end at {MAX_HASH}")
        return sel
