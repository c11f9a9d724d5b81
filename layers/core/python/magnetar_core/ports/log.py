"""Ports: the log — topics, each partition ledger's index, entry objects, and the buffers of
non-persistent topics (the state beside each ledger: ``ports.partition_state``).

See ``magnetar_core.ports`` for the conventions (keys, times, errors)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from magnetar_core.domain.buffers import BufferedEntry
from magnetar_core.domain.counters import EntryCounts
from magnetar_core.domain.log import IndexEntry
from magnetar_core.domain.sequencing import Allocation, Writer
from magnetar_core.domain.topic import TopicMeta
from magnetar_wire.names import TopicName


class TopicStore(Protocol):
    """Topic metadata, one record per topic; a deleted topic keeps a tombstone."""

    def get(self, name: TopicName) -> TopicMeta | None:
        """The topic's metadata (a tombstone too), strongly consistent; None if never
        created."""
        ...

    def put(self, meta: TopicMeta, previous: TopicMeta | None) -> None:
        """Write ``meta`` if the stored record is still ``previous`` (same version; None:
        no record). Raises ConditionFailed when someone created or changed it first."""
        ...

    def list(self, namespace_name: str) -> list[TopicMeta]:
        """The active topics of a namespace (``domain://tenant/namespace``), by local name."""
        ...


class LogStore(Protocol):
    """The log index of each partition ledger: ``(pk, entry id) -> IndexEntry``.

    Entry ids come from the ledger's sequencer (``allocate``); every read sees the
    *resolved* ledger (``domain.sequencing``): ids up to the highest one below which no
    writer is in flight, holes of dead writers skipped (``read_from`` returns them as
    markers). A ledger that never allocated reads as stored."""

    def allocate(
        self,
        pk: str,
        count: int,
        writer: Writer | None = None,
        opens: tuple[int, bool] | None = None,
        closes: bool = False,
    ) -> Allocation:
        """Take ``count`` consecutive entry ids of ledger ``pk`` (atomic: no two writers get
        one id), with the ledger's access epoch and the time of the allocation by the
        store's clock (the one readers judge holes by). ``writer``: only if the
        open epoch admits it (``Writer.admitted``; None: no check). ``opens=(epoch,
        exclusive)`` opens that access epoch with them (an epoch marker's id; refused when
        a newer one is open); ``closes`` fences the ledger after them (the fence's id). The
        first allocation of a ledger starts after its last stored item. The caller must
        ``append`` an entry or a hole at every id it took. Raises LedgerClosed (the ledger
        is fenced), EpochSuperseded (the open epoch refuses it); nothing is allocated then."""
        ...

    def append(self, pk: str, entry: IndexEntry) -> None:
        """Commit ``entry`` at its ``entry_id`` (the commit point of a produce). Raises
        ConditionFailed when that id is taken (by a reader's hole too: allocate again)."""
        ...

    def append_once(self, pk: str, entry: IndexEntry, once_key: str, expires_s: int) -> bool:
        """``append`` and a marker of ``once_key`` in ledger ``pk``, atomically: what an
        inbound source event is committed with, so that a redelivery is stored no second
        time. Returns False, writing nothing, when the marker exists (a duplicate); raises
        ConditionFailed when the entry id is taken (a lost race: the marker is not written
        either). The marker is kept at least until ``expires_s`` (epoch seconds)."""
        ...

    def last(self, pk: str) -> IndexEntry | None:
        """The highest committed entry (a fence too), strongly consistent; None if empty."""
        ...

    def head(self, pk: str) -> int:
        """The highest committed entry id, a fence not counted (-1: empty)."""
        ...

    def last_with_messages(self, pk: str, at_most: int) -> IndexEntry | None:
        """The highest entry with id <= ``at_most`` that holds messages (markers, fences and
        expired ids passed over); None if there is none."""
        ...

    def read_from(self, pk: str, start: int, limit: int) -> list[IndexEntry]:
        """Up to ``limit`` items with ids >= ``start`` up to the resolved head, ascending
        (ids may have gaps where entries expired). Holes are returned, as the markers they
        look like (no messages): a cursor steps over them as over an epoch marker."""
        ...

    def range_counts(self, pk: str, start: int, end: int) -> list[EntryCounts]:
        """``(entry_id, messages, size_bytes, publish_ms)`` of every entry with id in
        ``[start, end]``, ascending; ``messages`` is how many messages the entry holds (a
        batch of n: n), 0 for markers and chunks other than a message's last; ``publish_ms``
        the earliest publish time (one query, no per-entry read)."""
        ...

    def producer_tail(self, pk: str, start: int) -> list[tuple[int, str, int, bool]]:
        """``(entry_id, producer name, highest sequence id, completes)`` of every entry from
        ``start`` to the head, ascending, strongly consistent; ``completes`` is False for
        markers and chunks other than a message's last."""
        ...

    def exists(self, pk: str, entry_id: int) -> bool:
        """Whether ``entry_id`` is settled: at or below the resolved head (committed, a hole,
        or expired); on a ledger without a sequencer, whether it is stored (strongly
        consistent)."""
        ...

    def get_many(self, pk: str, entry_ids: Iterable[int]) -> dict[int, IndexEntry]:
        """The entries of these ids that exist, by id (strongly consistent; holes absent)."""
        ...


class EntryStore(Protocol):
    """Entry objects: immutable bytes under unique keys, never overwritten. Only upload keys
    (``services.uploads``) get a presigned PUT URL; a committed entry's key never does."""

    def put(self, key: str, data: bytes) -> None:
        """Store an entry object under ``key``."""
        ...

    def put_new(self, key: str, data: bytes) -> None:
        """Store ``data`` under ``key`` only if no object has that key yet (S3's conditional
        write, ``If-None-Match: *``). Raises ConditionFailed when one has (nothing changes)."""
        ...

    def get(self, key: str, offset: int = 0, length: int | None = None) -> bytes:
        """The object's bytes, or ``length`` bytes from byte ``offset`` (a segment's entry)."""
        ...

    def find(self, key: str, limit_bytes: int | None = None) -> bytes | None:
        """The whole object of ``key`` (at most its first ``limit_bytes`` bytes: one ranged
        read, so an oversized upload is never loaded whole), or None when there is none
        (S3's NoSuchKey)."""
        ...

    def delete(self, key: str) -> None:
        """Delete the object of ``key`` if there is one (a produce refused after its object
        was stored: a terminated topic). Never used on a committed entry's key."""
        ...

    def upload_url(self, key: str, expires_s: int = 900) -> str:
        """A URL a client may PUT the object of ``key`` to, valid for ``expires_s`` seconds
        (the produce handler's large-entry path)."""
        ...

    def download_url(self, key: str, expires_s: int = 900) -> str:
        """A URL a client may GET the object of ``key`` from, valid for ``expires_s``
        seconds."""
        ...


class BufferStore(Protocol):
    """Non-persistent topics: per-subscription buffers of entries that expire."""

    def append(self, pk: str, key: str, entry_id: int, data: bytes, expires_s: int) -> None:
        """Buffer one entry in buffer ``pk`` (``domain.buffers.buffer_key``) under the
        time-ordered unique ``key``, until ``expires_s`` (epoch seconds)."""
        ...

    def peek(self, pk: str, limit: int, now_s: int) -> list[str]:
        """Keys of up to ``limit`` entries of buffer ``pk`` unexpired at ``now_s`` (epoch
        seconds), oldest first."""
        ...

    def take(self, pk: str, key: str) -> BufferedEntry | None:
        """Remove one buffered entry and return it; None when another consumer took it
        first (each entry goes to exactly one taker)."""
        ...
