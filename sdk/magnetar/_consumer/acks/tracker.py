"""``AckTracker``: the pending acks, nacks and unacked deliveries of one consumer, handled as
the package says (``magnetar._consumer.acks``: grouping, nacks, the ack timeout, retries).
Parts: ``Redelivery``, ``AckGroup``, ``BatchHolds`` / ``AckedIds`` (``magnetar._consumer.acks.held``),
``UnackedTimeouts`` (the ack timeout). One daemon thread ("magnetar-acks") drives the
timers; ``stop()`` joins it. Times are seconds of ``clock`` (default: this module's
``monotonic``; tests patch it, or pass a fake clock and call ``run_due`` on a tracker made
with ``start=False``).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from magnetar import exceptions as exc
from magnetar._consumer.parallel import run_parallel
from magnetar._transport.failures import JitteredBackoff
from magnetar.message_id import MessageId, id_texts

from .group import AckGroup
from .held import AckedIds, BatchHolds, Waiting
from .outbox import Outbox, Request
from .redelivery import Redelivery
from .sender import AckSender, Post
from .timeout import UnackedTimeouts

if TYPE_CHECKING:
    from magnetar._consumer.sub import Sub

__all__ = ["ACK_GROUP_MAX", "ACK_GROUP_TIME", "AckTracker", "Post", "Redelivery"]

ACK_GROUP_TIME = 0.1  # seconds: Pulsar's acknowledgementGroupTime (100 ms)
ACK_GROUP_MAX = 1000  # Pulsar's maxAcknowledgmentGroupSize; also the most ids per request
RETRY_BASE_SECONDS = 0.1  # first retry of a failed ack / nack request after 0.05-0.1 s
RETRY_MAX_SECONDS = 5.0  # retries of one sub-consumer's requests are at most this far apart
NACK_HOLD_MIN_SECONDS = 1.0  # the least a batch message's nack may wait for its neighbours

monotonic = time.monotonic  # the default clock


class AckTracker:
    """Pending acks / nacks / unacked deliveries of one consumer (all its sub-consumers)."""

    def __init__(self, post: Post, redelivery: Redelivery, log: logging.Logger,
                 clock: Callable[[], float] | None = None, start: bool = True) -> None:  # fmt: skip
        self._cfg = redelivery
        self._clock = clock or monotonic
        self._timeouts = UnackedTimeouts(redelivery.ack_timeout_ms / 1000,
                                         redelivery.tick_ms / 1000, self._clock())  # fmt: skip
        self._cond = threading.Condition()
        self._group = AckGroup()
        self._outbox = Outbox(JitteredBackoff(RETRY_BASE_SECONDS, RETRY_MAX_SECONDS))
        self._sender = AckSender(post, self._outbox, self._cond, log, self._clock)
        self._holds = BatchHolds()
        self._acked = AckedIds()
        self._stopping = False
        self._closed = False  # the close's flush ran out of time: nothing is retried
        self._thread: threading.Thread | None = None
        if start:
            self._thread = threading.Thread(target=self._run, name="magnetar-acks", daemon=True)
            self._thread.start()

    def received(self, sub: Sub, msg_id: MessageId) -> None:
        """A message reached the consumer's receiver queue (batch messages are held)."""
        with self._cond:
            self._holds.received(sub, msg_id)

    def delivered(self, sub: Sub, msg_id: MessageId, seen: int | None = None) -> None:
        """A message was handed out (redelivery count ``seen``): its ack timeout starts."""
        with self._cond:
            if self._holds.handed(sub, msg_id):
                self._cond.notify_all()
            if self._timeouts.timeout:
                self._timeouts.handed(sub, id_texts(msg_id), msg_id, self._clock(), seen)
                self._cond.notify_all()

    def skip_if_acked(self, sub: Sub, msg_id: MessageId) -> bool:
        """True when this consumer acknowledged ``msg_id`` already: the copy must not be
        handed out (it counts as settled)."""
        with self._cond:
            if (sub, msg_id) not in self._acked:
                return False
            self._release(self._holds.settle(sub, msg_id))
            return True

    def redeliver_now(self, sub: Sub, ids: list[str], seen: int | None = None) -> None:
        """Queue a nack without delay of ``ids`` (an entry the client could not read;
        ``seen``: the redelivery count it came with)."""
        with self._cond:
            self._outbox.add(sub, "nack", self._cfg.now_body(ids, seen))
            self._cond.notify_all()

    def ack(self, sub: Sub, msg_id: MessageId) -> None:
        """Queue an individual ack (of every chunk, for a chunked message's id). Raises
        AlreadyClosed once the close began (``stop``): its flush would not send it."""
        with self._cond:
            self._refuse_if_closing()
            self._acked.add(sub, msg_id)
            for text in id_texts(msg_id):
                self._group.ack(sub, text)
                self._timeouts.settled(sub, text)
                self._queued_one()
            self._release(self._holds.settle(sub, msg_id))

    def ack_cumulative(self, sub: Sub, msg_id: MessageId) -> None:
        """Queue a cumulative ack (only the highest per sub-consumer is sent); raises
        AlreadyClosed like ``ack``."""
        with self._cond:
            self._refuse_if_closing()
            self._acked.add_cumulative(sub, msg_id)
            self._group.ack_cumulative(sub, msg_id)
            self._timeouts.settled_up_to(sub, msg_id)
            self._queued_one()

    def nack(self, sub: Sub, msg_id: MessageId, seen: int | None = None) -> None:
        """Queue a negative ack: sent with the next group, carrying the redelivery delay or
        backoff for the service to apply (a batch message's may wait: see the package) and
        ``seen``, the redelivery count the message was delivered with, when known (not for
        a chunked message: its chunks' entries may have different counts). Raises
        AlreadyClosed like ``ack``."""
        with self._cond:
            self._refuse_if_closing()
            texts = id_texts(msg_id)
            if seen is not None and len(texts) == 1:
                self._group.seen[(sub, texts[0])] = seen
            for text in texts:
                self._timeouts.settled(sub, text)
            now = self._clock()
            if self._holds.hold_nack(sub, msg_id, texts[0], now):
                self._cond.notify_all()  # a new hold time to wake up for
                return
            # with the nacks of its entry that waited: ONE request per entry, or the second
            # would send back the copy the first one brought
            self._release([*self._holds.release(sub, msg_id), *[(sub, t, now) for t in texts]])

    def dropped(self, sub: Sub | None = None) -> None:
        """The receiver queue of ``sub`` (None: all) was dropped because the service sends
        again everything that was in flight to it (a redelivery after a lost receive, a new
        registration, a removed sub-consumer). Its nacks not sent yet are dropped too, held
        back or queued: the messages come back anyway, and a nack sent now could reach the
        copy leased again since, which the service cannot always tell from the nacked one
        (an entry a Key_Shared subscription split between consumers: reliability finding 7)."""
        with self._cond:
            self._holds.drop(sub)
            self._group.drop_nacks(sub)

    def clear_unacked(self) -> None:
        """Forget every delivery and pending nack (``redeliver_unacknowledged_messages`` and
        seek send everything back anyway)."""
        with self._cond:
            self._timeouts.clear()
            self._group.drop_nacks()
            self._holds.drop()

    def clear_acked(self) -> None:
        """Forget which ids were acknowledged (after a seek they may rightly come again)."""
        with self._cond:
            self._acked.clear()

    def wake(self) -> None:
        """Look at the clock again now (for tests that move a fake clock)."""
        with self._cond:
            self._cond.notify_all()

    def _refuse_if_closing(self) -> None:
        """An ack or nack that meets the consumer's close (past its open check when another
        thread closed it) is refused, as on a closed consumer (lock held)."""
        if self._stopping:
            raise exc.AlreadyClosed("the consumer is closed")

    def _release(self, waiting: list[Waiting]) -> None:
        """Queue nacks (some of which waited for their batch) into the open group, in one
        request per sub-consumer carrying what is left of the latest one's delay (lock
        held)."""
        now = self._clock()
        by_sub: dict[Sub, list[Waiting]] = {}
        for item in waiting:
            by_sub.setdefault(item[0], []).append(item)
        for sub, items in by_sub.items():
            left = self._cfg.nack_left_ms(now - max(since for _, _, since in items))
            for _, text, _ in items:
                self._group.nack(sub, text, left)
                self._queued_one()

    def _queued_one(self) -> None:
        """One ack or nack joined the group (lock held): start its time, or send it full."""
        if self._group.deadline is None:
            self._group.deadline = self._clock() + ACK_GROUP_TIME
        if self._group.count >= ACK_GROUP_MAX:
            self._take_group()
        self._cond.notify_all()

    def _take_group(self) -> None:
        """Move the open group to the outbox and start a new group (lock held)."""
        for sub, action, body in self._group.take(self._cfg):
            self._outbox.add(sub, action, body)

    def _expire(self, now: float) -> None:
        """Queue requests sending back the deliveries whose ack timeout passed (lock
        held)."""
        for sub, due in self._timeouts.expired(now).items():
            for body in self._cfg.timeout_bodies(due, ACK_GROUP_MAX):
                self._outbox.add(sub, "nack", body)

    def _next_wake(self, now: float) -> float | None:
        deadline = self._group.deadline
        times = [] if deadline is None else [deadline]
        check = self._timeouts.next_check()
        if check is not None:
            times.append(check)
        held = self._holds.earliest()
        if held is not None:
            times.append(held + self._cfg.nack_hold_seconds(NACK_HOLD_MIN_SECONDS))
        retry = self._outbox.next_at()
        if retry is not None:
            times.append(retry)
        return max(0.0, min(times) - now) if times else None

    def _take_due(self, now: float, force: bool = False) -> list[tuple[Sub, list[Request]]]:
        """Nacks whose hold is up, the open group once its time is up (or ``force``),
        expired deliveries: into the outbox; then the outbox's queues that may go now
        (lock held)."""
        hold = self._cfg.nack_hold_seconds(NACK_HOLD_MIN_SECONDS)
        self._release(self._holds.due(math.inf if force else now - hold))
        deadline = self._group.deadline
        if force or (deadline is not None and deadline <= now):
            self._take_group()
        self._expire(now)
        return self._outbox.take(now, force)

    def flush(self, timeout: float | None = None) -> None:
        """Send every pending ack and nack now (one request per sub-consumer and kind).

        Without ``timeout``: one attempt; what fails retryably stays queued for the
        housekeeping thread. With ``timeout`` (seconds, on close): the sub-consumers' requests
        go out in parallel and are retried with backoff until sent or the time is up; what
        is left then is logged as lost.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        force = True
        while True:
            with self._cond:
                if deadline is not None and time.monotonic() >= deadline:
                    self._closed = True  # what an in-flight request leaves is lost too
                    self._sender.lose(self._outbox.drain())
                    return
                batches = self._take_due(self._clock(), force=force)
                force = False
                if not batches:
                    if deadline is None or not self._outbox.pending():
                        return
                    left = deadline - time.monotonic()
                    wake = self._outbox.next_at()
                    if wake is not None:
                        left = min(left, max(wake - self._clock(), 0.0))
                    self._cond.wait(max(left, 0.0))
                    continue
            if deadline is None:
                self._sender.send(batches)
            else:
                run_parallel([partial(self._sender.send, [b], deadline) for b in batches], "flush")

    def run_due(self) -> int:
        """Send what is due by the clock now (the housekeeping thread does this; tests with
        a fake clock call it on a tracker made with ``start=False``). Returns the number of
        requests tried."""
        with self._cond:
            batches = self._take_due(self._clock())
        return self._sender.send(batches)

    def _run(self) -> None:
        while True:
            with self._cond:
                if self._stopping:
                    return
                batches = self._take_due(self._clock())
                if not batches:
                    self._cond.wait(self._next_wake(self._clock()))
                    continue
            self._sender.send(batches)
            with self._cond:  # it failed after the close gave up waiting for it
                if self._closed:
                    self._sender.lose(self._outbox.drain())

    def stop(self, timeout: float | None = None) -> None:
        """Stop the housekeeping thread and join it (at most ``timeout`` seconds); pending
        acks stay queued: call ``flush``."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        thread = self._thread
        if thread is not None and threading.current_thread() is not thread:
            thread.join(timeout)
