"""Which index items an incremental expire run reads per ledger (pure: no Spark, no AWS).

A ledger loses only a prefix, so everything a run can delete lies between the ledger's first
remaining item (a Query from entry 0 starts there: deleted items cost nothing) and the first
item that must stay. The incremental run reads just that *window*, not the whole retained
ledger:

- **TTL scan** (message TTL set, some durable cursor): from the lowest durable mark-delete + 1
  up to and including the first message entry published at or after ``now - ttl`` — the
  entries whose TTL ran out since the last run. Its newest expired entry is the TTL mark
  (Pulsar's expiry monitor, too, finds the newest expired entry assuming publish times
  ascend with entry ids).
- **Deletion scan**: from the first remaining item up to and including the first message
  entry that stays whatever lies beyond it: above every holder's mark-delete (after the TTL
  move) or within the retention time (a delayed entry lies above its own cursor's
  mark-delete, so above that bound already). Then on while a row still belongs to an object
  a row below the stop references and the stop row does not (the members of a segment,
  named ``<first eid>-<last eid>`` in its key): no object is freed while an unread item may
  point at it.
- **Size retention** (``retention_mb`` > 0) needs the bytes of everything after an entry:
  such ledgers are read whole, as the full pass reads every ledger.

The plan (``expire_transform``, unchanged) over any such window can only *keep more* than a
plan over the whole ledger: the TTL mark can only be lower; the window's last row is taken
for the head and kept (it is the stop row or above it, kept anyway); every row below the
stop row has a message at or after it, so size retention ``0`` sees the same; and an object
is freed only when no item referencing it is unread. What a short window misses waits for a
later run or for the daily full pass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

EID, OBJ, LEN, N, PT1 = 1, 2, 4, 5, 7
"""Positions in an index row (``catalog.INDEX_COLUMNS``)."""
SEGMENT_PREFIX = "segments/"


@dataclass(frozen=True)
class CursorBound:
    """What one cursor means for a window: ``durable``; ``holds`` (durable, or a reader with
    a live consumer); its mark-delete ``md``."""

    durable: bool
    holds: bool
    md: int


@dataclass(frozen=True)
class LedgerPolicy:
    """A live ledger's effective policies and cursors at the run's ``now_ms``."""

    now_ms: int
    ttl_seconds: int
    retention_minutes: int
    retention_mb: int
    cursors: tuple[CursorBound, ...] = ()

    @property
    def whole(self) -> bool:
        """Size retention needs every item's bytes: read the whole ledger."""
        return self.retention_mb > 0

    @property
    def ttl_start(self) -> int | None:
        """Where the TTL scan starts (None: no TTL scan)."""
        durable = [c.md for c in self.cursors if c.durable]
        if self.ttl_seconds <= 0 or not durable:
            return None
        return min(durable) + 1

    def ttl_cutoff_ms(self) -> int:
        return self.now_ms - self.ttl_seconds * 1000

    def hold(self, ttl_mark: int | None) -> int | None:
        """The lowest holder's mark-delete after the TTL move (None: nobody holds)."""
        mark = -1 if ttl_mark is None else ttl_mark
        held = [max(c.md, mark) if c.durable else c.md for c in self.cursors if c.holds]
        return min(held) if held else None

    def within_retention(self, row: tuple) -> bool:
        """Whether retention alone keeps ``row`` (only size ``-1``: finite sizes read whole)."""
        if self.retention_mb >= 0:
            return False  # 0: keeps nothing by size
        if self.retention_minutes < 0:
            return True
        return self.now_ms - row[PT1] <= self.retention_minutes * 60_000


def is_message(row: tuple) -> bool:
    """An entry with messages and bytes (not a fence or an epoch marker)."""
    return row[N] > 0 and row[LEN] > 0


def segment_last_eid(key: str) -> int | None:
    """The last member of a segment object (``.../<first eid>-<last eid>``), else None."""
    if not key.startswith(SEGMENT_PREFIX):
        return None
    first, _, last = key.rpartition("/")[2].partition("-")
    return int(last) if first.isdigit() and last.isdigit() else None


Reader = Callable[[int], Iterator[tuple]]
"""``read(start)``: the ledger's index rows from entry ``start``, ascending (lazily paged)."""


def _scan(
    rows: Iterable[tuple], stop: Callable[[tuple], bool], out: dict[int, tuple]
) -> tuple | None:
    """Take rows into ``out`` up to and including the first ``stop`` row and return it
    (None: the rows ran out)."""
    for row in rows:
        out[row[EID]] = row
        if stop(row):
            return row
    return None


def _covering(rows: Iterable[tuple], taken: dict[int, tuple], stop: tuple) -> None:
    """Continue past the ``stop`` row while a row belongs to an object that a row below the
    stop — one that may be deleted — references, unless the stop row (kept) references it
    too (the rest of a segment, an object holding several entries)."""
    objects = {r[OBJ] for e, r in taken.items() if e < stop[EID] and r[OBJ]} - {stop[OBJ]}
    if not objects:
        return
    last = max((segment_last_eid(o) or -1 for o in objects), default=-1)
    for row in rows:
        if row[EID] > last and row[OBJ] not in objects:
            return
        taken[row[EID]] = row
        if row[OBJ]:
            objects.add(row[OBJ])
            last = max(last, segment_last_eid(row[OBJ]) or -1)


def ttl_mark(rows: Iterable[tuple], cutoff_ms: int) -> int | None:
    """The newest message entry published before ``cutoff_ms`` (None: none)."""
    return max((r[EID] for r in rows if r[N] > 0 and r[PT1] < cutoff_ms), default=None)


def window(policy: LedgerPolicy, read: Reader) -> list[tuple]:
    """The rows an incremental run reads of one ledger, ascending (see the module
    docstring)."""
    if policy.whole:
        return list(read(0))
    taken: dict[int, tuple] = {}
    mark = None
    start = policy.ttl_start
    if start is not None:
        cutoff = policy.ttl_cutoff_ms()
        ttl_rows: dict[int, tuple] = {}
        _scan(read(start), lambda r: is_message(r) and r[PT1] >= cutoff, ttl_rows)
        mark = ttl_mark(ttl_rows.values(), cutoff)
        taken.update(ttl_rows)
    hold = policy.hold(mark)

    def stays(row: tuple) -> bool:
        held = hold is not None and row[EID] > hold
        return is_message(row) and (held or policy.within_retention(row))

    rows = read(0)
    stop = _scan(rows, stays, taken)
    if stop is not None:
        _covering(rows, taken, stop)
    return [taken[e] for e in sorted(taken)]
