"""The commit of one index item: an entry id from the ledger's sequencer, then the
conditional put at that id (the commit point; docs/architecture/producing.md, "The produce commit protocol").

The sequencer hands out ids atomically with the ledger's access epoch, so writers never
race for an id and a fenced producer is refused before it takes one. A writer whose id was
settled by a reader (it stalled past the hole bound: ``domain.sequencing``) gives it up and
takes a new one. A deduplicated commit waits until every id before its own is settled, then
checks the producer's sequence id against the log; a duplicate leaves a hole at its id.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, replace

from magnetar_core.domain.errors import (
    ConditionFailed,
    MagnetarError,
    Overloaded,
    ProducerFenced,
    ServiceUnitNotReady,
)
from magnetar_core.domain.log import IndexEntry
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.sequencing import (
    HOLE_AFTER_MS,
    Allocation,
    EpochSuperseded,
    LedgerClosed,
    Writer,
)
from magnetar_core.ports import LogStore
from magnetar_core.services import deadline
from magnetar_core.services.dedup import Deduplicator
from magnetar_core.services.topics import PartitionRef


@dataclass(frozen=True)
class Once:
    """Commit an entry at most once per ``key`` in its ledger (inbound source events): a
    marker committed with the index item, kept at least until ``expires_s`` (epoch s)."""

    key: str
    expires_s: int


class LedgerFenced(Exception):  # noqa: N818 - an outcome
    """The ledger was closed (its topic deleted): reload the topic and commit again."""


class Duplicate(Exception):  # noqa: N818 - an outcome
    """A replay of the log (or the entry's once marker) showed it was committed already."""


RESERVE_MAX_IDS = 16
"""The most ids one allocation of a multi-entry request takes: written one PutItem after
another, 16 land well within half the hole bound, and the sequencer still takes one update
per 16 entries, not one each."""


@dataclass
class Reservation:
    """Entry ids taken at once for the entries of one multi-entry request, handed out in
    order: one sequencer update per request, not per entry. ``wanted`` is how many the next
    allocation takes (the entries left); ``Committer.release`` settles the ids left over."""

    wanted: int = 1
    """How many ids the next allocation takes; 0: reserve no more (one id per entry)."""
    key: str = ""
    ids: Allocation | None = None
    used: int = 0
    taken_ms: float = 0.0
    """When ``ids`` were taken (the committer's monotonic clock)."""

    def left(self, key: str) -> bool:
        return self.ids is not None and self.key == key and self.used < self.ids.count

    def pop(self) -> Allocation:
        assert self.ids is not None  # noqa: S101 - callers check ``left`` first
        entry_id = self.ids.first_id + self.used
        self.used += 1
        return replace(self.ids, first_id=entry_id, count=1)


class Committer:
    """Commits index items to partition ledgers (``commit``)."""

    def __init__(
        self,
        log: LogStore,
        runtime: Runtime,
        dedup: Deduplicator,
        max_attempts: int = 16,
        hole_after_ms: int = HOLE_AFTER_MS,
    ) -> None:
        """``hole_after_ms``: the log's hole bound (``LOG_HOLE_AFTER_MS``). A deduplicated
        commit waits twice that for the ids before its own to settle (a writer died) before
        answering 503 with Retry-After; a request uses the ids it reserved for half of it (a
        slow request writing entry after entry takes fresh ids rather than meet readers
        settling its old ones)."""
        settle_wait_ms = 2 * hole_after_ms
        self._reserve_ms = hole_after_ms / 2
        self._log = log
        self._rt = runtime
        self._dedup = dedup
        self._max_attempts = max_attempts
        self._settle_wait_ms = settle_wait_ms
        self._cap = RESERVE_MAX_IDS
        """The most ids one allocation of a request takes: after a reservation aged (the log
        is slow), as many as it used; one more after one used up in time."""

    def commit(
        self,
        ref: PartitionRef,
        index: IndexEntry,
        epoch: int | None,
        dedup: bool,
        once: Once | None = None,
        reservation: Reservation | None = None,
    ) -> int:
        """Commit ``index`` at an id from the ledger's sequencer (the next of
        ``reservation``'s, when given: taken for the rest of a request at the first commit);
        a lost id (a reader settled it: this writer stalled past the hole bound) is given up
        and a new one taken, at most ``max_attempts`` times. Raises ProducerFenced,
        Duplicate, LedgerFenced, Overloaded (503 with Retry-After: every attempt lost its
        id)."""
        key = ref.key
        marker = index.count == 0
        opens = (index.epoch, index.exclusive) if marker else None
        started_ms = self._rt.monotonic_ms()
        for _ in range(self._max_attempts):
            writer = None if marker else Writer(epoch)
            try:
                taken = self._take(key, writer, opens, reservation)
            except LedgerClosed:
                raise LedgerFenced(key) from None
            except EpochSuperseded as e:
                raise _fenced(e, epoch, marker, ref) from None
            entry_id = taken.first_id
            item = replace(
                index,
                entry_id=entry_id,
                epoch=index.epoch if marker else taken.epoch,
                exclusive=index.exclusive if marker else taken.exclusive,
                allocated_ms=taken.allocated_ms,
            )
            try:
                deadline.check_before_commit(str(ref.topic))  # the commit point comes next
                if dedup:
                    self._check_duplicate(key, entry_id, index)
                if once is None:
                    self._log.append(key, item)
                elif not self._log.append_once(key, item, once.key, once.expires_s):
                    raise Duplicate()
            except ConditionFailed:
                if self._landed(key, item):  # a retried write whose first answer was lost
                    return entry_id
                self._give_up(key, item)
                if reservation is not None:  # stalled past the bound: so are the ids after
                    self.release(reservation)
                continue
            except (Duplicate, Overloaded, ServiceUnitNotReady):  # the id becomes a hole
                self._give_up(key, item)
                raise
            return entry_id
        spent_ms = int(self._rt.monotonic_ms() - started_ms)
        raise Overloaded(
            f"Could not commit to {ref.topic} after {self._max_attempts} attempts "
            "(every entry id taken was settled before the write landed); retry",
            retry_after_ms=max(1000, spent_ms),
        )

    def _take(
        self,
        key: str,
        writer: Writer | None,
        opens: tuple[int, bool] | None,
        reservation: Reservation | None,
    ) -> Allocation:
        """One id: the reservation's next when it has one for ``key``, else a new
        allocation (of ``reservation.wanted`` ids, kept in it)."""
        if reservation is None or opens is not None:
            return self._log.allocate(key, 1, writer, opens)
        if reservation.key and reservation.key != key:  # routed to several partitions
            self.release(reservation)
            reservation.wanted = 0  # from here on, one id at a time
        if reservation.wanted <= 0:
            return self._log.allocate(key, 1, writer, opens)
        now_ms = self._rt.monotonic_ms()
        if not reservation.left(key) or now_ms - reservation.taken_ms > self._reserve_ms:
            self._pace(reservation, now_ms)
            self.release(reservation)  # none left, or so old readers may soon settle them
            wanted = min(reservation.wanted, self._cap)
            reservation.ids = self._log.allocate(key, wanted, writer)
            reservation.key, reservation.used, reservation.taken_ms = key, 0, now_ms
        return reservation.pop()

    def _pace(self, reservation: Reservation, now_ms: float) -> None:
        """Size the next allocations to the pace the log takes: a reservation that aged
        with ids left (each then costs a hole write) caps them at the ids it used; one used
        up in time raises the cap by one, up to ``RESERVE_MAX_IDS`` (a probe that ages costs one
        hole)."""
        ids = reservation.ids
        if ids is None:
            return
        if now_ms - reservation.taken_ms > self._reserve_ms and reservation.used < ids.count:
            self._cap = max(reservation.used, 1)
        elif reservation.used == ids.count and ids.count >= self._cap:
            self._cap = min(self._cap + 1, RESERVE_MAX_IDS)

    def release(self, reservation: Reservation) -> None:
        """Settle the ids ``reservation`` took and did not use, with holes."""
        ids = reservation.ids
        if ids is not None:
            for entry_id in range(ids.first_id + reservation.used, ids.first_id + ids.count):
                with contextlib.suppress(ConditionFailed):
                    self._log.append(
                        reservation.key, IndexEntry.hole_at(entry_id, ids.allocated_ms)
                    )
        reservation.ids, reservation.used = None, 0

    def _landed(self, key: str, item: IndexEntry) -> bool:
        """Whether ``item`` itself is stored at its id: botocore resends a write whose
        answer it lost, and the resend then fails its condition on the first one's item."""
        return self._log.get_many(key, [item.entry_id]).get(item.entry_id) == item

    def _give_up(self, key: str, item: IndexEntry) -> None:
        """Settle the id of ``item``, which this writer took and will not commit at, with a
        hole, so that readers need not wait for the bound; nothing to do when it is
        settled already."""
        with contextlib.suppress(ConditionFailed):
            self._log.append(key, IndexEntry.hole_at(item.entry_id, item.allocated_ms))

    def _check_duplicate(self, key: str, entry_id: int, index: IndexEntry) -> None:
        """Raise Duplicate if the log before ``entry_id`` holds this producer's sequence id.

        Waits until every id before ``entry_id`` is settled (commits in flight land; dead
        writers' ids become holes), then catches the dedup state up, so that no copy
        committed in flight before this one can slip past. Raises Overloaded when the ids
        do not settle within ``settle_wait_ms``."""
        if entry_id > 0 and not self._log.exists(key, entry_id - 1):
            deadline_ms = self._rt.monotonic_ms() + self._settle_wait_ms
            attempt = 0
            while not self._log.exists(key, entry_id - 1):
                if self._rt.monotonic_ms() >= deadline_ms:
                    raise Overloaded(
                        f"Commits before entry {entry_id} of {key} did not settle within "
                        f"{self._settle_wait_ms} ms; retry",
                        retry_after_ms=self._settle_wait_ms,
                    )
                self._rt.sleep_ms(self._rt.backoff.delay_ms(attempt))
                attempt += 1
        if self._dedup.known_upto(key) < entry_id - 1:
            self._dedup.catch_up(key)
        if self._dedup.is_duplicate(key, index.producer, index.sequence_max):
            raise Duplicate()


def _fenced(
    refused: EpochSuperseded, epoch: int | None, marker: bool, ref: PartitionRef
) -> MagnetarError:
    """The ProducerFenced a refused allocation means for a producer of access ``epoch``
    (None: unregistered) committing an entry or (``marker``) opening an epoch."""
    if marker:
        return ProducerFenced(f"A newer producer (epoch {refused.epoch}) took over {ref.topic}")
    if epoch is None:
        return ProducerFenced(
            f"An exclusive producer holds {ref.topic}; register as a producer to send after it leaves"
        )
    return ProducerFenced(
        f"Producer fenced on {ref.topic}: epoch {epoch} was superseded by epoch {refused.epoch}"
    )
