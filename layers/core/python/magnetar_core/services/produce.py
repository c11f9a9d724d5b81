"""Produce: store the entry object, then commit it at the next dense entry id.

Commit protocol (DESIGN.md §3): (1) PUT the entry to a unique S3 key; (2) conditionally put
the index item at the next entry id. Step 2 is the commit point. A small entry (its item
within ``index_inline_max_bytes``) skips step 1: its bytes go in the index item itself
(docs/architecture.md, "Inline entries"), one AWS request per entry. A lost race re-reads the
head and retries with jitter; a crash before step 2 leaves an unreferenced object for the
expiry job. In the steady state of one producer per partition this is 2 AWS requests per
entry: the head (next id, access epoch) is cached per process and re-read only after a lost
race. A large entry committed by ``entryRef`` takes 3: the upload's GET (validation), the
conditional PUT that seals it under a key of its own (``services.uploads``), the index item.

Access epochs: every index item carries the partition's access epoch and whether an
exclusive producer holds it. A producer may commit only with an epoch at least the head's
(and, while exclusive, only as a registered producer). Because a commit lands only at
exactly head + 1, a producer whose epoch was superseded always meets the newer head and is
fenced: no extra request is needed to enforce exclusivity.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace

from magnetar_core.domain import metering
from magnetar_core.domain.errors import (
    InvalidMessage,
    MessageTooBig,
    ProducerFenced,
    ServiceUnitNotReady,
)
from magnetar_core.domain.log import IndexEntry, fits_inline
from magnetar_core.domain.runtime import Runtime
from magnetar_core.ports import CommitSignal, EntryStore, LogStore
from magnetar_core.services import deadline, optimistic
from magnetar_core.services.dedup import Deduplicator
from magnetar_core.services.entries import (
    PublishResult,
    check_delivery_delay,
    index_entry,
    validated_metadata,
)
from magnetar_core.services.namespaces import Namespaces
from magnetar_core.services.nonpersistent import NonPersistent
from magnetar_core.services.throttling import Throttling
from magnetar_core.services.topics import PartitionRef, Topics
from magnetar_core.services.uploads import Upload, Uploads, object_prefix
from magnetar_wire.ids import format_message_id
from magnetar_wire.names import TopicName
from magnetar_wire.routing import JAVA_STRING_HASH


@dataclass(frozen=True)
class Head:
    """What a committer knows of a log's head: the next id and the access rules there."""

    next_id: int
    epoch: int = 0
    exclusive: bool = False


@dataclass(frozen=True)
class Once:
    """Commit an entry at most once per ``key`` in its ledger (inbound source events): a
    marker committed with the index item, kept at least until ``expires_s`` (epoch s)."""

    key: str
    expires_s: int


class _LedgerFenced(Exception):
    """The ledger was closed (its topic deleted): reload the topic and commit again."""


class _Duplicate(Exception):
    """A replay of the log (or the entry's once marker) showed it was committed already."""


class Producer:
    """Commits entries to topics (the server side of a producer)."""

    def __init__(
        self,
        topics: Topics,
        log: LogStore,
        entries: EntryStore,
        runtime: Runtime,
        namespaces: Namespaces,
        dedup: Deduplicator,
        non_persistent: NonPersistent,
        max_attempts: int = 16,
        throttling: Throttling | None = None,
        index_inline_max_bytes: int = 0,
        signal: CommitSignal | None = None,
    ) -> None:
        self._index_inline_max = index_inline_max_bytes  # 0: every entry gets an S3 object
        self._signal = signal  # wakes long-polls on each commit (None: they poll)
        self._throttling = throttling  # publish rate and backlog quotas (None: none)
        self._non_persistent = non_persistent
        self._topics = topics
        self._log = log
        self._entries = entries
        self._uploads = Uploads(entries, runtime)
        self._rt = runtime
        self._namespaces = namespaces
        self._dedup = dedup
        self._max_attempts = max_attempts
        self._heads: dict[str, Head] = {}
        self._lock = threading.Lock()

    def new_object_key(self, topic: TopicName) -> str:
        return object_prefix(topic) + self._rt.new_id()

    def new_upload(self, topic: TopicName, expires_s: int) -> Upload:
        """Where a client uploads a large entry of ``topic`` for a commit by ``entryRef``."""
        return self._uploads.start(topic, expires_s)

    def publish(
        self,
        topic: TopicName,
        entry: bytes | None = None,
        *,
        entry_ref: str | None = None,
        epoch: int | None = None,
        hashing_scheme: str = JAVA_STRING_HASH,
        deduplicate: bool = False,
        once: Once | None = None,
    ) -> PublishResult:
        """Commit one entry to ``topic`` (auto-created when missing).

        ``entry`` holds the bytes, or ``entry_ref`` names an upload of this topic
        (``new_upload``), committed once as an object of its own (``services.uploads``).
        ``epoch`` is the registered producer's access epoch (None: unregistered). On
        a partitioned topic's base name, a keyed entry goes to the partition its first key
        hashes to with ``hashing_scheme`` (as the SDK routes), a keyless one round robin.
        ``deduplicate`` forces the dedup check on whatever the policies say (the dead
        letter producer relies on it for exactly-once); ``once`` replaces it by a marker
        committed atomically with the entry (``LogStore.append_once``; only the ingest).
        Raises MessageTooBig, ChecksumError, InvalidMessage, NotAllowedError, TopicNotFound,
        ProducerFenced, TopicTerminated, Throttled and ProducerBlockedQuotaExceeded* (rates
        and backlog quotas: ``services.throttling``; nothing stored), ServiceUnitNotReady
        (the commit kept losing races).
        """
        if not topic.persistent:
            if entry_ref is not None:
                raise InvalidMessage("Non-persistent topics take entries inline, not by entryRef")
            result = self._non_persistent.publish(topic, data := _inline(entry))
            metering.count_in(len(result.message_ids), len(data))
            return result
        policies = self._namespaces.effective(topic)
        dedup = (policies.deduplication or deduplicate) and once is None
        uploaded_to = topic
        if entry_ref is not None:
            entry = self._uploads.read(topic, entry_ref, policies.max_message_size_bytes)
        entry = _inline(entry)
        if len(entry) > policies.max_message_size_bytes:
            raise MessageTooBig(
                f"Entry of {len(entry)} bytes exceeds the maximum message size of "
                f"{policies.max_message_size_bytes} bytes; enable chunking or send less"
            )
        meta = validated_metadata(entry)
        topic = self._topics.route(topic, meta.messages[0].key, hashing_scheme)
        ref = self._topics.resolve(topic, create=True)
        self._topics.check_open(ref)  # TopicTerminated before anything is stored, if known
        index = index_entry(meta, "", len(entry))
        check_delivery_delay(index, self._rt.now_ms(), policies.delayed_delivery_max_delay_ms)
        if dedup and self._dedup.is_duplicate(ref.key, index.producer, index.sequence_max):
            return self._duplicate(ref, topic)
        if self._throttling is not None:  # before anything is stored
            self._throttling.admit_publish(ref, meta.header.count, len(entry))
        object_key = ""
        if entry_ref is None and fits_inline(index, ref.key, len(entry), self._index_inline_max):
            index = replace(index, data=entry)  # inline: the index item holds it, no S3 PUT
        elif entry_ref is None:
            object_key = self.new_object_key(topic)
            self._entries.put(object_key, entry)
        else:  # the bytes validated above, under a key no URL writes; refused the second time
            object_key = self._uploads.seal(uploaded_to, entry_ref, entry)
        index = replace(index, object_key=object_key)
        for _ in range(3):
            try:
                entry_id = self._commit(ref, index, epoch, dedup, once)
                break
            except _Duplicate:
                return self._duplicate(ref, topic)
            except _LedgerFenced:
                self._topics.invalidate(topic.base)
                self._topics.invalidate(topic)
                ref = self._topics.resolve(topic, create=True)
                if self._topics.terminated(ref):  # learnt from the fence: undo the PUT
                    if object_key:
                        self._entries.delete(object_key)
                    self._topics.check_open(ref)
        else:
            raise ServiceUnitNotReady(f"Topic {topic} is being deleted and re-created; retry")
        if self._signal is not None:
            self._signal.notify(ref.key)
        if dedup:
            self._dedup.committed(
                ref.key, entry_id, index.producer, index.sequence_max, not index.partial_chunk
            )
        if self._throttling is not None:
            self._throttling.committed(ref, len(entry))
        batch = range(meta.header.count) if meta.header.batched else (-1,)
        ids = tuple(format_message_id(ref.ledger_id, entry_id, ref.partition, b) for b in batch)
        metering.count_in(len(ids), len(entry))
        return PublishResult(topic, ref.ledger_id, entry_id, ref.partition, ids)

    def forget(self, keys: list[str]) -> None:
        """Drop the cached heads of logs ``keys`` (unload): the next commit reads them."""
        with self._lock:
            for key in keys:
                self._heads.pop(key, None)

    def append_marker(self, ref: PartitionRef, epoch: int, exclusive: bool, producer: str) -> int:
        """Open an access epoch: commit a marker that fences every older epoch.

        Raises ProducerFenced when an even newer epoch is already in the log.
        """
        marker = IndexEntry.epoch_marker(-1, epoch, exclusive, producer)
        return self._commit(ref, marker, epoch, dedup=False)

    @staticmethod
    def _duplicate(ref: PartitionRef, topic: TopicName) -> PublishResult:
        ids = (format_message_id(-1, -1, ref.partition, -1),)
        return PublishResult(topic, -1, -1, ref.partition, ids, duplicate=True)

    def _commit(
        self,
        ref: PartitionRef,
        index: IndexEntry,
        epoch: int | None,
        dedup: bool,
        once: Once | None = None,
    ) -> int:
        """Commit ``index`` at the head's next id: one optimistic update of the head (cached
        per process; re-read after every lost race). Raises ProducerFenced, _Duplicate,
        _LedgerFenced, ServiceUnitNotReady (every attempt lost)."""
        key = ref.key
        with self._lock:
            cached = self._heads.get(key)
        marker = index.count == 0
        heads = [cached] if cached is not None else []  # the cached head once, then reads

        def read() -> Head:
            return heads.pop() if heads else self._read_head(key)

        def change(head: Head) -> tuple[int, IndexEntry]:
            if dedup:
                self._check_duplicate(key, head, index)
            _check_access(head, epoch, marker, ref)
            item = replace(
                index,
                entry_id=head.next_id,
                epoch=index.epoch if marker else head.epoch,
                exclusive=index.exclusive if marker else head.exclusive,
            )
            return head.next_id, item

        def write(item: IndexEntry) -> None:
            deadline.check_before_commit(str(ref.topic))  # the commit point comes next
            if once is None:
                self._log.append(key, item)
            elif not self._log.append_once(key, item, once.key, once.expires_s):
                raise _Duplicate()
            with self._lock:
                self._heads[key] = Head(item.entry_id + 1, item.epoch, item.exclusive)

        outcome = optimistic.update(read, change, write, self._rt, self._max_attempts)
        if isinstance(outcome, optimistic.Conflict):
            self._read_head(key)  # as after every lost race (a fenced ledger says so)
            raise ServiceUnitNotReady(
                f"Could not commit to {ref.topic} after {self._max_attempts} attempts "
                "(contention); retry"
            )
        return outcome

    def _check_duplicate(self, key: str, head: Head, index: IndexEntry) -> None:
        """Raise _Duplicate if the log before ``head`` holds this producer's sequence id.

        The dedup state is caught up first when it knows less than the log up to the head,
        so a commit at exactly ``head.next_id`` can never slip a duplicate in.
        """
        if self._dedup.known_upto(key) < head.next_id - 1:
            self._dedup.catch_up(key)
        if self._dedup.is_duplicate(key, index.producer, index.sequence_max):
            raise _Duplicate()

    def _read_head(self, key: str) -> Head:
        last = self._log.last(key)
        if last is not None and last.fence:
            with self._lock:
                self._heads.pop(key, None)
            raise _LedgerFenced(key)
        if last is None:
            return Head(0)
        return Head(last.entry_id + 1, last.epoch, last.exclusive)


def _check_access(head: Head, epoch: int | None, marker: bool, ref: PartitionRef) -> None:
    if marker:
        if epoch is not None and epoch < head.epoch:
            raise ProducerFenced(f"A newer producer (epoch {head.epoch}) took over {ref.topic}")
        return
    if epoch is None:
        if head.exclusive:
            raise ProducerFenced(
                f"An exclusive producer holds {ref.topic}; register as a producer to send after it leaves"
            )
        return
    if epoch < head.epoch:
        raise ProducerFenced(
            f"Producer fenced on {ref.topic}: epoch {epoch} was superseded by epoch {head.epoch}"
        )


def _inline(entry: bytes | None) -> bytes:
    """The entry's bytes; raises InvalidMessage when a publish brought neither the bytes nor
    an entryRef."""
    if entry is None:
        raise InvalidMessage("A publish needs the entry's bytes or an entryRef")
    return entry
