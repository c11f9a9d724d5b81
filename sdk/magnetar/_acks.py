"""Client-side acknowledgement handling, as Pulsar's client does it:

- acks are grouped: one ``POST .../ack`` per sub-consumer per group, sent every
  ``ACK_GROUP_TIME`` seconds, when ``ACK_GROUP_MAX`` acks and nacks are pending, and on
  flush / close;
- negative acks are grouped the same way and sent at once (``POST .../nack``) with the
  redelivery delay (``delayMs``) or the backoff object: the SERVICE holds the messages for
  the delay (a timer per due bucket) and applies the backoff by each message's redelivery
  count, so nothing waits in the client and a closed or crashed client loses no delay;
- with an ack timeout, deliveries not acknowledged in time are sent back (``POST .../nack``
  without delay, or with the ack-timeout backoff), checked once per tick as Pulsar's
  ``UnAckedMessageTracker`` does: a message handed to the application at ``t`` goes back
  at the first tick instant at or after ``t + timeout`` (so within ``timeout + tick``).
  The service counts each such redelivery (``redelivery_count`` + 1).

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
from typing import TYPE_CHECKING, Any

from ._policies import MultiplierRedeliveryBackoff, backoff_body
from .message import MessageId, id_texts

if TYPE_CHECKING:
    from ._receiver import Sub

__all__ = ["ACK_GROUP_MAX", "ACK_GROUP_TIME", "AckTracker", "Redelivery"]

ACK_GROUP_TIME = 0.1  # seconds: Pulsar's acknowledgementGroupTime (100 ms)
ACK_GROUP_MAX = 1000  # Pulsar's maxAcknowledgmentGroupSize; also the most ids per request

# post(sub, action, body) sends one request for one sub-consumer
Post = Callable[["Sub", str, dict], Any]
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

    def nack_body(self, ids: list[str]) -> dict:
        """The ``POST .../nack`` body of a negative acknowledgement."""
        if self.nack_backoff is not None:
            return {"messageIds": ids, "backoff": backoff_body(self.nack_backoff)}
        return {"messageIds": ids, "delayMs": self.nack_delay_ms}

    def timeout_body(self, ids: list[str]) -> dict:
        """The ``POST .../nack`` body sending back messages whose ack timeout passed."""
        if self.ack_timeout_backoff is not None:
            return {"messageIds": ids, "backoff": backoff_body(self.ack_timeout_backoff)}
        return {"messageIds": ids}


class AckTracker:
    """Pending acks / nacks / unacked deliveries of one consumer (all its sub-consumers)."""

    def __init__(self, post: Post, redelivery: Redelivery, log: logging.Logger,
                 clock: Callable[[], float] | None = None, start: bool = True) -> None:  # fmt: skip
        self._post = post
        self._cfg = redelivery
        self._log = log
        self._clock = clock or monotonic
        self._timeout = redelivery.ack_timeout_ms / 1000
        self._tick = min(redelivery.tick_ms / 1000, self._timeout) if self._timeout else 0.0
        self._epoch = self._clock()  # tick instants are epoch + k * tick
        self._cond = threading.Condition()
        self._acks: dict[Sub, list[str]] = {}
        self._cumulative: dict[Sub, MessageId] = {}  # the highest per sub-consumer
        self._nacks: dict[Sub, list[str]] = {}
        self._count = 0
        self._deadline: float | None = None
        self._ready: list[tuple[Sub, str, dict]] = []  # full groups waiting to be sent
        self._unacked: dict[tuple[Sub, str], tuple[float, MessageId]] = {}  # -> (handed out, id)
        self._stopping = False
        self._thread: threading.Thread | None = None
        if start:
            self._thread = threading.Thread(target=self._run, name="magnetar-acks", daemon=True)
            self._thread.start()

    def delivered(self, sub: Sub, msg_id: MessageId) -> None:
        """A message was handed to the application (starts its ack timeout)."""
        if self._timeout:
            with self._cond:
                now = self._clock()
                for text in id_texts(msg_id):
                    self._unacked[(sub, text)] = (now, msg_id)
                self._cond.notify_all()

    def ack(self, sub: Sub, msg_id: MessageId) -> None:
        """Queue an individual ack (of every chunk, for a chunked message's id)."""
        with self._cond:
            for text in id_texts(msg_id):
                self._acks.setdefault(sub, []).append(text)
                self._unacked.pop((sub, text), None)
                self._queued_one()

    def ack_cumulative(self, sub: Sub, msg_id: MessageId) -> None:
        """Queue a cumulative ack (only the highest per sub-consumer is sent)."""
        with self._cond:
            current = self._cumulative.get(sub)
            if current is None or current < msg_id:
                self._cumulative[sub] = msg_id
            for key in [k for k, v in self._unacked.items() if k[0] is sub and v[1] <= msg_id]:
                del self._unacked[key]
            self._queued_one()

    def nack(self, sub: Sub, msg_id: MessageId) -> None:
        """Queue a negative ack: sent with the next group, carrying the redelivery delay or
        backoff for the service to apply."""
        with self._cond:
            for text in id_texts(msg_id):
                self._unacked.pop((sub, text), None)
                self._nacks.setdefault(sub, []).append(text)
                self._queued_one()

    def clear_unacked(self) -> None:
        """Forget every delivery and pending nack (``redeliver_unacknowledged_messages`` and
        seek send everything back anyway)."""
        with self._cond:
            self._unacked.clear()
            self._count -= sum(len(ids) for ids in self._nacks.values())
            self._nacks.clear()

    def wake(self) -> None:
        """Look at the clock again now (for tests that move a fake clock)."""
        with self._cond:
            self._cond.notify_all()

    def _queued_one(self) -> None:
        self._count += 1
        if self._deadline is None:
            self._deadline = self._clock() + ACK_GROUP_TIME
        if self._count >= ACK_GROUP_MAX:
            self._ready.extend(self._take_group())
        self._cond.notify_all()

    def _take_group(self) -> list[tuple[Sub, str, dict]]:
        """Turn the open group into requests (acks before nacks) and start a new group (lock
        held)."""
        out = [(sub, "ack", {"messageIds": ids, "cumulative": False})
               for sub, ids in self._acks.items()]  # fmt: skip
        out += [(sub, "ack", {"messageIds": [str(mid)], "cumulative": True})
                for sub, mid in self._cumulative.items()]  # fmt: skip
        out += [(sub, "nack", self._cfg.nack_body(ids)) for sub, ids in self._nacks.items()]
        self._acks, self._cumulative, self._nacks = {}, {}, {}
        self._count, self._deadline = 0, None
        return out

    # ------------------------------------------------------------------ ack timeout

    def _last_tick(self, now: float) -> float:
        return self._epoch + math.floor((now - self._epoch) / self._tick + 1e-9) * self._tick

    def _next_tick(self, t: float) -> float:
        return self._epoch + math.ceil((t - self._epoch) / self._tick - 1e-9) * self._tick

    def _expired(self, now: float) -> list[tuple[Sub, str, dict]]:
        """Requests sending back the deliveries whose timeout passed by the last tick."""
        if not self._timeout or not self._unacked:
            return []
        tick = self._last_tick(now)
        due: dict[Sub, list[str]] = {}
        for key, (since, _) in list(self._unacked.items()):
            if since + self._timeout <= tick + 1e-9:
                del self._unacked[key]
                due.setdefault(key[0], []).append(key[1])
        return [(sub, "nack", self._cfg.timeout_body(ids[i : i + ACK_GROUP_MAX]))
                for sub, ids in due.items() for i in range(0, len(ids), ACK_GROUP_MAX)]  # fmt: skip

    def _next_wake(self, now: float) -> float | None:
        times = [] if self._deadline is None else [self._deadline]
        if self._timeout and self._unacked:
            first = min(since for since, _ in self._unacked.values())
            times.append(self._next_tick(first + self._timeout))
        return max(0.0, min(times) - now) if times else None

    # ------------------------------------------------------------------ sending

    def flush(self) -> None:
        """Send every pending ack and nack now (one request per sub-consumer and kind)."""
        with self._cond:
            groups = self._ready + self._take_group()
            self._ready = []
        self._send_all(groups)

    def run_due(self) -> int:
        """Send what is due by the clock now (the housekeeping thread does this; tests with
        a fake clock call it on a tracker made with ``start=False``). Returns the number of
        requests sent."""
        with self._cond:
            groups = self._take_due(self._clock())
        self._send_all(groups)
        return len(groups)

    def _take_due(self, now: float) -> list[tuple[Sub, str, dict]]:
        """Full groups, the open group once its time is up, and expired deliveries (lock
        held)."""
        groups = self._ready
        self._ready = []
        if self._deadline is not None and self._deadline <= now:
            groups += self._take_group()
        return groups + self._expired(now)

    def _send_all(self, groups: list[tuple[Sub, str, dict]]) -> None:
        for sub, action, body in groups:
            try:
                self._post(sub, action, body)
            except Exception as e:  # acks are best effort, as in Pulsar: redelivery covers it
                self._log.warning("%s of %d message(s) failed: %s", action,
                                  len(body.get("messageIds", [])), e)  # fmt: skip

    def _run(self) -> None:
        while True:
            with self._cond:
                if self._stopping:
                    return
                groups = self._take_due(self._clock())
                if not groups:
                    self._cond.wait(self._next_wake(self._clock()))
                    continue
            self._send_all(groups)

    def stop(self) -> None:
        """Stop and join the housekeeping thread (pending acks stay queued: call ``flush``)."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        thread = self._thread
        if thread is not None and threading.current_thread() is not thread:
            thread.join()
