"""Delayed entries of a cursor, pure: the delayed set by due bucket and timer releases.

An entry that must not go out yet (a delayed message on a Shared or Key_Shared
subscription, or a nack with a delay) sits in ``delayed[bucket]`` instead of the redelivery
set; it is neither leased nor available. The timer workflow of a bucket adds the bucket to
``released`` (the cursor item's number set ``rel``, written by Step Functions, never by us
except to carry it over); the dispatcher then *consumes* the release: the bucket's entries
join the redelivery set and the bucket leaves both sets. ``released_max`` (the latest
bucket consumed) makes every bucket at or before it count as released, so a bucket whose
timer already ran is never waited on again (a later start of its timer would find the
execution already existing and never fire). A bucket whose timer never fired (its
execution failed or never started) is released anyway once it is overdue by the grace: no
message waits forever on a lost timer. ``timer_id`` names the cursor's timers (set with its
first delayed bucket). Buckets are epoch milliseconds.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from magnetar_core.domain.rangeset import RangeSet


@dataclass
class DelayedSet:
    """Entries waiting for a timer, by due bucket, and the buckets released so far."""

    delayed: dict[int, RangeSet] = field(default_factory=dict)
    released: set[int] = field(default_factory=set)
    released_max: int = 0
    timer_id: str = ""

    def pending(self, bucket: int | None) -> bool:
        """Whether an entry due in ``bucket`` (None: due now) must still wait."""
        return bucket is not None and bucket > self.released_max

    def defer(self, entry_id: int, bucket: int) -> bool:
        """Put an entry in the delayed set under ``bucket``; True when the bucket is new
        (then its timer must be started)."""
        new = bucket not in self.delayed
        self.delayed.setdefault(bucket, RangeSet()).add(entry_id)
        return new

    def union(self) -> RangeSet:
        """Every delayed entry, whatever its bucket."""
        union = RangeSet()
        for entries in self.delayed.values():
            for start, end in entries.ranges():
                union.add_range(start, end)
        return union

    def count(self) -> int:
        """How many entries wait in the delayed set."""
        return sum(len(entries) for entries in self.delayed.values())

    def next_due(self) -> int | None:
        """The earliest bucket still waiting, or None."""
        return min(self.delayed, default=None)

    def consume_releases(self, now_ms: int, grace_ms: int | None = None) -> list[int]:
        """Take out the entries of every released bucket whose time has come.

        A bucket released by its timer is consumed once ``now_ms`` reaches it (a timer that
        fires early — the emulator's Wait truncates to whole seconds — never makes a message
        early); buckets at or before ``released_max`` are consumed too, and so is a bucket
        overdue by more than ``grace_ms`` (None: never) though no release came. Returns the
        entries taken out, bucket by bucket (the caller makes them available again). The
        released values consumed are dropped, so the next cursor write removes them from
        the item; the others are carried over.
        """
        due = {b for b in self.released if b <= now_ms}
        if grace_ms is not None:
            due |= {b for b in self.delayed if b + grace_ms < now_ms}
        self.released_max = max([self.released_max, *due])
        due |= {b for b in self.delayed if b <= self.released_max}
        out: list[int] = []
        for bucket in sorted(due):
            self.released.discard(bucket)
            out.extend(self.delayed.pop(bucket, RangeSet()))
        return out

    def forget(self, entry_ids: Iterable[int] = (), up_to: int | None = None) -> None:
        """Drop acknowledged entries (ids, and every id <= ``up_to``); empty buckets go."""
        for bucket in list(self.delayed):
            entries = self.delayed[bucket]
            for entry_id in entry_ids:
                entries.remove(entry_id)
            if up_to is not None:
                entries.remove_up_to(up_to)
            if not entries:
                del self.delayed[bucket]

    def to_dict(self) -> dict:
        """The JSON of the delayed set: ``{bucket: range list}`` and the consumed maximum."""
        out: dict = {}
        if self.delayed:
            out["dl"] = {str(b): entries.to_list() for b, entries in self.delayed.items()}
        if self.released_max:
            out["drel"] = self.released_max
        return out
