"""Produce: store the entry object, then commit it at the next dense entry id.

Commit protocol (DESIGN.md §3): (1) PUT the entry to a unique S3 key; (2) conditionally put
the index item at the next entry id. Step 2 is the commit point. A lost race re-reads the
head and retries with jitter; a crash before step 2 leaves an unreferenced object for the
expiry job. In the steady state of one producer per partition this is 2 AWS requests per
entry: the next entry id is cached per process and only re-read after a lost race.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from magnetar_wire import ChecksumMismatch, EntryFormatError, EntryMetadata, read_metadata
from magnetar_wire.ids import format_message_id

from .errors import (
    ChecksumError,
    ConditionFailed,
    InvalidMessage,
    MessageTooBig,
    ServiceUnitNotReady,
)
from .names import TopicName
from .policies import Runtime
from .storage.entries import EntryStore
from .storage.log import IndexEntry, LogStore
from .topics import PartitionRef, Topics


@dataclass(frozen=True)
class PublishResult:
    """Where an entry was committed and the ids of its messages."""

    topic: TopicName
    ledger_id: int
    entry_id: int
    partition: int
    message_ids: tuple[str, ...]


class _LedgerFenced(Exception):
    """The ledger was closed (its topic deleted): reload the topic and commit again."""


class Producer:
    """Commits entries to topics (the server side of a producer)."""

    def __init__(
        self,
        topics: Topics,
        log: LogStore,
        entries: EntryStore,
        runtime: Runtime,
        max_message_size_bytes: int,
        max_attempts: int = 16,
    ) -> None:
        self._topics = topics
        self._log = log
        self._entries = entries
        self._rt = runtime
        self._max_size = max_message_size_bytes
        self._max_attempts = max_attempts
        self._heads: dict[str, int] = {}
        self._lock = threading.Lock()

    def publish(self, topic: TopicName, entry: bytes) -> PublishResult:
        """Commit one entry to ``topic`` (auto-created when missing).

        Raises MessageTooBig, ChecksumError, InvalidMessage, NotAllowedError, TopicNotFound,
        ServiceUnitNotReady (the commit kept losing races).
        """
        if len(entry) > self._max_size:
            raise MessageTooBig(
                f"Entry of {len(entry)} bytes exceeds the maximum message size of {self._max_size} bytes"
            )
        meta = _validated_metadata(entry)
        ref = self._topics.resolve(topic, create=True)
        object_key = f"entries/{topic.domain}/{topic.tenant}/{topic.namespace}/{topic.local}/{self._rt.new_id()}"
        self._entries.put(object_key, entry)
        index = _index_entry(meta, object_key, len(entry))
        for _ in range(3):
            try:
                entry_id = self._commit(ref, index)
                break
            except _LedgerFenced:
                self._topics.invalidate(topic.base)
                self._topics.invalidate(topic)
                ref = self._topics.resolve(topic, create=True)
        else:
            raise ServiceUnitNotReady(f"Topic {topic} is being deleted and re-created; retry")
        batch = range(meta.header.count) if meta.header.batched else (-1,)
        ids = tuple(format_message_id(ref.ledger_id, entry_id, ref.partition, b) for b in batch)
        return PublishResult(topic, ref.ledger_id, entry_id, ref.partition, ids)

    def _commit(self, ref: PartitionRef, index: IndexEntry) -> int:
        key = ref.key
        with self._lock:
            next_id = self._heads.get(key)
        if next_id is None:
            next_id = self._next_id(key)
        for attempt in range(self._max_attempts):
            try:
                self._log.append(key, _at(index, next_id))
            except ConditionFailed:
                self._rt.sleep_ms(self._rt.backoff.delay_ms(attempt))
                next_id = self._next_id(key)
                continue
            with self._lock:
                self._heads[key] = next_id + 1
            return next_id
        raise ServiceUnitNotReady(
            f"Could not commit to {ref.topic} after {self._max_attempts} attempts (contention); retry"
        )

    def _next_id(self, key: str) -> int:
        last = self._log.last(key)
        if last is not None and last.fence:
            with self._lock:
                self._heads.pop(key, None)
            raise _LedgerFenced(key)
        return last.entry_id + 1 if last else 0


def _validated_metadata(entry: bytes) -> EntryMetadata:
    try:
        return read_metadata(entry)
    except ChecksumMismatch as exc:
        raise ChecksumError(f"Entry checksum mismatch: {exc}") from exc
    except EntryFormatError as exc:
        raise InvalidMessage(f"Not a valid entry: {exc}") from exc


def _index_entry(meta: EntryMetadata, object_key: str, size: int) -> IndexEntry:
    times = [m.publish_time_ms for m in meta.messages]
    seqs = [m.sequence_id for m in meta.messages]
    return IndexEntry(
        entry_id=-1,
        object_key=object_key,
        offset=0,
        length=size,
        count=meta.header.count,
        batched=meta.header.batched,
        publish_min_ms=min(times),
        publish_max_ms=max(times),
        producer=meta.producer_name,
        sequence_min=min(seqs),
        sequence_max=max(seqs),
    )


def _at(index: IndexEntry, entry_id: int) -> IndexEntry:
    return IndexEntry(**{**index.__dict__, "entry_id": entry_id})
