"""Client-side acknowledgement handling, as Pulsar's client does it:

- acks are grouped: one ``POST .../ack`` per sub-consumer per group, sent every
  ``ACK_GROUP_TIME`` seconds, when ``ACK_GROUP_MAX`` acks and nacks are pending, and on
  flush / close;
- negative acks are grouped the same way and sent at once (``POST .../nack``) with the
  redelivery delay (``delayMs``) or the backoff object: the SERVICE holds the messages for
  the delay (a timer per due bucket) and applies the backoff by each message's redelivery
  count, so nothing waits in the client and a closed or crashed client loses no delay —
  except the nack of one message of a batch while this consumer still holds other messages
  of that batch: it waits until those are settled, at most ``max(delay,
  NACK_HOLD_MIN_SECONDS)``, and then carries the rest of its delay (``magnetar._held``);
- with an ack timeout, deliveries not acknowledged in time are sent back (``POST .../nack``
  without delay, or with the ack-timeout backoff), checked once per tick as Pulsar's
  ``UnAckedMessageTracker`` does: a message handed to the application at ``t`` goes back
  at the first tick instant at or after ``t + timeout`` (so within ``timeout + tick``).
  The service counts each such redelivery (``redelivery_count`` + 1).

Nothing is dropped silently. Requests go out in order per sub-consumer (``_ack_outbox``); a
retryable failure (busy, throttled, timed out, unreachable, 5xx) is retried after a jittered
backoff of at most ``RETRY_MAX_SECONDS``, for as long as the consumer is open (the consumer's
``post_ack`` subscribes again first when the service forgot the consumer). A refused request, or one
still failing when ``flush``'s deadline passes (on close), is logged as an ERROR naming the
message ids lost (the service redelivers them: at-least-once).

One daemon thread ("magnetar-acks") drives the timers; ``stop()`` joins it. Times are
seconds of ``clock`` (default ``monotonic``, this module's ``time.monotonic``: tests patch it
or pass a fake clock, then call ``wake``, or ``run_due`` on a tracker made with
``start=False``).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from ._ack_outbox import Outbox, Request
from ._ack_timeout import UnackedTimeouts
from ._failures import JitteredBackoff, describe, retryable
from ._held import AckedIds, BatchHolds, Waiting
from ._policies import MultiplierRedeliveryBackoff, backoff_body
from ._recovery import run_parallel
from .message import MessageId, id_texts

if TYPE_CHECKING:
    from ._receiver import Sub

__all__ = ["ACK_GROUP_MAX", "ACK_GROUP_TIME", "AckTracker", "Redelivery"]

ACK_GROUP_TIME = 0.1  # seconds: Pulsar's acknowledgementGroupTime (100 ms)
ACK_GROUP_MAX = 1000  # Pulsar's maxAcknowledgmentGroupSize; also the most ids per request
RETRY_BASE_SECONDS = 0.1  # first retry of a failed ack / nack request after 0.05-0.1 s
RETRY_MAX_SECONDS = 5.0  # retries of one sub-consumer's requests are at most this far apart
NACK_HOLD_MIN_SECONDS = 1.0  # the least a batch message's nack may wait for its neighbours

# post(sub, action, body[, timeout]) sends one request for one sub-consumer
Post = Callable[..., Any]
monotonic = time.monotonic  # the default clock


@dataclass(frozen=True)
class Redelivery:
    """A consumer's redelivery settings (ms): nack delay or backoff (the backoff wins, as
    in Pulsar), ack timeout (0: off), its tick and optional backoff."""

    nack_delay_ms: int = 60_000
    nack_backoff: MultiplierRedeliveryBackoff | None = None
    ack_timeout_ms: int = 0
    tick_ms: int = 1000
    ack_timeout_backoff: MultiplierRedeliveryBackoff | None = None

    def nack_body(self, ids: list[str], delay_ms: int | None = None) -> dict:
        """The ``POST .../nack`` body of a negative acknowledgement (``delay_ms``: what is
        left of the delay of a nack that waited in the client)."""
        if self.nack_backoff is not None:
            return {"messageIds": ids, "backoff": backoff_body(self.nack_backoff)}
        return {"messageIds": ids, "delayMs": self.nack_delay_ms if delay_ms is None else delay_ms}

    def timeout_body(self, ids: list[str]) -> dict:
        """The ``POST .../nack`` body sending back messages whose ack timeout passed."""
        if self.ack_timeout_backoff is not None:
            return {"messageIds": ids, "backoff": backoff_body(self.ack_timeout_backoff)}
        return {"messageIds": ids}

    def nack_hold_seconds(self, least: float) -> float:
        """How long a batch message's nack may wait for the batch's other messages handed
        to the application: its delay (the backoff's least), and at least ``least``."""
        delay = self.nack_backoff.min_delay_ms if self.nack_backoff else self.nack_delay_ms
        return max(delay / 1000, least)


class AckTracker:
    """Pending acks / nacks / unacked deliveries of one consumer (all its sub-consumers)."""

    def __init__(self, post: Post, redelivery: Redelivery, log: logging.Logger,
                 clock: Callable[[], float] | None = None, start: bool = True) -> None:  # fmt: skip
        self._post = post
        self._cfg = redelivery
        self._log = log
        self._clock = clock or monotonic
        self._timeouts = UnackedTimeouts(redelivery.ack_timeout_ms / 1000,
                                         redelivery.tick_ms / 1000, self._clock())  # fmt: skip
        self._cond = threading.Condition()
        self._acks: dict[Sub, list[str]] = {}
        self._cumulative: dict[Sub, MessageId] = {}  # the highest per sub-consumer
        self._nacks: dict[tuple[Sub, int | None], list[str]] = {}  # (sub, delay left) -> ids
        self._count = 0
        self._deadline: float | None = None
        self._outbox = Outbox(JitteredBackoff(RETRY_BASE_SECONDS, RETRY_MAX_SECONDS))
        self._holds = BatchHolds()
        self._acked = AckedIds()
        self._stopping = False
        self._thread: threading.Thread | None = None
        if start:
            self._thread = threading.Thread(target=self._run, name="magnetar-acks", daemon=True)
            self._thread.start()

    # ------------------------------------------------------------------ the application side

    def received(self, sub: Sub, msg_id: MessageId) -> None:
        """A message reached the consumer's receiver queue (batch messages are held)."""
        with self._cond:
            self._holds.received(sub, msg_id)

    def delivered(self, sub: Sub, msg_id: MessageId) -> None:
        """A message was handed to the application (starts its ack timeout)."""
        with self._cond:
            if self._holds.handed(sub, msg_id):
                self._cond.notify_all()
            if self._timeouts.timeout:
                self._timeouts.handed(sub, id_texts(msg_id), msg_id, self._clock())
                self._cond.notify_all()

    def skip_if_acked(self, sub: Sub, msg_id: MessageId) -> bool:
        """True when this consumer acknowledged ``msg_id`` already: the copy must not be
        handed out (it counts as settled)."""
        with self._cond:
            if (sub, msg_id) not in self._acked:
                return False
            self._release(self._holds.settle(sub, msg_id))
            return True

    def redeliver_now(self, sub: Sub, ids: list[str]) -> None:
        """Queue a nack without delay of ``ids`` (an entry the client could not read)."""
        with self._cond:
            self._outbox.add(sub, "nack", {"messageIds": ids})
            self._cond.notify_all()

    def ack(self, sub: Sub, msg_id: MessageId) -> None:
        """Queue an individual ack (of every chunk, for a chunked message's id)."""
        with self._cond:
            self._acked.add(sub, msg_id)
            for text in id_texts(msg_id):
                self._acks.setdefault(sub, []).append(text)
                self._timeouts.settled(sub, text)
                self._queued_one()
            self._release(self._holds.settle(sub, msg_id))

    def ack_cumulative(self, sub: Sub, msg_id: MessageId) -> None:
        """Queue a cumulative ack (only the highest per sub-consumer is sent)."""
        with self._cond:
            self._acked.add_cumulative(sub, msg_id)
            current = self._cumulative.get(sub)
            if current is None or current < msg_id:
                self._cumulative[sub] = msg_id
            self._timeouts.settled_up_to(sub, msg_id)
            self._queued_one()

    def nack(self, sub: Sub, msg_id: MessageId) -> None:
        """Queue a negative ack: sent with the next group, carrying the redelivery delay or
        backoff for the service to apply (a batch message's may wait, see the module)."""
        with self._cond:
            texts = id_texts(msg_id)
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
        """The receiver queue of ``sub`` (None: all) was dropped: its messages come again
        from the service, so nacks held back for them may go now."""
        with self._cond:
            self._release(self._holds.drop(sub))

    def clear_unacked(self) -> None:
        """Forget every delivery and pending nack (``redeliver_unacknowledged_messages`` and
        seek send everything back anyway)."""
        with self._cond:
            self._timeouts.clear()
            self._count -= sum(len(ids) for ids in self._nacks.values())
            self._nacks.clear()
            self._holds.drop()

    def clear_acked(self) -> None:
        """Forget which ids were acknowledged (after a seek they may rightly come again)."""
        with self._cond:
            self._acked.clear()

    def wake(self) -> None:
        """Look at the clock again now (for tests that move a fake clock)."""
        with self._cond:
            self._cond.notify_all()

    def _release(self, waiting: list[Waiting]) -> None:
        """Queue nacks (some of which waited for their batch) into the open group, in one
        request per sub-consumer carrying what is left of the latest one's delay (lock
        held)."""
        now = self._clock()
        by_sub: dict[Sub, list[Waiting]] = {}
        for item in waiting:
            by_sub.setdefault(item[0], []).append(item)
        for sub, items in by_sub.items():
            waited = now - max(since for _, _, since in items)
            left = None  # the whole delay (or the backoff)
            if self._cfg.nack_backoff is None and waited >= 0.001:
                left = max(0, math.ceil(self._cfg.nack_delay_ms - waited * 1000))
            for _, text, _ in items:
                self._nacks.setdefault((sub, left), []).append(text)
                self._queued_one()

    def _queued_one(self) -> None:
        self._count += 1
        if self._deadline is None:
            self._deadline = self._clock() + ACK_GROUP_TIME
        if self._count >= ACK_GROUP_MAX:
            self._take_group()
        self._cond.notify_all()

    def _take_group(self) -> None:
        """Move the open group to the outbox (acks before nacks) and start a new group (lock
        held)."""
        for sub, ids in self._acks.items():
            self._outbox.add(sub, "ack", {"messageIds": ids, "cumulative": False})
        for sub, mid in self._cumulative.items():
            self._outbox.add(sub, "ack", {"messageIds": [str(mid)], "cumulative": True})
        for (sub, left), ids in self._nacks.items():
            self._outbox.add(sub, "nack", self._cfg.nack_body(ids, left))
        self._acks, self._cumulative, self._nacks = {}, {}, {}
        self._count, self._deadline = 0, None

    def _expire(self, now: float) -> None:
        """Queue requests sending back the deliveries whose ack timeout passed (lock
        held)."""
        for sub, ids in self._timeouts.expired(now).items():
            for i in range(0, len(ids), ACK_GROUP_MAX):
                self._outbox.add(sub, "nack", self._cfg.timeout_body(ids[i : i + ACK_GROUP_MAX]))

    def _next_wake(self, now: float) -> float | None:
        times = [] if self._deadline is None else [self._deadline]
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

    # ------------------------------------------------------------------ sending

    def _take_due(self, now: float, force: bool = False) -> list[tuple[Sub, list[Request]]]:
        """Nacks whose hold is up, the open group once its time is up (or ``force``),
        expired deliveries: into the outbox; then the outbox's queues that may go now
        (lock held)."""
        hold = self._cfg.nack_hold_seconds(NACK_HOLD_MIN_SECONDS)
        self._release(self._holds.due(math.inf if force else now - hold))
        if force or (self._deadline is not None and self._deadline <= now):
            self._take_group()
        self._expire(now)
        return self._outbox.take(now, force)

    def _send(self, batches: list[tuple[Sub, list[Request]]], deadline: float | None = None) -> int:
        """Send each sub-consumer's requests in order; a retryable failure puts the rest
        back for a later attempt. Returns how many requests were tried."""
        tried = 0
        for sub, requests in batches:
            unsent: list[Request] = []
            for i, (action, body) in enumerate(requests):
                tried += 1
                if not self._send_one(sub, action, body, deadline):
                    unsent = requests[i:]
                    break
            with self._cond:
                self._outbox.done(sub, unsent, self._clock())
                self._cond.notify_all()
        return tried

    def _send_one(self, sub: Sub, action: str, body: dict, deadline: float | None) -> bool:
        """Send one request; False when it should be tried again later."""
        try:
            if deadline is None:
                self._post(sub, action, body)
            else:
                self._post(sub, action, body, max(deadline - time.monotonic(), 0.05))
        except Exception as e:
            if retryable(e):
                if not self._outbox.attempts.get(sub):
                    self._log.warning("%s of %d message(s) on %s failed: %s; retrying",
                                      action, len(body.get("messageIds", [])),
                                      _topic(sub), describe(e))  # fmt: skip
                self._log.debug("%s on %s failed: %r", action, _topic(sub), e)
                return False
            self._lost(sub, action, body, describe(e))
            return True
        if self._outbox.attempts.get(sub):
            self._log.info("%s on %s went through after %d failed attempt(s)", action,
                           _topic(sub), self._outbox.attempts[sub])  # fmt: skip
        return True

    def _lost(self, sub: Sub, action: str, body: dict, why: str) -> None:
        ids = body.get("messageIds", [])
        what = "acknowledgement" if action == "ack" else "negative acknowledgement"
        self._log.error("%s of %d message(s) on %s lost (%s); the service will redeliver "
                        "them: %s", what, len(ids), _topic(sub), why, " ".join(ids))  # fmt: skip

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
                    for sub, requests in self._outbox.drain():
                        for action, body in requests:
                            self._lost(sub, action, body, "the consumer closed before the "
                                                          "service took it")  # fmt: skip
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
                self._send(batches)
            else:
                run_parallel([partial(self._send, [b], deadline) for b in batches], "flush")

    def run_due(self) -> int:
        """Send what is due by the clock now (the housekeeping thread does this; tests with
        a fake clock call it on a tracker made with ``start=False``). Returns the number of
        requests tried."""
        with self._cond:
            batches = self._take_due(self._clock())
        return self._send(batches)

    def _run(self) -> None:
        while True:
            with self._cond:
                if self._stopping:
                    return
                batches = self._take_due(self._clock())
                if not batches:
                    self._cond.wait(self._next_wake(self._clock()))
                    continue
            self._send(batches)

    def stop(self, timeout: float | None = None) -> None:
        """Stop the housekeeping thread and join it (at most ``timeout`` seconds); pending
        acks stay queued: call ``flush``."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        thread = self._thread
        if thread is not None and threading.current_thread() is not thread:
            thread.join(timeout)


def _topic(sub: Any) -> str:
    return str(getattr(sub, "topic", sub))
