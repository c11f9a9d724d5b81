"""Produce: store the entry object, take an entry id from the ledger's sequencer, commit.

Commit protocol (DESIGN.md §3, docs/architecture/producing.md "The produce commit protocol"): (1) PUT the entry to
a unique S3 key; (2) take the next entry id from the ledger's sequencer (an atomic counter:
writers never race for an id); (3) conditionally put the index item at that id. Step 3 is
the commit point. A small entry (its item within ``index_inline_max_bytes``) skips step 1:
its bytes go in the index item itself (docs/architecture/producing.md, "Inline entries"). That is 2
AWS requests per entry (3 with an S3 object). A crash before step 3 leaves an unreferenced
object for the expiry job and, after step 2, an empty id that readers settle as a hole
(``domain.sequencing``); a writer whose id was settled so (it stalled past the bound) takes
a new id and commits again. A large entry committed by ``entryRef`` also takes the upload's
GET and the conditional PUT that seals it (``services.uploads``).

Access epochs: the sequencer holds the ledger's access epoch and hands it out with every id,
atomically. A producer may commit only with an epoch at least that one (and, while
exclusive, only as a registered producer); an epoch marker opens a new epoch with its id.
Everything a superseded producer commits therefore lies before the marker that fenced it.

Deduplication: with an id taken, the writer waits until every id before it is settled (in
the normal course, the commits in flight land within a request's time), replays the log
tail and checks its sequence id; a duplicate leaves a hole at its id.
"""

from __future__ import annotations

from dataclasses import replace

from magnetar_core.domain import metering
from magnetar_core.domain.errors import (
    InvalidMessage,
    MessageTooBig,
    Overloaded,
)
from magnetar_core.domain.log import IndexEntry, fits_inline
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.sequencing import HOLE_AFTER_MS
from magnetar_core.ports import CommitSignal, EntryStore, LogStore
from magnetar_core.services.commit import Committer, Duplicate, LedgerFenced, Once, Reservation
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

__all__ = ["Once", "Producer"]


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
        hole_after_ms: int = HOLE_AFTER_MS,
    ) -> None:
        """``max_attempts`` and ``hole_after_ms``: as ``services.commit.Committer``'s."""
        self._committer = Committer(log, runtime, dedup, max_attempts, hole_after_ms)
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
        reservation: Reservation | None = None,
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
        ``reservation``: the entry ids of a multi-entry request (``release`` it after).
        Raises MessageTooBig, ChecksumError, InvalidMessage, NotAllowedError, TopicNotFound,
        ProducerFenced, TopicTerminated, Throttled and ProducerBlockedQuotaExceeded* (rates
        and backlog quotas: ``services.throttling``; nothing stored), ServiceUnitNotReady
        (503 with Retry-After: the commit could not land; nothing stored).
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
                entry_id = self._committer.commit(ref, index, epoch, dedup, once, reservation)
                break
            except Duplicate:
                return self._duplicate(ref, topic)
            except LedgerFenced:
                self._topics.invalidate(topic.base)
                self._topics.invalidate(topic)
                ref = self._topics.resolve(topic, create=True)
                if self._topics.terminated(ref):  # learnt from the fence: undo the PUT
                    if object_key:
                        self._entries.delete(object_key)
                    self._topics.check_open(ref)
        else:
            raise Overloaded(f"Topic {topic} is being deleted and re-created; retry", 1000)
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

    def routes(self, topic: TopicName) -> bool:
        """Whether entries for ``topic`` may go to several partitions (a partitioned topic's
        base name, or a name not cached yet: unknown)."""
        if topic.partition_index >= 0 or not topic.persistent:
            return False
        meta = self._topics.cached_meta(topic)
        return meta is None or meta.partitions > 0

    def release(self, reservation: Reservation) -> None:
        """Settle the ids a multi-entry request reserved and did not use (holes)."""
        self._committer.release(reservation)

    def append_marker(self, ref: PartitionRef, epoch: int, exclusive: bool, producer: str) -> int:
        """Open an access epoch: commit a marker that fences every older epoch.

        Raises ProducerFenced when an even newer epoch is already in the log.
        """
        marker = IndexEntry.epoch_marker(-1, epoch, exclusive, producer)
        return self._committer.commit(ref, marker, epoch, dedup=False)

    @staticmethod
    def _duplicate(ref: PartitionRef, topic: TopicName) -> PublishResult:
        ids = (format_message_id(-1, -1, ref.partition, -1),)
        return PublishResult(topic, -1, -1, ref.partition, ids, duplicate=True)


def _inline(entry: bytes | None) -> bytes:
    """The entry's bytes; raises InvalidMessage when a publish brought neither the bytes nor
    an entryRef."""
    if entry is None:
        raise InvalidMessage("A publish needs the entry's bytes or an entryRef")
    return entry
