"""The consumer's engine: one sub-consumer (``Sub``) per topic / partition, each with ONE
long-poll receive in flight on its own daemon thread (``polling``), a shared receiver queue,
and the listener thread. ``close()`` aborts the poll threads' in-flight requests (socket
shutdown), sends the pending acks and unregisters every sub-consumer at once, all within
one operation timeout, and joins the threads it started.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from magnetar import exceptions as exc
from magnetar._encryption.key_reader import Crypto
from magnetar._transport.failures import describe
from magnetar._transport.http import Transport
from magnetar._transport.long_poll import LongPoll
from magnetar._transport.notify import Channel, channel_for
from magnetar.message import Message

from .chunks import ChunkAssembler
from .listener import listen
from .parallel import run_parallel
from .polling import MAX_RECEIVE_MESSAGES, RECEIVE_WAIT_MS, chunks_dropped, poll_loop
from .recovery import registration_lost, resubscribe
from .sub import Sub
from .writer_schemas import WriterSchemas

if TYPE_CHECKING:
    from .acks.tracker import AckTracker
    from .multitopic import PatternWatcher
    from .retry import RetryLetters

__all__ = ["MAX_RECEIVE_MESSAGES", "RECEIVE_WAIT_MS", "ConsumerCore"]


class ConsumerCore:
    """All state the consumer's threads touch (never the public ``Consumer`` unless it has a
    message listener, which keeps it alive until closed)."""

    def __init__(self, transport: Transport, subscribe_body: dict, queue_size: int,
                 schema: Any, log: logging.Logger, *, max_pending_chunked: int = 10,
                 auto_ack_chunks: bool = False) -> None:  # fmt: skip
        self.t = transport
        self.chunk_limits = (max_pending_chunked, auto_ack_chunks)
        self.body = dict(subscribe_body)
        self.queue_size = max(queue_size, 1)
        self.schema = schema
        self.log = log
        self.writer_schemas = WriterSchemas(transport, log)  # AUTO_CONSUME's writer schemas
        self.crypto = Crypto()  # end-to-end decryption: set by subscribe / create_reader
        self.subs: list[Sub] = []
        self.cond = threading.Condition()
        self.queue: collections.deque[tuple[Sub, Message]] = collections.deque()
        self.stopping = False
        self.paused = False
        self.unsubscribing = False  # no re-subscribe while an unsubscribe is under way
        self.acks: AckTracker | None = None  # set by the Consumer
        self.retry: RetryLetters | None = None  # of a consumer with enable_retry, set by it
        # (the public Consumer, its message listener): the Consumer is handed to the
        # listener and otherwise unseen here
        self.listener: tuple[object, Callable[[Any, Message], None]] | None = None
        self.watcher: PatternWatcher | None = None  # of a regex subscription
        self.started = False
        self._listener_thread: threading.Thread | None = None
        self.closed_event = threading.Event()
        self.waiters: list[Callable[[], None]] = []  # of asyncio receives (magnetar.asyncio)
        self.channel: Channel | None = None  # where idle sub-consumers wait (``notify``)
        self.helpers: list[threading.Thread] = []  # joined on close (``partitions``)

    @property
    def ack_tracker(self) -> AckTracker:
        """The consumer's ``AckTracker``. The Consumer sets it before it starts this core, so
        it is there wherever messages are delivered, acknowledged or sought."""
        if self.acks is None:
            raise RuntimeError("the consumer core has no AckTracker yet")
        return self.acks

    # ------------------------------------------------------------------ registration

    def register(self, topic: str, path: str, subscription: str, partition: int,
                 body: dict | None = None) -> Sub:  # fmt: skip
        """POST subscribe (``body``, default the consumer's) for one topic / partition;
        return the sub-consumer."""
        from urllib.parse import quote

        sub = Sub(topic, f"/v1/{path}/subscriptions/{quote(subscription, safe='')}/consumers",
                  partition, subscription=subscription)  # fmt: skip
        sub.chunks = ChunkAssembler(*self.chunk_limits,
                                    on_drop=partial(chunks_dropped, self, sub))  # fmt: skip
        self.subscribe(sub, self.body if body is None else body)
        with self.cond:
            self.subs = [*self.subs, sub]  # copied: other threads iterate it unlocked
            if self.started and not self.stopping:
                self._start_poll(sub)
        return sub

    def subscribe(self, sub: Sub, body: dict) -> None:
        """POST subscribe ``body`` for ``sub``; sets its consumer id (raises what the service
        answers)."""
        generation = self.t.generation  # read first: a switch meanwhile subscribes again
        resp = self.t.call("POST", sub.base, json_body=body)
        if not isinstance(resp, dict) or not resp.get("consumerId"):
            raise exc.UnknownError(f"unexpected subscribe response: {resp!r}")
        sub.consumer_id, sub.generation = str(resp["consumerId"]), generation
        self.channel = channel_for(self.channel, resp.get("notifyUrl"), self.t.headers, self.log)
        if resp.get("consumerName") and not self.body.get("consumerName"):
            self.body["consumerName"] = resp["consumerName"]

    def post(self, sub: Sub, action: str, body: dict, timeout: float | None = None) -> Any:
        """POST ``body`` to ``.../consumers/{id}/{action}`` (``timeout``: seconds, default
        the operation timeout); a nack or redelivery wakes the sub-consumer's idle wait."""
        if action in ("nack", "redeliver", "seek"):
            sub.idle.wake.set()
        return self.t.call("POST", f"{sub.base}/{sub.consumer_id}/{action}", json_body=body,
                           timeout=timeout)  # fmt: skip

    def post_ack(self, sub: Sub, action: str, body: dict, timeout: float | None = None) -> Any:
        """``post`` for the ack tracker: when the service forgot the consumer, subscribe
        again and raise ``ServiceUnitNotReady`` so the request is retried as the new one.
        A request of a registration on the deployment the client switched away from is not
        sent (``NotConnected``, logged as lost): its ids name that deployment's messages."""
        with sub.lock:
            consumer_id, generation = sub.consumer_id, sub.generation
        if generation != self.t.generation:
            raise exc.NotConnected("the client switched to another deployment")
        try:
            return self.post(sub, action, body, timeout)
        except exc.PulsarException as e:
            if registration_lost(self, sub, e) and resubscribe(self, sub, consumer_id, e):
                raise exc.ServiceUnitNotReady("subscribed again; send once more") from e
            raise

    def drop_queued(self, sub: Sub) -> None:
        """Drop ``sub``'s messages from the receiver queue (the service sends them again)."""
        with self.cond:
            kept = [(s, m) for s, m in self.queue if s is not sub]
            sub.queued -= len(self.queue) - len(kept)
            self.queue.clear()
            self.queue.extend(kept)
            self.cond.notify_all()
        if self.acks is not None:
            self.acks.dropped(sub)

    def start(self) -> None:
        """Start one poll thread per sub-consumer, and the listener thread if any."""
        with self.cond:
            self.started = True
            for sub in self.subs:
                self._start_poll(sub)
        if self.listener is not None:
            self._listener_thread = threading.Thread(
                target=listen, args=(self, *self.listener), name="magnetar-listener", daemon=True
            )
            self._listener_thread.start()

    def _start_poll(self, sub: Sub) -> None:
        sub.poll = poll = LongPoll(self.t)
        sub.thread = threading.Thread(target=poll_loop, args=(self, sub, poll), daemon=True,
                                      name=f"magnetar-receive-{sub.topic}")  # fmt: skip
        sub.thread.start()

    # ------------------------------------------------------------------ application side

    def wake(self) -> None:
        """Wake threads and asyncio waiters (``magnetar.asyncio``); call with ``cond`` held."""
        self.cond.notify_all()
        for waiter in self.waiters:
            waiter()  # never blocks: it schedules a wake-up on an event loop

    def add_waiter(self, waiter: Callable[[], None]) -> None:
        """Call ``waiter()`` on each ``wake`` (now, if a message or the close is there)."""
        with self.cond:
            self.waiters = [*self.waiters, waiter]
            if self.queue or self.stopping:
                waiter()

    def remove_waiter(self, waiter: Callable[[], None]) -> None:
        with self.cond:
            self.waiters = [w for w in self.waiters if w is not waiter]

    def take(self, timeout: float | None) -> tuple[Sub, Message]:
        """Pop the next message, waiting up to ``timeout`` seconds (None: forever).

        Raises:
            Timeout: nothing arrived in time.
            AlreadyClosed: the consumer is (or got) closed.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self.cond:
            while True:
                while not self.queue:
                    if self.stopping:
                        raise exc.AlreadyClosed("the consumer is closed")
                    remaining = None if deadline is None else deadline - time.monotonic()
                    if remaining is not None and remaining <= 0:
                        raise exc.Timeout("no message arrived within the receive timeout")
                    self.cond.wait(remaining)
                if self.stopping:
                    raise exc.AlreadyClosed("the consumer is closed")
                sub, msg = self.queue.popleft()
                sub.queued -= 1
                self.cond.notify_all()
                if not self.ack_tracker.skip_if_acked(sub, msg.message_id()):
                    break
                self.log.debug("dropping %s on %s: acknowledged already", msg.message_id(),
                               sub.topic)  # fmt: skip
            sub.last_taken = msg.message_id()
        self.ack_tracker.delivered(sub, msg.message_id(), msg.redelivery_count())
        return sub, msg

    def clear_queue(self) -> None:
        """Drop locally queued messages (they are redelivered by the service)."""
        with self.cond:
            for sub, _ in self.queue:
                sub.queued -= 1
            self.queue.clear()
            self.cond.notify_all()

    def set_paused(self, paused: bool) -> None:
        """Pause or resume calls of the message listener."""
        with self.cond:
            self.paused = paused
            self.cond.notify_all()

    # ------------------------------------------------------------------ shutdown

    def stop_watcher(self) -> None:
        """Stop a regex subscription's discovery thread (no new topics from now on)."""
        if self.watcher is not None:
            self.watcher.stop()

    def close(self, *, flush_acks: bool = True, delete: bool = True) -> None:
        """Stop polling (aborting in-flight receives), send pending acks, unregister every
        sub-consumer, join threads. The requests share one operation timeout: what cannot be
        sent in it is logged (acks as lost; an unregistered consumer is dropped by the
        service after its lease, and its messages are redelivered)."""
        self.stop_watcher()
        with self.cond:
            if self.stopping:
                return
            self.stopping = True
            self.wake()
        self.closed_event.set()
        if self.channel is not None:
            self.channel.close()
        deadline = time.monotonic() + self.t.operation_timeout
        me = threading.current_thread()
        for sub in self.subs:
            if sub.poll is not None:
                sub.poll.abort()  # its receive, redelivery or heartbeat returns at once
        if self.acks is not None:  # the acks first: never behind a poll thread's request
            self.acks.stop(max(deadline - time.monotonic(), 0.0))
            if flush_acks:
                self.acks.flush(timeout=max(deadline - time.monotonic(), 0.0))
        if delete:
            run_parallel([partial(self._unregister, s, deadline) for s in self.subs], "close")
        for thread in [s.thread for s in self.subs] + self.helpers:
            if thread is not None and thread is not me:
                thread.join(max(deadline - time.monotonic(), 0.0))
        if self._listener_thread is not None and self._listener_thread is not me:
            self._listener_thread.join()
        self.listener = None
        if self.retry is not None:
            self.retry.close()

    def _unregister(self, sub: Sub, deadline: float) -> None:
        """DELETE ``sub``'s consumer if time is left before ``deadline`` (the registration
        a poll thread's re-subscribe in flight makes, once it is made)."""
        if sub.lock.acquire(timeout=max(deadline - time.monotonic(), 0.0)):
            sub.lock.release()
        left = deadline - time.monotonic()
        try:
            if left <= 0:
                raise exc.Timeout("the close ran out of time")
            self.t.call("DELETE", f"{sub.base}/{sub.consumer_id}", timeout=left)
        except exc.PulsarException as e:
            self.log.warning("closing consumer %s on %s: %s; the service drops it when its "
                             "lease runs out", sub.consumer_id, sub.topic, describe(e))  # fmt: skip
