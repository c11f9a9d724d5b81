"""Non-persistent topics (``non-persistent://``), Pulsar's semantics on DynamoDB.

A message goes only to the subscriptions that have a live consumer when it is published,
into each one's buffer (DynamoDB items with a TTL, never S3); a consumer takes buffered
entries with a conditional delete, so each reaches exactly one consumer of a subscription.
Nobody listening, or a consumer too slow for the TTL: the message is lost, by design. Acks
change nothing. Cost: one PutItem per live subscription per entry, one DeleteItem per entry
received, a Query per receive.
"""

from __future__ import annotations

import itertools
import threading

from magnetar_core.domain.buffers import buffer_key
from magnetar_core.domain.errors import MessageTooBig
from magnetar_core.domain.runtime import Runtime
from magnetar_core.ports import BufferStore, CursorStore
from magnetar_core.services.entries import DeliveredEntry, PublishResult, validated_metadata
from magnetar_core.services.topics import PartitionRef, Topics
from magnetar_wire.ids import format_message_id
from magnetar_wire.names import TopicName

MAX_ENTRY_BYTES = 350 * 1024  # a DynamoDB item holds 400 KB
BUFFER_TTL_S = 300


class NonPersistent:
    """Publish to and receive from non-persistent topics."""

    def __init__(
        self,
        topics: Topics,
        cursors: CursorStore,
        buffers: BufferStore,
        runtime: Runtime,
        consumer_lease_ms: int,
        check_interval_ms: int,
    ) -> None:
        self._topics = topics
        self._cursors = cursors
        self._buffers = buffers
        self._rt = runtime
        self._lease_ms = consumer_lease_ms
        self._check_ms = check_interval_ms
        self._counter = itertools.count()
        self._lock = threading.Lock()

    def _next_id(self, now_ms: int) -> tuple[str, int]:
        with self._lock:
            n = next(self._counter) % 1_000_000
        return f"{now_ms:015d}-{self._rt.new_id()[:8]}-{n:06d}", now_ms * 1_000_000 + n

    def publish(self, topic: TopicName, entry: bytes) -> PublishResult:
        """Hand an entry to every subscription with a live consumer (none: dropped).

        Raises MessageTooBig (above 350 KB), ChecksumError, InvalidMessage.
        """
        if len(entry) > MAX_ENTRY_BYTES:
            raise MessageTooBig(
                f"Non-persistent entries are limited to {MAX_ENTRY_BYTES} bytes, not {len(entry)}"
            )
        meta = validated_metadata(entry)
        ref = self._topics.resolve(topic, create=True, allow_non_persistent=True)
        now = self._rt.now_ms()
        key, entry_id = self._next_id(now)
        for state in self._cursors.list(ref.key):
            if any(now - c.seen_ms <= self._lease_ms for c in state.consumers.values()):
                self._buffers.append(buffer_key(str(ref.topic), state.subscription), key, entry_id,
                                     entry, now // 1000 + BUFFER_TTL_S)  # fmt: skip
        batch = range(meta.header.count) if meta.header.batched else (-1,)
        ids = tuple(format_message_id(ref.ledger_id, entry_id, ref.partition, b) for b in batch)
        return PublishResult(topic, ref.ledger_id, entry_id, ref.partition, ids)

    def receive(
        self, ref: PartitionRef, subscription: str, max_entries: int, wait_ms: int
    ) -> list[DeliveredEntry]:
        """Take up to ``max_entries`` buffered entries, long-polling up to ``wait_ms``."""
        pk = buffer_key(str(ref.topic), subscription)
        deadline = self._rt.monotonic_ms() + wait_ms
        while True:
            taken = []
            for key in self._buffers.peek(pk, max_entries, self._rt.now_ms() // 1000):
                entry = self._buffers.take(pk, key)
                if entry is not None:
                    taken.append(DeliveredEntry(ref.topic, ref.ledger_id, entry.entry_id,
                                                ref.partition, 0, None, entry.data))  # fmt: skip
            left = deadline - self._rt.monotonic_ms()
            if taken or left <= 0:
                return taken
            self._rt.sleep_ms(min(self._check_ms, left))
