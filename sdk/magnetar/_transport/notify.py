"""The notification channel of an idle consumer: instead of long-polling forever,
a sub-consumer whose receives came back empty ``IDLE_POLLS`` times in a row watches its
partition on the service's WebSocket channel (the ``notifyUrl`` of the subscribe answer),
checks once more without waiting (a commit between its last poll and the watch), and then
sleeps until a notice (a commit on the partition), the service's ``recheckInMs`` (a delayed
message or another consumer's redelivery comes due without a commit), a keepalive
(``KEEPALIVE_SECONDS``: API Gateway drops connections idle for 10 minutes), this
consumer's own nack or redelivery, or its close. It then receives again. Without the
channel (not advertised, or it cannot be reached: retried after ``RETRY_SECONDS``) the
sub-consumer long-polls as before. One connection per consumer, shared by its
sub-consumers, replaced before API Gateway's 2-hour limit (``RECONNECT_SECONDS``).
"""

from __future__ import annotations

import itertools
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

if TYPE_CHECKING:
    from websockets.sync.client import ClientConnection

__all__ = ["IDLE_POLLS", "KEEPALIVE_SECONDS", "Channel", "IdleState", "channel_for"]

IDLE_POLLS = 2
"""Empty long-polls in a row after which a sub-consumer waits on the channel."""
KEEPALIVE_SECONDS = 540.0
"""Longest sleep on the channel (s): a watch sent then keeps the connection alive (API
Gateway closes connections idle for 10 minutes) and its check finds what no notice told."""
RECONNECT_SECONDS = 6600.0
"""A connection older than this (s) is replaced at the next watch (API Gateway ends them at
2 hours)."""
RETRY_SECONDS = 60.0
"""After the channel failed, how long (s) the consumer long-polls before trying it again."""
MIN_RECHECK_SECONDS = 1.0
"""Shortest sleep (s) a ``recheckInMs`` makes: work already due but not yet deliverable (a
delayed bucket whose timer has not released it) is looked at once a second, not in a loop."""
ANSWER_SECONDS = 10.0
"""How long (s) a watch waits for the service's answer."""


@dataclass(eq=False)
class IdleState:
    """One sub-consumer's idleness: empty receives in a row, and whether a watch stands
    (its next receive is a check without waiting, then it sleeps)."""

    empty: int = 0
    watched: bool = False
    recheck_s: float | None = None
    asleep: bool = False  # in ``Channel.sleep``
    wake: threading.Event = field(default_factory=threading.Event)


class Channel:
    """The consumer's connection to ``url``; ``headers()`` gives the transport's
    authentication headers (a Bearer token also goes as query parameter ``token``)."""

    def __init__(self, url: str, headers: Callable[[], dict[str, str]], log: logging.Logger,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self.url, self._headers, self._log, self._clock = url, headers, log, clock
        self._lock = threading.Lock()
        self._opening = threading.Lock()  # one connection opened at a time
        self._conn: ClientConnection | None = None
        self._opened_at = 0.0
        self._failed_at: float | None = None
        self._refs = itertools.count(1)
        self._answers: dict[int, dict] = {}
        self._answered = threading.Condition(self._lock)
        self._sleepers: dict[str, list[IdleState]] = {}
        self._closed = False
        self.notices = 0
        """Notices received so far."""

    # -- what the poll loop calls ----------------------------------------------------------

    def watch(self, topic: str, subscription: str, consumer_id: str, idle: IdleState) -> bool:
        """Watch ``topic`` for the consumer (and register ``idle`` to be woken by its
        notices); False when the channel cannot be used now (then long-poll). Never raises."""
        _, failure = _websockets()
        try:
            conn = self._connection()
            if conn is None:
                return False
            ref = next(self._refs)
            body = {"action": "watch", "ref": ref,
                    "watches": [{"topic": topic, "subscription": subscription,
                                 "consumerId": consumer_id}]}  # fmt: skip
            with self._lock:
                idle.wake.clear()
                self._sleepers.setdefault(topic, []).append(idle)
            conn.send(json.dumps(body))
            answer = self._answer(ref)
        except (OSError, failure, TimeoutError) as e:
            self._failed(f"watching {topic}: {e}")
            return False
        if answer is None or "watching" not in answer:
            self._log.info("the channel refused watching %s: %s", topic, answer)
            self._forget(topic, idle)
            return False
        recheck_ms = answer.get("recheckInMs")
        idle.recheck_s = recheck_ms / 1000 if isinstance(recheck_ms, int) else None
        return True

    def sleep(self, topic: str, idle: IdleState, closed: threading.Event) -> bool:
        """Sleep until a notice on ``topic``, a recheck, a keepalive or ``closed``; True
        when woken by a notice (or a nack/redelivery: ``wake``)."""
        recheck_s = KEEPALIVE_SECONDS if idle.recheck_s is None else idle.recheck_s
        timeout = min(KEEPALIVE_SECONDS, max(recheck_s, MIN_RECHECK_SECONDS))
        deadline = self._clock() + max(timeout, 0.0)
        woken, idle.asleep = False, True
        while not closed.is_set() and (left := deadline - self._clock()) > 0:
            if idle.wake.wait(min(left, 1.0)):
                woken = True
                break
        idle.asleep = False
        self._forget(topic, idle)
        return woken

    def sleeping(self, topic: str) -> bool:
        """Whether a sub-consumer of ``topic`` waits for its notice."""
        with self._lock:
            return bool(self._sleepers.get(topic))

    def close(self) -> None:
        """Close the connection (the service's $disconnect releases the holds)."""
        with self._lock:
            self._closed = True
            conn, self._conn = self._conn, None
            self._answered.notify_all()
            sleepers = [s for group in self._sleepers.values() for s in group]
        for s in sleepers:
            s.wake.set()
        if conn is not None:
            conn.close()

    # -- the connection --------------------------------------------------------------------

    def _connection(self) -> ClientConnection | None:
        """The open connection, opened or replaced as needed; None while failed recently.
        Raises OSError, websockets' WebSocketException."""
        with self._opening:
            return self._open()

    def _open(self) -> ClientConnection | None:
        with self._lock:
            if self._closed:
                return None
            now = self._clock()
            if self._failed_at is not None and now - self._failed_at < RETRY_SECONDS:
                return None
            if self._conn is not None and now - self._opened_at < RECONNECT_SECONDS:
                return self._conn
            old, self._conn = self._conn, None
        if old is not None:
            old.close()
        headers = self._headers()
        url = self.url
        auth = headers.get("Authorization", "")
        if auth.startswith("Bearer "):
            url += ("&" if "?" in url else "?") + "token=" + quote(auth[7:], safe="")
        connect, _ = _websockets()
        conn = connect(url, additional_headers=headers, open_timeout=ANSWER_SECONDS,
                       ping_interval=None, compression=None, legacy=True)  # fmt: skip
        with self._lock:
            if self._closed:
                conn.close()
                return None
            self._conn, self._opened_at, self._failed_at = conn, self._clock(), None
        threading.Thread(target=self._read, args=(conn,), name="magnetar-notify",
                         daemon=True).start()  # fmt: skip
        return conn

    def _read(self, conn: ClientConnection) -> None:
        """The reader thread: notices wake their sleepers, answers their watchers."""
        _, failure = _websockets()
        try:
            for message in conn:
                self._received(message)
        except (OSError, failure):
            pass
        with self._lock:
            if self._conn is conn:
                self._conn = None
            sleepers = [s for group in self._sleepers.values() for s in group]
            self._answered.notify_all()
        for s in sleepers:  # the connection ended: look again (and watch anew)
            s.wake.set()

    def _received(self, message: str | bytes) -> None:
        try:
            doc: Any = json.loads(message)
        except ValueError:
            return
        if not isinstance(doc, dict):
            return
        if isinstance(doc.get("notice"), str):
            with self._lock:
                woken = self._sleepers.pop(doc["notice"], [])
                self.notices += 1
            for s in woken:
                s.wake.set()
        elif isinstance(doc.get("ref"), int):
            with self._lock:
                self._answers[doc["ref"]] = doc
                self._answered.notify_all()

    def _answer(self, ref: int) -> dict | None:
        """The service's answer to watch ``ref`` (None: none in time, or the connection
        ended)."""
        deadline = self._clock() + ANSWER_SECONDS
        with self._lock:
            while ref not in self._answers:
                left = deadline - self._clock()
                if left <= 0 or self._conn is None:
                    return None
                self._answered.wait(left)
            return self._answers.pop(ref)

    def _failed(self, why: str) -> None:
        self._log.info("notification channel unavailable (%s): long-polling", why)
        with self._lock:
            self._failed_at = self._clock()
            conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def _forget(self, topic: str, idle: IdleState) -> None:
        with self._lock:
            group = self._sleepers.get(topic, [])
            if idle in group:
                group.remove(idle)
            if not group:
                self._sleepers.pop(topic, None)


def channel_for(current: Channel | None, url: Any, headers: Callable[[], dict[str, str]],
                log: logging.Logger) -> Channel | None:  # fmt: skip
    """The consumer's channel after a subscribe answered ``url`` (its ``notifyUrl``): the
    current one when the URL is the same, else a new one (the old one closed: the client
    switched deployments, or the service stopped advertising one); None without a URL."""
    if current is not None and current.url == url:
        return current
    if current is not None:
        current.close()
    return Channel(url, headers, log) if isinstance(url, str) and url else None


def _websockets() -> tuple[Any, type[Exception]]:
    """websockets' sync ``connect`` and its ``WebSocketException``, imported on first use:
    importing the package costs about 70 ms of CPU, which a process that never watches the
    channel (every CLI command but ``consume``, a producer) need not pay."""
    from websockets.exceptions import WebSocketException
    from websockets.sync.client import connect

    return connect, WebSocketException
