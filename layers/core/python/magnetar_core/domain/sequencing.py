"""Sequencing a partition ledger: entry ids from an atomic counter, holes, the resolved head.

A produce takes its entry id from the ledger's *sequencer* (one counter per ledger, advanced
atomically: DynamoDB serializes ``UpdateItem ADD`` on one item without a race) and then
writes its index item at that id with ``attribute_not_exists``. Ids are handed out densely,
so in the normal course every id gets its entry. A writer that dies between the two steps
leaves its id empty: a *gap*. Readers never pass a gap they cannot explain. Once an entry
after the gap was allocated longer ago than the bound (``hole_after_ms``), the gap's writer
was allocated even earlier and is presumed dead: a reader writes a *hole* item there
(``attribute_not_exists`` too). If the writer was only slow, its own conditional write now
fails and it commits again under a new id; either way the id is settled exactly once.

The *resolved head* is the highest id below which every id holds an entry, a hole, or was
deleted by expiry: what readers may see. Holes are skipped by every read of the log port;
dispatchers, stats and backlogs only ever see entries. The sequencer keeps a lower bound of
the resolved head (``resolved``), so a reader starts its walk there rather than at 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from magnetar_core.domain.log import IndexEntry

SEQUENCE_SORT_KEY = "$seq"
"""The sequencer's sort key, beside the ledger's producer records (cursors table)."""

HOLE_AFTER_MS = 2000
"""The default bound (``LOG_HOLE_AFTER_MS``): a gap whose next entry was allocated this long
ago is a dead writer's. A writer stores its entry one DynamoDB request after taking its id,
so this is far beyond a live writer; one that was only stalled commits again, later."""

RESOLVED_PERSIST_EVERY = 64
"""A reader stores the resolved head it walked to when that is this many ids past the
stored one, or when everything allocated is resolved and nothing was allocated for the hole
bound (an idle ledger: its head checks are then one GetItem): readers' walks stay short,
and the counter item takes about one write per this many entries beside the allocations."""


class LedgerClosed(Exception):  # noqa: N818 - an outcome, as ConditionFailed
    """The ledger is fenced (its topic deleted): no id is allocated after its fence."""


class EpochSuperseded(Exception):  # noqa: N818 - an outcome, as ConditionFailed
    """The ledger's open access epoch (``epoch``, held ``exclusive``ly or not) refuses the
    allocation: a marker of an older epoch, or a writer it fenced."""

    def __init__(self, epoch: int, exclusive: bool) -> None:
        super().__init__(f"epoch {epoch} is open" + (", exclusively" if exclusive else ""))
        self.epoch = epoch
        self.exclusive = exclusive


@dataclass(frozen=True)
class Writer:
    """Who allocates ids for entries: a producer registered with access ``epoch``, or an
    unregistered one (None). It may take ids while its epoch is at least the open one;
    an unregistered one only while no exclusive producer holds the ledger."""

    epoch: int | None

    def admitted(self, open_epoch: int, exclusive: bool) -> bool:
        if self.epoch is None:
            return not exclusive
        return self.epoch >= open_epoch


@dataclass(frozen=True)
class Allocation:
    """Ids ``first_id .. first_id + count - 1``, taken at ``allocated_ms`` (the writer's
    clock, epoch ms), with the ledger's access epoch as it was at that moment."""

    first_id: int
    count: int
    epoch: int
    exclusive: bool
    allocated_ms: int

    @property
    def ids(self) -> range:
        return range(self.first_id, self.first_id + self.count)


@dataclass(frozen=True)
class SequenceState:
    """The sequencer item: the next id to hand out, a lower bound of the resolved head, the
    access epoch, whether the ledger is fenced (its fence is then ``next_id - 1``) and when
    the last allocation happened (epoch ms)."""

    next_id: int
    resolved: int
    epoch: int = 0
    exclusive: bool = False
    fenced: bool = False
    allocated_ms: int = 0


@dataclass(frozen=True)
class Walk:
    """How far a walk over the log got: every id up to ``resolved`` is settled once the
    ``holes`` are written; ``last`` is the highest entry passed (not a hole), if any."""

    resolved: int
    holes: tuple[int, ...]
    last: IndexEntry | None


def walk(
    after: int, items: Sequence[IndexEntry], now_ms: int, hole_after_ms: int, top: int
) -> Walk:
    """Walk ``items`` (ascending, every stored item with id > ``after``, up to some id)
    from the resolved id ``after``: pass each entry or hole that follows without a gap; a
    gap is passed only when the item after it was allocated at least ``hole_after_ms`` ago
    (its ids become holes to write); otherwise the walk stops before it. Items above
    ``top`` (the highest allocated id) cannot exist and are not expected."""
    resolved, last = after, None
    holes: list[int] = []
    for item in items:
        if item.entry_id > top:
            break
        if item.entry_id > resolved + 1:
            if now_ms - item.allocated_ms < hole_after_ms:
                break
            holes.extend(range(resolved + 1, item.entry_id))
        resolved = item.entry_id
        if not item.hole:
            last = item
    return Walk(resolved, tuple(holes), last)


def stale_tail(resolved: int, state: SequenceState, now_ms: int, hole_after_ms: int) -> range:
    """Ids after ``resolved`` up to the last allocated one, when that last allocation is at
    least ``hole_after_ms`` old and no item was found after ``resolved``: their writers
    are presumed dead (empty otherwise)."""
    if now_ms - state.allocated_ms < hole_after_ms:
        return range(0)
    return range(resolved + 1, state.next_id)


def settle(entry_id: int, state: SequenceState, now_ms: int) -> IndexEntry:
    """What a reader writes at a dead writer's id at ``now_ms``: the fence when the id is a
    fenced ledger's last (its fencer died before writing it), else a hole."""
    if state.fenced and entry_id == state.next_id - 1:
        return replace(IndexEntry.fence_at(entry_id), allocated_ms=now_ms)
    return IndexEntry.hole_at(entry_id, now_ms)
