"""Sending the requests of acks and nacks that the ``AckTracker`` took from its outbox.

Each sub-consumer's requests go out in order; a retryable failure (busy, throttled, timed
out, unreachable, 5xx) puts that request and the ones after it back into the outbox, to be
tried after its backoff; a refused request is logged as an ERROR naming the message ids
lost (the service redelivers them: at-least-once).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from magnetar._transport.failures import describe, retryable

from .outbox import Outbox, Request

if TYPE_CHECKING:
    from magnetar._consumer.sub import Sub

__all__ = ["AckSender", "Post"]

# post(sub, action, body[, timeout]) sends one request for one sub-consumer
Post = Callable[..., Any]


class AckSender:
    """Sends batches of requests with ``post``; reports to ``outbox`` under ``lock``."""

    def __init__(self, post: Post, outbox: Outbox, lock: threading.Condition,
                 log: logging.Logger, clock: Callable[[], float]) -> None:  # fmt: skip
        self._post = post
        self._outbox = outbox
        self._cond = lock
        self._log = log
        self._clock = clock

    def send(self, batches: list[tuple[Sub, list[Request]]], deadline: float | None = None) -> int:
        """Send each sub-consumer's requests in order (each request within what is left of
        ``deadline``, seconds of ``time.monotonic``, when given); a retryable failure puts
        the rest back for a later attempt. Returns how many requests were tried."""
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
                                      topic_of(sub), describe(e))  # fmt: skip
                self._log.debug("%s on %s failed: %r", action, topic_of(sub), e)
                return False
            self.lost(sub, action, body, describe(e))
            return True
        if self._outbox.attempts.get(sub):
            self._log.info("%s on %s went through after %d failed attempt(s)", action,
                           topic_of(sub), self._outbox.attempts[sub])  # fmt: skip
        return True

    def lose(self, batches: list[tuple[Sub, list[Request]]],
             why: str = "the consumer closed before the service took it") -> None:  # fmt: skip
        """Log every request of ``batches`` as lost (``lost``)."""
        for sub, requests in batches:
            for action, body in requests:
                self.lost(sub, action, body, why)

    def lost(self, sub: Sub, action: str, body: dict, why: str) -> None:
        """Log as an ERROR a request that will not be sent, naming its message ids."""
        ids = body.get("messageIds", [])
        what = "acknowledgement" if action == "ack" else "negative acknowledgement"
        self._log.error("%s of %d message(s) on %s lost (%s); the service will redeliver "
                        "them: %s", what, len(ids), topic_of(sub), why, " ".join(ids))  # fmt: skip


def topic_of(sub: Any) -> str:
    """The topic name of a sub-consumer, for log lines."""
    return str(getattr(sub, "topic", sub))
