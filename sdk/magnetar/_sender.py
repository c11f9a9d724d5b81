"""The producer's engine: pending queue, batch containers and one daemon sender thread.

Messages are grouped into *entries* (a batch, or a single non-batched message) and POSTed
one entry per request, in order, by the sender thread. Callbacks run on that thread.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from magnetar_wire import Codec, EntryFormatError, EntryMessage, encode_entry

from . import exceptions as exc
from ._enums import Result
from .message import MessageId

__all__ = ["Completion", "SenderCore"]

ENTRY_CONTENT_TYPE = "application/vnd.magnetar.entry"

# callback(result, message_id or None, exception or None)
Completion = Callable[[Result, "MessageId | None", "exc.PulsarException | None"], None]


@dataclass
class _Pending:
    fields: dict[str, Any]
    size: int
    done: Completion
    message: EntryMessage | None = None


@dataclass
class _Batch:
    partition: int
    batched: bool
    deadline: float = 0.0
    items: list[_Pending] = field(default_factory=list)
    size: int = 0


@dataclass
class SenderConfig:
    """What the sender needs from ``create_producer``."""

    paths: list[str]  # produce path per partition index (one entry for a plain topic)
    producer_name: str
    name_given: bool
    codec: Codec
    send_timeout: float | None
    max_pending: int
    block_if_full: bool
    batching: bool
    batch_max_messages: int
    batch_max_bytes: int
    batch_delay: float
    key_based: bool
    next_sequence_id: int
    last_sequence_id: int


class SenderCore:
    """Holds every piece of producer state the sender thread touches (never the public
    ``Producer``, so dropping that object can stop the thread)."""

    def __init__(self, transport: Any, config: SenderConfig, log: logging.Logger) -> None:
        self._t = transport
        self.cfg = config
        self.log = log
        self.producer_name = config.producer_name
        self.last_sequence_id = config.last_sequence_id
        self._next_seq = config.next_sequence_id
        self._cond = threading.Condition()
        self._batches: dict[Any, _Batch] = {}
        self._outbox: collections.deque[_Batch] = collections.deque()
        self._pending = 0
        self._rr_partition = 0
        self._enqueued = 0
        self._completed = 0
        self._closing = False
        self.closed = False
        self._thread = threading.Thread(
            target=self._run, name=f"magnetar-producer-{config.producer_name}", daemon=True
        )
        self._thread.start()

    # ------------------------------------------------------------------ called by Producer

    def enqueue(
        self, fields: dict[str, Any], partition: int, batchable: bool, done: Completion
    ) -> int:
        """Queue one message (``fields`` of ``EntryMessage`` except the sequence id, which is
        assigned here unless given). Returns the enqueue number, for ``wait_for``.

        Raises:
            AlreadyClosed: the producer is closed.
            ProducerQueueIsFull: ``max_pending_messages`` reached and not blocking.
        """
        size = len(fields.get("payload", b""))
        with self._cond:
            self._check_open()
            while self.cfg.max_pending > 0 and self._pending >= self.cfg.max_pending:
                if not self.cfg.block_if_full:
                    raise exc.ProducerQueueIsFull(
                        f"the producer has {self._pending} pending messages "
                        f"(max_pending_messages={self.cfg.max_pending})"
                    )
                self._cond.wait()
                self._check_open()
            if fields.get("sequence_id") is None:
                fields["sequence_id"] = self._next_seq
                self._next_seq += 1
            item = _Pending(fields, size, done)
            self._pending += 1
            self._enqueued += 1
            if not (self.cfg.batching and batchable):
                self._outbox.append(_Batch(partition, False, items=[item], size=size))
            else:
                self._add_to_batch(item, partition)
            self._cond.notify_all()
            return self._enqueued

    def _add_to_batch(self, item: _Pending, partition: int) -> None:
        key = (partition, item.fields.get("key") if self.cfg.key_based else None)
        batch = self._batches.get(key)
        if batch is not None and (
            len(batch.items) >= self.cfg.batch_max_messages
            or batch.size + item.size > self.cfg.batch_max_bytes
        ):
            self._close_batch(key)
            batch = None
        if batch is None:
            batch = _Batch(partition, True, deadline=time.monotonic() + self.cfg.batch_delay)
            self._batches[key] = batch
        batch.items.append(item)
        batch.size += item.size
        if (
            len(batch.items) >= self.cfg.batch_max_messages
            or batch.size >= self.cfg.batch_max_bytes
        ):
            self._close_batch(key)

    def _close_batch(self, key: Any) -> None:
        batch = self._batches.pop(key, None)
        if batch is not None and batch.items:
            self._outbox.append(batch)
            if batch.partition == self._rr_partition:
                self._rr_partition = (self._rr_partition + 1) % max(len(self.cfg.paths), 1)

    def batch_partition(self, partitions: int) -> int:
        """Round-robin per batch: the partition whose batch is being filled."""
        with self._cond:
            return self._rr_partition % partitions

    def flush_batches(self) -> int:
        """Hand every open batch to the sender; return the number of messages queued so far."""
        with self._cond:
            for key in list(self._batches):
                self._close_batch(key)
            self._cond.notify_all()
            return self._enqueued

    def wait_for(self, enqueued: int) -> None:
        """Block until the first ``enqueued`` messages are completed (sent or failed)."""
        with self._cond:
            while self._completed < enqueued and self._thread.is_alive():
                self._cond.wait(0.5)

    def close(self) -> None:
        """Send what is queued, then stop and join the sender thread."""
        with self._cond:
            self._closing = True
            for key in list(self._batches):
                self._close_batch(key)
            self._cond.notify_all()
        if threading.current_thread() is not self._thread:
            self._thread.join()
        self.closed = True

    def _check_open(self) -> None:
        if self._closing:
            raise exc.AlreadyClosed("the producer is closed")

    # ------------------------------------------------------------------ sender thread

    def _run(self) -> None:
        while True:
            with self._cond:
                batch = self._next_batch()
                if batch is None:
                    return
            self._send(batch)

    def _next_batch(self) -> _Batch | None:
        while True:
            now = time.monotonic()
            for key, b in list(self._batches.items()):
                if b.deadline <= now:
                    self._close_batch(key)
            if self._outbox:
                return self._outbox.popleft()
            if self._closing and not self._batches:
                return None
            deadlines = [b.deadline for b in self._batches.values()]
            self._cond.wait(max(0.0, min(deadlines) - now) if deadlines else None)

    def _send(self, batch: _Batch) -> None:
        results: list[tuple[Result, MessageId | None, exc.PulsarException | None]]
        try:
            msgs = [EntryMessage(**p.fields) for p in batch.items]
            body = encode_entry(
                msgs, producer_name=self.producer_name, codec=self.cfg.codec, batched=batch.batched
            )
            resp = self._t.call(
                "POST",
                self.cfg.paths[max(batch.partition, 0)],
                data=body,
                content_type=ENTRY_CONTENT_TYPE,
                timeout=self.cfg.send_timeout,
            )
            ids = self._ids(resp, batch)
            results = [(Result.Ok, i, None) for i in ids]
            seq = max(m.sequence_id for m in msgs)
        except (exc.PulsarException, EntryFormatError) as e:
            if not isinstance(e, exc.PulsarException):
                e = exc.InvalidMessage(f"the message cannot be encoded: {e}")
            results = [(e.result(), None, e)] * len(batch.items)
            seq = None
        with self._cond:
            if seq is not None:
                self.last_sequence_id = max(self.last_sequence_id, seq)
            self._pending -= len(batch.items)
            self._completed += len(batch.items)
            self._cond.notify_all()
        for item, (result, msg_id, error) in zip(batch.items, results, strict=True):
            try:
                item.done(result, msg_id, error)
            except Exception:  # a user callback failed: log it, keep sending
                self.log.exception("send callback raised")

    def _ids(self, resp: Any, batch: _Batch) -> list[MessageId]:
        if not isinstance(resp, dict):
            raise exc.UnknownError(f"unexpected produce response: {resp!r}")
        name = resp.get("producerName")
        if isinstance(name, str) and name and not self.cfg.name_given:
            self.producer_name = name
        topic = resp.get("topic")
        texts = resp.get("messageIds")
        if isinstance(texts, list) and len(texts) == len(batch.items):
            return [MessageId.from_text(t, topic) for t in texts]
        ledger, entry = resp.get("ledgerId"), resp.get("entryId")
        partition = resp.get("partition", -1)
        if not (isinstance(ledger, int) and isinstance(entry, int)):
            raise exc.UnknownError(f"unexpected produce response: {resp!r}")
        ids = []
        for i in range(len(batch.items)):
            mid = MessageId(partition, ledger, entry, i if batch.batched else -1)
            mid._topic = topic
            ids.append(mid)
        return ids

    def abort(self) -> None:
        """Close at once: queued messages fail with ``AlreadyClosed``; joins the thread."""
        with self._cond:
            self._closing = True
            dropped = [i for b in self._outbox for i in b.items]
            dropped += [i for b in self._batches.values() for i in b.items]
            self._outbox.clear()
            self._batches.clear()
            self._pending -= len(dropped)
            self._completed += len(dropped)
            self._cond.notify_all()
        error = exc.AlreadyClosed("the client was shut down before the message was sent")
        for item in dropped:
            try:
                item.done(error.result(), None, error)
            except Exception:
                self.log.exception("send callback raised")
        if threading.current_thread() is not self._thread:
            self._thread.join()
        self.closed = True
