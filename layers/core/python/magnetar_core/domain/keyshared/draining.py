"""Draining hashes: Pulsar 4.0's way of keeping per-key order when hash owners change.

A Key_Shared hash may have unacknowledged messages at one consumer at a time. When a join or
leave moves a hash to a new owner while the previous owner still holds unacked messages of it,
the hash is *draining*: it must not be dispatched to anyone but the previous owner until those
messages are acked (or redelivered, or the previous owner disconnects). With
``allow_out_of_order_delivery`` nothing is ever blocked.

How a dispatcher uses it, around every change of the selector::

    before = selector.ranges(); selector.add(...) or selector.remove(c); after = selector.ranges()
    tracker.on_consumer_removed(c)                 # on a leave: its unacked are redelivered
    tracker.block_moved(moved_ranges(before, after), unacked_hash_counts_by_consumer)

then ``is_blocked(h, owner)`` before each dispatch and ``on_ack(h, consumer)`` on each ack or
redelivery of an unacked message. Stats follow Pulsar's consumer stats field names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from magnetar_core.domain.keyshared.hashing import MAX_HASH, HashRange, check_hash

Move = tuple[int, int, str | None, str | None]
"""An inclusive hash range whose owner changed: ``(start, end, previous, new)``."""


def moved_ranges(
    before: Mapping[str, Iterable[HashRange]], after: Mapping[str, Iterable[HashRange]]
) -> list[Move]:
    """The hash ranges whose owner differs between two ``selector.ranges()`` results.

    Hashes nobody owns have owner None. Returns ascending, maximal ``(start, end, previous,
    new)`` ranges; cost is proportional to the number of ranges, not of hashes.
    """

    def flat(rs: Mapping[str, Iterable[HashRange]]) -> list[tuple[int, int, str]]:
        return sorted((s, e, c) for c, ranges in rs.items() for s, e in ranges)

    fb, fa = flat(before), flat(after)
    cuts = sorted({0, *(x for s, e, _ in fb + fa for x in (s, e + 1) if x <= MAX_HASH)})
    # one sweep over the cuts (ascending) and each side's disjoint ascending spans: the span
    # at ``ib`` (``ia``) is the first one not ending before the cut, its owner if it holds it
    ib = ia = 0
    out: list[Move] = []
    for k, start in enumerate(cuts):
        end = cuts[k + 1] - 1 if k + 1 < len(cuts) else MAX_HASH
        while ib < len(fb) and fb[ib][1] < start:
            ib += 1
        while ia < len(fa) and fa[ia][1] < start:
            ia += 1
        prev = fb[ib][2] if ib < len(fb) and fb[ib][0] <= start else None
        new = fa[ia][2] if ia < len(fa) and fa[ia][0] <= start else None
        if prev == new:
            continue
        if out and out[-1][1] + 1 == start and out[-1][2:] == (prev, new):
            out[-1] = (out[-1][0], end, prev, new)
        else:
            out.append((start, end, prev, new))
    return out


class DrainingHashes:
    """Per subscription: which hashes are draining, at which consumer, with how many unacked.

    An entry is ``hash -> [consumer_id, unacked_messages, blocked_attempts]``.
    """

    def __init__(self, allow_out_of_order_delivery: bool = False) -> None:
        self.allow_out_of_order_delivery = allow_out_of_order_delivery
        self._entries: dict[int, list[Any]] = {}
        self._cleared: dict[str, int] = {}

    def block(self, h: int, consumer_id: str, count: int) -> None:
        """Mark ``h`` draining at ``consumer_id``, which holds ``count`` unacked messages of it.

        ``count`` is that consumer's current number of unacked messages with this hash; blocking
        again at the same consumer replaces it. ``count <= 0`` or out-of-order mode: no-op.
        Raises ValueError if ``h`` is invalid or already draining at another consumer (a hash
        can have unacked messages at only one consumer).
        """
        check_hash(h)
        if self.allow_out_of_order_delivery or count <= 0:
            return
        entry = self._entries.get(h)
        if entry is None:
            self._entries[h] = [consumer_id, count, 0]
        elif entry[0] == consumer_id:
            entry[1] = count
        else:
            raise ValueError(
                f"hash {h} is already draining at consumer {entry[0]!r}; it cannot also have "
                f"unacked messages at {consumer_id!r}"
            )

    def block_moved(self, moves: Iterable[Move], unacked: Mapping[str, Mapping[int, int]]) -> int:
        """Block every moved hash that its previous owner still holds unacked messages of.

        ``moves`` is ``moved_ranges(before, after)``; ``unacked`` maps a connected consumer to
        ``{hash: unacked message count}``. Returns how many hashes were blocked.
        """
        blocked = 0
        for start, end, prev, _new in moves:
            if prev is None:
                continue
            for h, n in unacked.get(prev, {}).items():
                if start <= h <= end and n > 0 and not self.allow_out_of_order_delivery:
                    self.block(h, prev, n)
                    blocked += 1
        return blocked

    def on_ack(self, h: int, consumer_id: str, count: int = 1) -> bool:
        """Record ``count`` unacked messages of ``h`` at ``consumer_id`` acked or redelivered.

        Returns True if that cleared the hash from draining (it then counts in the consumer's
        drainingHashesClearedTotal); acks of hashes not draining at that consumer are ignored.
        """
        entry = self._entries.get(h)
        if entry is None or entry[0] != consumer_id:
            return False
        entry[1] -= count
        if entry[1] > 0:
            return False
        del self._entries[h]
        self._cleared[consumer_id] = self._cleared.get(consumer_id, 0) + 1
        return True

    def on_consumer_removed(self, consumer_id: str) -> list[int]:
        """Forget a disconnected consumer: its draining hashes are released (its unacked
        messages get redelivered) and its stats dropped. Returns the released hashes."""
        released = sorted(h for h, e in self._entries.items() if e[0] == consumer_id)
        for h in released:
            del self._entries[h]
        self._cleared.pop(consumer_id, None)
        return released

    def is_blocked(self, h: int, for_consumer: str, *, record: bool = True) -> bool:
        """Whether a message of hash ``h`` must not be dispatched to ``for_consumer`` now.

        True when ``h`` drains at another consumer; then, if ``record``, the entry's
        blockedAttempts grows by one. Never True with ``allow_out_of_order_delivery``.
        """
        entry = self._entries.get(h)
        if entry is None or entry[0] == for_consumer or self.allow_out_of_order_delivery:
            return False
        if record:
            entry[2] += 1
        return True

    def draining_consumer(self, h: int) -> str | None:
        """The consumer ``h`` is draining at, or None if it is not draining."""
        entry = self._entries.get(h)
        return entry[0] if entry else None

    def stats(self, consumer_id: str) -> dict[str, Any]:
        """Pulsar 4.0's draining fields of one consumer's stats (drainingHashes by hash)."""
        mine = sorted((h, e) for h, e in self._entries.items() if e[0] == consumer_id)
        return {
            "drainingHashesCount": len(mine),
            "drainingHashesClearedTotal": self._cleared.get(consumer_id, 0),
            "drainingHashesUnackedMessages": sum(e[1] for _, e in mine),
            "drainingHashes": [
                {"hash": h, "unackMsgs": e[1], "blockedAttempts": e[2]} for h, e in mine
            ],
        }

    def to_dict(self) -> dict[str, Any]:
        """Compact JSON-ready state: ``{"o": ooo, "e": [[hash, consumer, unacked, blocked]],
        "c": {consumer: cleared_total}}`` (empty parts omitted)."""
        out: dict[str, Any] = {"o": self.allow_out_of_order_delivery}
        if self._entries:
            out["e"] = [[h, *e] for h, e in sorted(self._entries.items())]
        if self._cleared:
            out["c"] = dict(self._cleared)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DrainingHashes:
        """Rebuild from ``to_dict()`` output; raises ValueError on an invalid hash."""
        tracker = cls(bool(data.get("o", False)))
        for h, consumer, unacked, blocked in data.get("e", []):
            tracker._entries[check_hash(h)] = [consumer, int(unacked), int(blocked)]
        tracker._cleared = {str(c): int(n) for c, n in data.get("c", {}).items()}
        return tracker
