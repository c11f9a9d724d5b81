"""The producer's engine: pending queue, batch containers and one daemon sender thread.

Messages are grouped into *entries* (a batch, a single non-batched message, or a chunked
message's chunks) and committed in order by the sender thread, which also runs the
callbacks, so they run in send order. While a request is in flight the queue fills; the
next request carries every entry ready by then (``magnetar._producer.pipeline``: pipelining by
multi-entry requests, one request in flight). Each message must be stored within the
send timeout (counted from ``send``/``send_async``), else it completes with ``Timeout``.
After ``ProducerFenced`` the producer is fenced: queued and later sends fail with it.
"""

from __future__ import annotations

import collections
import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from magnetar import exceptions as exc
from magnetar._enums import Result
from magnetar.message_id import MessageId
from magnetar_wire import Codec, EntryMessage

from .batches import Batch, BatchContainer, BatchLimits, Pending
from .pipeline import Outcome, Unit, commit_units, plan_units, take_ready
from .publish import build_entries
from .registration import Heartbeat, Lease, Registration, SwitchFollower, release_all

if TYPE_CHECKING:
    from magnetar._transport.http import Transport
    from magnetar_wire.entry import Encrypt

__all__ = ["Completion", "SenderConfig", "SenderCore"]

# callback(result, message_id or None, exception or None)
Completion = Callable[[Result, "MessageId | None", "exc.PulsarException | None"], None]


@dataclass
class SenderConfig:
    """What the sender needs from ``create_producer``."""

    registration: Registration
    codec: Codec
    send_timeout: float | None
    max_pending: int
    block_if_full: bool
    batching: bool
    limits: BatchLimits
    key_based: bool
    chunking: bool
    exclusive: bool
    next_sequence_id: int
    last_sequence_id: int
    encrypt: Encrypt | None = None
    """End-to-end encryption of each entry (``encryption_key(s)``), else None."""
    reregister: Callable[[list[str], str], Registration] | None = None
    """Register again as the producer of these bases under this name (on the deployment the
    client switched to); None: never."""


class SenderCore:
    """Holds every piece of producer state the sender thread touches (never the public
    ``Producer``, so dropping that object can stop the thread)."""

    def __init__(self, transport: Transport, config: SenderConfig, log: logging.Logger) -> None:
        self._t = transport
        self.cfg = config
        self.log = log
        self.reg = config.registration
        self.producer_name = self.reg.name
        self.last_sequence_id = config.last_sequence_id
        self._next_seq = config.next_sequence_id
        self._cond = threading.Condition()
        self._containers = [BatchContainer(i, config.limits, config.key_based)
                            for i in range(len(self.reg.leases))]  # fmt: skip
        self._outbox: collections.deque[Batch] = collections.deque()
        self._pending = 0
        self._rr_partition = random.randrange(len(self.reg.leases))  # Pulsar starts at random
        self._enqueued = 0
        self._completed = 0
        self._closing = False
        self.closed = False
        self._aborted = False  # abort(): stop retrying a commit
        self.fenced: exc.ProducerFenced | None = None
        self.follow_switch = SwitchFollower(transport, self.reg, config.reregister, log)
        """Registers again on the deployment the client switched to, if it did, before the
        next commit or heartbeat."""
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"magnetar-producer-{self.producer_name}")  # fmt: skip
        self._thread.start()
        self._heartbeat = (Heartbeat(transport, self.producer_name, self.reg.leases,
                                     self.reg.lease_ms, self._fence, log,
                                     before_beat=self.follow_switch)
                           if config.exclusive else None)  # fmt: skip

    # ------------------------------------------------------------------ called by Producer

    def enqueue(
        self, fields: dict[str, Any], partition: int, batchable: bool, done: Completion
    ) -> int:
        """Queue one message (``fields`` of ``EntryMessage`` except the sequence id, which is
        assigned here unless given). Returns the enqueue number, for ``wait_for``.

        Raises:
            AlreadyClosed: the producer is closed.
            ProducerFenced: another producer took the topic over.
            MessageTooBig: a batchable message above the maximum message size.
            ProducerQueueIsFull: ``max_pending_messages`` reached and not blocking.
        """
        size = len(fields.get("payload", b""))
        batch = self.cfg.batching and batchable
        if batch and size > self.cfg.limits.max_message_size:
            raise exc.MessageTooBig(
                f"a {size}-byte message is above the maximum message size of "
                f"{self.cfg.limits.max_message_size} bytes"
            )
        with self._cond:
            self._check_open()
            while 0 < self.cfg.max_pending <= self._pending:
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
            timeout = self.cfg.send_timeout
            item = Pending(fields, size, done, time.monotonic() + timeout if timeout else None)
            self._pending += 1
            self._enqueued += 1
            index = max(partition, 0)
            container = self._containers[index]
            if not batch:
                self._drain(container)  # what was sent before goes before
                self._outbox.append(Batch(partition, False, [item]))
            else:
                if not container.has_space(item):
                    self._drain(container)
                container.add(item)
                if container.is_full():
                    self._drain(container)
            self._cond.notify_all()
            return self._enqueued

    def _drain(self, container: BatchContainer) -> None:
        if container.count:
            self._outbox.extend(container.drain())
            if container.partition == self._rr_partition:
                self._rr_partition = (self._rr_partition + 1) % len(self._containers)

    def add_partitions(self, leases: list[Lease]) -> None:
        """Send to more partitions (a grown topic): their leases, in partition order."""
        with self._cond:
            for lease in leases:
                self.reg.leases.append(lease)  # the heartbeat iterates this same list
                self._containers.append(BatchContainer(len(self._containers),
                                                       self.cfg.limits, self.cfg.key_based))  # fmt: skip

    def batch_partition(self, partitions: int) -> int:
        """Round-robin per batch: the partition whose batch is being filled."""
        with self._cond:
            return self._rr_partition % partitions

    def flush_batches(self) -> int:
        """Hand every open batch to the sender; return the number of messages queued so far."""
        with self._cond:
            for c in self._containers:
                self._drain(c)
            self._cond.notify_all()
            return self._enqueued

    def wait_for(self, enqueued: int) -> None:
        """Block until the first ``enqueued`` messages are completed (sent or failed)."""
        with self._cond:
            while self._completed < enqueued and self._thread.is_alive():
                self._cond.wait(0.5)

    def close(self) -> None:
        """Send what is queued, stop the threads, then release the registration."""
        with self._cond:
            if self.closed:
                return
            self._closing = True
            for c in self._containers:
                self._drain(c)
            self._cond.notify_all()
        self._stop_threads()
        release_all(self._t, self.producer_name, self.reg.leases, self.log)

    def abort(self) -> None:
        """Close at once: queued messages fail with ``AlreadyClosed``; joins the threads. The
        registration is not released (an exclusive lease lapses after ``leaseMs``)."""
        with self._cond:
            self._closing = self._aborted = True
            dropped = [i for b in self._outbox for i in b.items]
            for c in self._containers:
                dropped += [i for b in c.drain() for i in b.items]
            self._outbox.clear()
        error = exc.AlreadyClosed("the client was shut down before the message was sent")
        self._complete(dropped, [(error.result(), None, error)] * len(dropped))
        self._stop_threads()

    def _stop_threads(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.stop()
        if threading.current_thread() is not self._thread:
            self._thread.join()
        self.closed = True

    def _check_open(self) -> None:
        if self._closing:
            raise exc.AlreadyClosed("the producer is closed")
        if self.fenced is not None:
            raise exc.ProducerFenced(f"the producer was fenced: {self.fenced}")

    def _fence(self, error: exc.ProducerFenced) -> None:
        with self._cond:
            if self.fenced is None:
                self.fenced = error
                self.log.warning("producer %s was fenced: %s", self.producer_name, error)
            self._cond.notify_all()

    # ------------------------------------------------------------------ sender thread

    def _run(self) -> None:
        while True:
            with self._cond:
                batches = self._next_batches()
                if batches is None:
                    return
            self._send(batches)

    def _next_batches(self) -> list[Batch] | None:
        """Every batch ready to go, oldest first, up to about one request's worth (entries,
        payload bytes); waits for one; None once closing and nothing is left."""
        while True:
            now = time.monotonic()
            for c in self._containers:
                if c.deadline is not None and c.deadline <= now:
                    self._drain(c)
            if self._outbox:
                return take_ready(self._outbox)
            if self._closing and not any(c.count for c in self._containers):
                return None
            deadlines = [c.deadline for c in self._containers if c.deadline is not None]
            self._cond.wait(max(0.0, min(deadlines) - now) if deadlines else None)

    def _send(self, batches: list[Batch]) -> None:
        """Commit ``batches`` (in send order; per partition, coalesced into multi-entry
        requests: ``magnetar._producer.pipeline``), then complete their messages in send order."""
        units = [unit for batch in batches for unit in self._units(batch)]
        for lease in dict.fromkeys(max(u.partition, 0) for u in units):  # -1: unpartitioned
            commit_units(self._t, self.reg.leases[lease],
                         [u for u in units if max(u.partition, 0) == lease],
                         aborted=lambda: self._aborted, fenced=lambda: self.fenced,
                         on_fenced=self._fence, before_attempt=self.follow_switch)  # fmt: skip
        items: list[Pending] = []
        results: list[Outcome] = []
        for unit in units:
            unit.finish()
            items += unit.items
            results += unit.outcomes or []
            if unit.sequence_id is not None:
                with self._cond:
                    self.last_sequence_id = max(self.last_sequence_id, unit.sequence_id)
        self._complete(items, results)

    def _units(self, batch: Batch) -> list[Unit]:
        def build(msgs: list[EntryMessage], batched: bool) -> list[bytes]:
            if self.fenced is not None:
                raise exc.ProducerFenced(f"the producer was fenced: {self.fenced}")
            return build_entries(msgs, producer=self.producer_name, codec=self.cfg.codec,
                                 batched=batched, chunking=self.cfg.chunking,
                                 max_size=self.cfg.limits.max_message_size,
                                 encrypt=self.cfg.encrypt)  # fmt: skip

        return plan_units(batch, build)

    def _complete(self, items: list[Pending], results: list[Outcome]) -> None:
        with self._cond:
            self._pending -= len(items)
            self._completed += len(items)
            self._cond.notify_all()
        for item, (result, msg_id, error) in zip(items, results, strict=True):
            try:
                item.done(result, msg_id, error)
            except Exception:  # a user callback failed: log it, keep sending
                self.log.exception("send callback raised")
