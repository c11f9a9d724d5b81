"""STICKY selector: consumers declare the inclusive hash ranges they want.

As the seed describes (Pulsar's HashRangeExclusiveStickyKeyConsumerSelector): a consumer must
declare at least one range, its ranges must be valid and must not overlap each other or any
range another connected consumer holds, else it is refused and the selector is left as if it
had never tried. Full coverage is not required: a hash outside every range selects no one, and
its messages wait until some consumer claims it. Ranges never move on join or leave.
"""

from __future__ import annotations

import itertools
from bisect import bisect_right, insort
from collections.abc import Mapping, Sequence
from typing import Any

from magnetar_core.domain.keyshared.hashing import (
    MAX_HASH,
    ConsumerAssignError,
    HashRange,
    HashRangeConflict,
    check_hash,
)

MODE = "sticky"


def validate_ranges(consumer_id: str, ranges: Sequence[Sequence[int]] | None) -> list[HashRange]:
    """Check a consumer's own ranges and return them as sorted ``(start, end)`` tuples.

    Raises ConsumerAssignError if there are none, one is not two ints with
    ``0 <= start <= end <= 65535``, or two of them overlap.
    """
    if not ranges:
        raise ConsumerAssignError(
            f"STICKY consumer {consumer_id!r} declared no hash ranges: give at least one "
            f"inclusive range [start, end] within 0..{MAX_HASH}"
        )
    out: list[HashRange] = []
    for r in ranges:
        ok = isinstance(r, (list, tuple)) and len(r) == 2
        ok = ok and all(isinstance(x, int) and not isinstance(x, bool) for x in r)
        if not ok or not 0 <= r[0] <= r[1] <= MAX_HASH:
            raise ConsumerAssignError(
                f"STICKY consumer {consumer_id!r} declared hash range {r!r}: a range is "
                f"[start, end] with 0 <= start <= end <= {MAX_HASH} (both inclusive)"
            )
        out.append((r[0], r[1]))
    out.sort()
    for (s1, e1), (s2, e2) in itertools.pairwise(out):
        if s2 <= e1:
            raise ConsumerAssignError(
                f"STICKY consumer {consumer_id!r} declared overlapping hash ranges "
                f"[{s1}, {e1}] and [{s2}, {e2}]: make its ranges disjoint"
            )
    return out


class StickySelector:
    """Declared ranges of all connected consumers, kept sorted by start."""

    mode = MODE

    def __init__(self) -> None:
        self._spans: list[tuple[int, int, str]] = []  # (start, end, consumer), sorted
        self._order: list[str] = []  # consumers in join order

    def add(
        self, consumer_id: str, consumer_name: str, ranges: Sequence[HashRange] | None = None
    ) -> None:
        """Give ``consumer_id`` exactly its declared inclusive ``ranges``.

        Raises ConsumerAssignError if the consumer is already added or its ranges are
        missing or invalid (see ``validate_ranges``), and HashRangeConflict if one overlaps a
        range of another connected consumer; the selector is then unchanged.
        """
        if consumer_id in self._order:
            raise ConsumerAssignError(f"consumer {consumer_id!r} is already connected")
        mine = validate_ranges(consumer_id, ranges)
        for start, end in mine:
            i = bisect_right(self._spans, (end, MAX_HASH + 1, ""))  # spans starting <= end
            if i and self._spans[i - 1][1] >= start:
                s, e, other = self._spans[i - 1]
                raise HashRangeConflict(
                    f"STICKY consumer {consumer_id!r} asked for hash range [{start}, {end}], "
                    f"which overlaps [{s}, {e}] held by consumer {other!r}: choose ranges "
                    "outside every connected consumer's ranges (see keyHashRangeArrays)"
                )
        for start, end in mine:
            insort(self._spans, (start, end, consumer_id))
        self._order.append(consumer_id)

    def remove(self, consumer_id: str) -> None:
        """Release the consumer's ranges (nobody inherits them). No-op if not connected."""
        if consumer_id in self._order:
            self._order.remove(consumer_id)
            self._spans = [s for s in self._spans if s[2] != consumer_id]

    def select(self, h: int) -> str | None:
        """The consumer whose range holds ``h``, or None if no range does.

        Raises ValueError if ``h`` is not a hash in 0..65535.
        """
        check_hash(h)
        i = bisect_right(self._spans, (h, MAX_HASH + 1, ""))
        if i and self._spans[i - 1][1] >= h:
            return self._spans[i - 1][2]
        return None

    def ranges(self) -> dict[str, list[HashRange]]:
        """Each consumer's declared ranges, ascending (keyHashRangeArrays)."""
        out: dict[str, list[HashRange]] = {c: [] for c in self._order}
        for start, end, owner in self._spans:
            out[owner].append((start, end))
        return out

    def consumers(self) -> list[str]:
        """Connected consumer ids in join order."""
        return list(self._order)

    def to_dict(self) -> dict[str, Any]:
        """Compact JSON-ready state: ``{"m": "sticky", "c": [[id, [[s, e], ...]], ...]}``."""
        rs = self.ranges()
        return {"m": MODE, "c": [[c, [list(r) for r in rs[c]]] for c in self._order]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StickySelector:
        """Rebuild from ``to_dict()`` output.

        Raises ValueError if it is not a STICKY state, and ConsumerAssignError if its ranges
        are invalid or overlap.
        """
        if data.get("m") != MODE:
            raise ValueError(f"not a STICKY selector state: mode {data.get('m')!r}")
        sel = cls()
        for cid, ranges in data.get("c", []):
            sel.add(cid, cid, [tuple(r) for r in ranges])
        return sel
