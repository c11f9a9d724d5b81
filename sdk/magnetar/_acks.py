"""Client-side acknowledgement handling, as Pulsar's client does it:

- acks are grouped: one ``POST .../ack`` per consumer per group, sent every
  ``ACK_GROUP_TIME`` seconds, when ``ACK_GROUP_MAX`` acks are pending, and on flush / close;
- negative acks are held for ``negative_ack_redelivery_delay_ms`` and then sent together
  (``POST .../nack``);
- with an ack timeout, messages delivered and not acked in time are nacked.

One daemon thread ("housekeeping") drives the timers; ``stop()`` joins it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from .message import id_texts

__all__ = ["ACK_GROUP_MAX", "ACK_GROUP_TIME", "AckTracker"]

ACK_GROUP_TIME = 0.1  # seconds: Pulsar's acknowledgementGroupTime (100 ms)
ACK_GROUP_MAX = 1000  # Pulsar's maxAcknowledgmentGroupSize
# Nacks of one sub-consumer falling due within this window go out in one request, at the
# latest one's due time: never early, at most this late (Pulsar's tracker works in ticks).
NACK_GROUP_TIME = 0.1

# post(sub, action, body) sends one request for one sub-consumer
Post = Callable[[Any, str, dict], Any]


class AckTracker:
    """Pending acks / nacks / unacked deliveries of one consumer (all its sub-consumers)."""

    def __init__(
        self, post: Post, nack_delay: float, ack_timeout: float | None, log: logging.Logger
    ) -> None:
        self._post = post
        self._nack_delay = nack_delay
        self._ack_timeout = ack_timeout
        self._log = log
        self._cond = threading.Condition()
        self._acks: dict[Any, list[str]] = {}
        self._cumulative: dict[Any, Any] = {}  # sub -> highest MessageId
        self._ack_count = 0
        self._ack_deadline: float | None = None
        self._ready: list[tuple[Any, dict]] = []  # full groups waiting to be sent
        # (sub, id) -> (send at, own due time): grouped nacks share the send time
        self._nacks: dict[tuple[Any, str], tuple[float, float]] = {}
        self._unacked: dict[tuple[Any, str], tuple[float, Any]] = {}  # -> (delivered, MessageId)
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="magnetar-acks", daemon=True)
        self._thread.start()

    def delivered(self, sub: Any, msg_id: Any) -> None:
        """A message was handed to the application (starts its ack timeout)."""
        if self._ack_timeout:
            with self._cond:
                for text in id_texts(msg_id):
                    self._unacked[(sub, text)] = (time.monotonic(), msg_id)
                self._cond.notify_all()

    def ack(self, sub: Any, msg_id: Any) -> None:
        """Queue an individual ack (of every chunk, for a chunked message's id)."""
        with self._cond:
            for text in id_texts(msg_id):
                self._acks.setdefault(sub, []).append(text)
                self._forget(sub, text)
                self._queued_one()

    def ack_cumulative(self, sub: Any, msg_id: Any) -> None:
        """Queue a cumulative ack (only the highest per sub-consumer is sent)."""
        with self._cond:
            current = self._cumulative.get(sub)
            if current is None or current < msg_id:
                self._cumulative[sub] = msg_id
            for key in [k for k, v in self._unacked.items() if k[0] is sub and v[1] <= msg_id]:
                del self._unacked[key]
            self._queued_one()

    def nack(self, sub: Any, msg_id: Any) -> None:
        """Schedule a negative ack after the redelivery delay, grouped with this
        sub-consumer's nacks due at most ``NACK_GROUP_TIME`` earlier."""
        with self._cond:
            due = time.monotonic() + self._nack_delay
            for key, (_, own) in list(self._nacks.items()):
                if key[0] is sub and due - NACK_GROUP_TIME <= own <= due:
                    self._nacks[key] = (due, own)
            for text in id_texts(msg_id):
                self._unacked.pop((sub, text), None)
                self._nacks[(sub, text)] = (due, due)
            self._cond.notify_all()

    def clear_unacked(self) -> None:
        """Forget every delivery (after ``redeliver_unacknowledged_messages``)."""
        with self._cond:
            self._unacked.clear()
            self._nacks.clear()

    def _forget(self, sub: Any, text: str) -> None:
        self._unacked.pop((sub, text), None)
        self._nacks.pop((sub, text), None)

    def _queued_one(self) -> None:
        self._ack_count += 1
        if self._ack_deadline is None:
            self._ack_deadline = time.monotonic() + ACK_GROUP_TIME
        if self._ack_count >= ACK_GROUP_MAX:
            self._ready.extend(self._take_group())
        self._cond.notify_all()

    def _take_group(self) -> list[tuple[Any, dict]]:
        """Turn the open group into request bodies and start a new group (lock held)."""
        out = [(sub, {"messageIds": ids, "cumulative": False}) for sub, ids in self._acks.items()]
        out += [(sub, {"messageIds": [str(mid)], "cumulative": True})
                for sub, mid in self._cumulative.items()]  # fmt: skip
        self._acks, self._cumulative = {}, {}
        self._ack_count, self._ack_deadline = 0, None
        return out

    # ------------------------------------------------------------------ sending

    def flush(self) -> None:
        """Send every pending ack now (one request per sub-consumer and kind)."""
        with self._cond:
            groups = self._ready + self._take_group()
            self._ready = []
        for sub, body in groups:
            self._send(sub, "ack", body)

    def _send(self, sub: Any, action: str, body: dict) -> None:
        try:
            self._post(sub, action, body)
        except Exception as e:  # acks are best effort, as in Pulsar: redelivery covers it
            self._log.warning("%s of %d message(s) failed: %s", action,
                              len(body.get("messageIds", [])), e)  # fmt: skip

    def _due(self, now: float) -> tuple[bool, dict[Any, list[str]]]:
        flush = self._ack_deadline is not None and self._ack_deadline <= now
        due: dict[Any, list[str]] = {}
        for key, (when, _) in list(self._nacks.items()):
            if when <= now:
                del self._nacks[key]
                due.setdefault(key[0], []).append(key[1])
        if self._ack_timeout:
            for key, (since, _) in list(self._unacked.items()):
                if since + self._ack_timeout <= now:
                    del self._unacked[key]
                    due.setdefault(key[0], []).append(key[1])
        return flush, due

    def _next_wake(self, now: float) -> float | None:
        times = [when for when, _ in self._nacks.values()]
        if self._ack_deadline is not None:
            times.append(self._ack_deadline)
        if self._ack_timeout and self._unacked:
            times.append(min(s for s, _ in self._unacked.values()) + self._ack_timeout)
        return max(0.0, min(times) - now) if times else None

    def _run(self) -> None:
        while True:
            with self._cond:
                if self._stopping:
                    return
                now = time.monotonic()
                flush, due = self._due(now)
                if not flush and not due and not self._ready:
                    self._cond.wait(self._next_wake(now))
                    continue
                groups = self._ready + (self._take_group() if flush else [])
                self._ready = []
            for sub, body in groups:
                self._send(sub, "ack", body)
            for sub, ids in due.items():
                self._send(sub, "nack", {"messageIds": ids})

    def stop(self) -> None:
        """Stop and join the housekeeping thread (pending acks stay queued: call ``flush``)."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if threading.current_thread() is not self._thread:
            self._thread.join()
