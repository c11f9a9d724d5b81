"""A set of integers kept as sorted, disjoint, closed ranges (Pulsar's RangeSet of positions)."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from typing import Any


class RangeSet:
    """Sorted disjoint closed ranges ``[start, end]``; adjacent ranges are merged."""

    __slots__ = ("_starts", "_ends")

    def __init__(self, ranges: Iterable[tuple[int, int]] = ()) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []
        for start, end in ranges:
            self.add_range(start, end)

    def __bool__(self) -> bool:
        return bool(self._starts)

    def __len__(self) -> int:
        """How many integers the set holds."""
        return sum(e - s + 1 for s, e in zip(self._starts, self._ends, strict=True))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RangeSet) and self.ranges() == other.ranges()

    def __repr__(self) -> str:
        return f"RangeSet({self.ranges()!r})"

    def __contains__(self, value: int) -> bool:
        i = bisect.bisect_right(self._starts, value) - 1
        return i >= 0 and self._ends[i] >= value

    def __iter__(self) -> Iterator[int]:
        for start, end in zip(self._starts, self._ends, strict=True):
            yield from range(start, end + 1)

    def ranges(self) -> list[tuple[int, int]]:
        """The ranges as ``(start, end)`` pairs, ascending."""
        return list(zip(self._starts, self._ends, strict=True))

    def first(self) -> int | None:
        """The smallest member, or None when empty."""
        return self._starts[0] if self._starts else None

    def add(self, value: int) -> None:
        self.add_range(value, value)

    def add_range(self, start: int, end: int) -> None:
        """Add every integer in ``[start, end]``; raises ValueError when start > end."""
        if start > end:
            raise ValueError(f"range start {start} is after its end {end}")
        lo = bisect.bisect_left(self._ends, start - 1)
        hi = bisect.bisect_right(self._starts, end + 1)
        if lo < hi:
            start = min(start, self._starts[lo])
            end = max(end, self._ends[hi - 1])
        self._starts[lo:hi] = [start]
        self._ends[lo:hi] = [end]

    def remove(self, value: int) -> None:
        self.remove_range(value, value)

    def remove_range(self, start: int, end: int) -> None:
        """Remove every integer in ``[start, end]`` (absent ones are ignored)."""
        if start > end:
            return
        lo = bisect.bisect_left(self._ends, start)
        hi = bisect.bisect_right(self._starts, end)
        if lo >= hi:
            return
        keep_starts: list[int] = []
        keep_ends: list[int] = []
        if self._starts[lo] < start:
            keep_starts.append(self._starts[lo])
            keep_ends.append(start - 1)
        if self._ends[hi - 1] > end:
            keep_starts.append(end + 1)
            keep_ends.append(self._ends[hi - 1])
        self._starts[lo:hi] = keep_starts
        self._ends[lo:hi] = keep_ends

    def remove_up_to(self, value: int) -> None:
        """Remove every member at or below ``value``."""
        first = self.first()
        if first is not None and first <= value:
            self.remove_range(first, value)

    def take_first(self, count: int) -> list[int]:
        """Remove and return up to ``count`` smallest members."""
        taken: list[int] = []
        for member in self:
            if len(taken) >= count:
                break
            taken.append(member)
        for member in taken:
            self.remove(member)
        return taken

    def to_list(self) -> list[list[int]]:
        """A JSON-friendly form: ``[[start, end], ...]``."""
        return [[s, e] for s, e in zip(self._starts, self._ends, strict=True)]

    @classmethod
    def from_list(cls, data: Iterable[Iterable[int]]) -> RangeSet:
        return cls((int(s), int(e)) for s, e in data)

    def to_deltas(self) -> list[int]:
        """A compact JSON-friendly form: ``[start, length, gap, length, ...]``, each range
        as the distance from the previous range's end to its start (the first: its start)
        and its length less one. Scattered entries (Key_Shared leases, individual acks) cost
        a few digits each instead of a ``[start, end]`` pair of full ids."""
        out: list[int] = []
        previous = 0
        for start, end in zip(self._starts, self._ends, strict=True):
            out += [start - previous, end - start]
            previous = end
        return out

    @classmethod
    def from_json(cls, data: Iterable[Any]) -> RangeSet:
        """A set from ``to_deltas``' form, or from ``to_list``'s (``[[start, end], ...]``,
        as items written before the compact form hold)."""
        values = list(data)
        if values and isinstance(values[0], list | tuple):
            return cls.from_list(values)
        ranges, previous = [], 0
        for i in range(0, len(values) - 1, 2):
            start = previous + int(values[i])
            previous = start + int(values[i + 1])
            ranges.append((start, previous))
        return cls(ranges)

    def copy(self) -> RangeSet:
        clone = RangeSet()
        clone._starts = list(self._starts)
        clone._ends = list(self._ends)
        return clone
