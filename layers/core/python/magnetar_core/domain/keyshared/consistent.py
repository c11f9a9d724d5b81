"""Consistent hashing selector: each consumer marks points on a ring of hashes ``0..65535``.

As the seed describes (Pulsar's ConsistentHashingStickyKeyConsumerSelector, used for AUTO_SPLIT
when ``subscriptionKeySharedUseConsistentHashing`` is on):

* a consumer marks ``points`` (default 100) points; point ``i`` for ``i`` in ``1..points`` is at
  ``murmur3_32(name + "\\0" + name_index + "\\0" + i) % 65535``, the key format the seed shows
  (``"orders-aggregator-pod-2345-consumer␀0␀1"``). ``name_index`` is the smallest index not used
  by another connected consumer with the same name, so same-named consumers get distinct points;
* a hash belongs to the first point at or after it, wrapping past 65535 to the lowest point;
* when several consumers mark the same point, the one added first owns it; when it leaves the
  next one (in order of joining) takes over.

So adding a consumer only moves keys to the newcomer, and removing one only moves its own keys.
The ring is not stored: state keeps the consumers (id, name, name index) in join order and the
points are recomputed.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Mapping, Sequence
from typing import Any

from magnetar_core.domain.keyshared.hashing import (
    MAX_HASH,
    ConsumerAssignError,
    HashRange,
    check_hash,
    murmur3_32,
)

MODE = "consistent_hashing"
DEFAULT_POINTS = 100
RING_MODULUS = 65535
"""Ring point positions are ``murmur3_32(...) % 65535`` as in the seed's example."""


def ring_points(consumer_name: str, name_index: int, points: int = DEFAULT_POINTS) -> list[int]:
    """The ring positions (``0..65534``, in point order ``1..points``) a consumer marks."""
    return [
        murmur3_32(f"{consumer_name}\0{name_index}\0{i}".encode()) % RING_MODULUS
        for i in range(1, points + 1)
    ]


class ConsistentHashingSelector:
    """A hash ring; each point holds the consumers that marked it, in join order."""

    mode = MODE

    def __init__(self, points: int = DEFAULT_POINTS) -> None:
        """``points``: ring points per consumer (Pulsar's default and the seed's: 100).

        Raises ValueError if ``points`` is below 1.
        """
        if points < 1:
            raise ValueError(f"points per consumer must be at least 1, got {points}")
        self._points = points
        self._members: list[tuple[str, str, int]] = []  # (id, name, name index), join order
        self._ring: dict[int, list[str]] = {}
        self._positions: list[int] = []  # sorted keys of _ring

    def add(
        self, consumer_id: str, consumer_name: str, ranges: Sequence[HashRange] | None = None
    ) -> None:
        """Mark the consumer's points; on shared points earlier consumers keep ownership.

        Raises ConsumerAssignError if the consumer is already added or ``ranges`` are given
        (only STICKY accepts them).
        """
        if ranges:
            raise ConsumerAssignError(
                f"consumer {consumer_id!r} asked for hash ranges {list(ranges)}, but this "
                "Key_Shared subscription uses AUTO_SPLIT (consistent hashing), which assigns "
                "ranges itself: subscribe without ranges, or use a STICKY subscription"
            )
        if any(m[0] == consumer_id for m in self._members):
            raise ConsumerAssignError(f"consumer {consumer_id!r} is already connected")
        used = {m[2] for m in self._members if m[1] == consumer_name}
        index = next(i for i in range(len(used) + 1) if i not in used)
        self._mark(consumer_id, consumer_name, index)

    def _mark(self, consumer_id: str, consumer_name: str, index: int) -> None:
        self._members.append((consumer_id, consumer_name, index))
        for pos in ring_points(consumer_name, index, self._points):
            holders = self._ring.get(pos)
            if holders is None:
                self._ring[pos] = [consumer_id]
                insort(self._positions, pos)
            elif consumer_id not in holders:
                holders.append(consumer_id)

    def remove(self, consumer_id: str) -> None:
        """Unmark the consumer's points. Does nothing if it is not connected."""
        member = next((m for m in self._members if m[0] == consumer_id), None)
        if member is None:
            return
        self._members.remove(member)
        for pos in set(ring_points(member[1], member[2], self._points)):
            holders = self._ring[pos]
            holders.remove(consumer_id)
            if not holders:
                del self._ring[pos]
                del self._positions[bisect_left(self._positions, pos)]

    def select(self, h: int) -> str | None:
        """The owner of the first point at or after ``h`` (wrapping), or None if empty.

        Raises ValueError if ``h`` is not a hash in 0..65535.
        """
        check_hash(h)
        if not self._positions:
            return None
        i = bisect_left(self._positions, h)
        return self._ring[self._positions[i if i < len(self._positions) else 0]][0]

    def ranges(self) -> dict[str, list[HashRange]]:
        """Each consumer's inclusive hash ranges, ascending and merged (keyHashRangeArrays)."""
        if not self._positions:
            return {}
        # ascending and merged as they are made: a consumer's ranges touch only where its
        # points follow each other, so a point of the previous point's owner extends its range
        raw: dict[str, list[HashRange]] = {}
        start, previous = 0, None
        ring = self._ring
        for pos in self._positions:
            owner = ring[pos][0]
            if owner == previous:
                spans = raw[owner]
                spans[-1] = (spans[-1][0], pos)
            else:
                raw.setdefault(owner, []).append((start, pos))
                previous = owner
            start = pos + 1
        if start <= MAX_HASH:  # past the last point: wraps to the first point's owner
            first = ring[self._positions[0]][0]
            spans = raw[first]
            if first == previous:
                spans[-1] = (spans[-1][0], MAX_HASH)
            else:
                spans.append((start, MAX_HASH))
        order = [m[0] for m in self._members]
        return {c: raw[c] for c in order if c in raw}

    def consumers(self) -> list[str]:
        """Connected consumer ids in join order."""
        return [m[0] for m in self._members]

    def to_dict(self) -> dict[str, Any]:
        """Compact JSON-ready state: mode, points per consumer and ``[id, name, name_index]``
        per consumer in join order (the ring is recomputed from these)."""
        return {"m": MODE, "p": self._points, "c": [list(m) for m in self._members]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ConsistentHashingSelector:
        """Rebuild from ``to_dict()`` output; raises ValueError if it is not a valid state."""
        if data.get("m") != MODE:
            raise ValueError(f"not a consistent hashing selector state: mode {data.get('m')!r}")
        sel = cls(int(data.get("p", DEFAULT_POINTS)))
        for cid, name, index in data.get("c", []):
            if any(m[0] == cid for m in sel._members) or not isinstance(index, int) or index < 0:
                raise ValueError(f"consistent hashing member {cid!r} is invalid or repeated")
            sel._mark(cid, name, index)
        return sel
