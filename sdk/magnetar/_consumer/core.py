"""``Core``: what the consumer's parts (its receive loop, recovery, entries, decryption
failures, seek, regex subscriptions, the message listener) see of the ``ConsumerCore`` that drives them
(``receiver``). The parts sit below the receiver and take it as this protocol, so none of
them imports it."""

from __future__ import annotations

import collections
import logging
import threading
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from magnetar._encryption.key_reader import Crypto
    from magnetar._transport.http import Transport
    from magnetar._transport.notify import Channel
    from magnetar.message import Message

    from .acks.tracker import AckTracker
    from .sub import Sub
    from .writer_schemas import WriterSchemas

__all__ = ["Core"]


class TopicListing(Protocol):
    """A regex subscription's view of its namespace (``multitopic.PatternWatcher``)."""

    def listed(self, topic: str) -> bool: ...


class Core(Protocol):
    """A consumer's (or reader's) shared state and the operations its parts call."""

    t: Transport
    body: dict  # the subscribe body, sent again on re-subscribe
    queue_size: int
    schema: Any
    log: logging.Logger
    writer_schemas: WriterSchemas
    crypto: Crypto
    subs: list[Sub]
    cond: threading.Condition
    queue: collections.deque[tuple[Sub, Message]]
    stopping: bool
    paused: bool  # the message listener waits
    unsubscribing: bool
    acks: AckTracker | None
    closed_event: threading.Event
    channel: Channel | None
    helpers: list[threading.Thread]  # joined on close (``partitions``)

    @property
    def watcher(self) -> TopicListing | None: ...  # of a regex subscription

    @property
    def ack_tracker(self) -> AckTracker: ...

    def register(
        self, topic: str, path: str, subscription: str, partition: int, body: dict | None = None
    ) -> Sub: ...

    def subscribe(self, sub: Sub, body: dict) -> None: ...

    def post(self, sub: Sub, action: str, body: dict, timeout: float | None = None) -> Any: ...

    def drop_queued(self, sub: Sub) -> None: ...

    def wake(self) -> None: ...

    def take(self, timeout: float | None) -> tuple[Sub, Message]: ...

    def clear_queue(self) -> None: ...
