"""One sub-consumer: the consumer registered on one topic or partition, with its poll."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from magnetar._transport.long_poll import LongPoll
from magnetar._transport.notify import IdleState
from magnetar.message_id import MessageId

from .chunks import ChunkAssembler

__all__ = ["Sub"]


@dataclass(eq=False)
class Sub:
    """One registered consumer on one topic or partition."""

    topic: str
    base: str  # /v1/.../subscriptions/{sub}/consumers
    partition: int
    consumer_id: str = ""
    queued: int = 0  # messages in the shared queue, plus reserved space of the open poll
    poll: LongPoll | None = None
    thread: threading.Thread | None = None
    connected: bool = True
    extra: dict = field(default_factory=dict)
    # set by ConsumerCore.register right after construction (its on_drop closes over the Sub)
    chunks: ChunkAssembler = field(init=False, repr=False)
    stopped: bool = False  # removed from a regex subscription
    last_taken: MessageId | None = None  # the last message handed to the application
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)  # (re)subscribing
    lost_receive: bool = False  # a receive may have been served unseen: redeliver first
    generation: int = 0  # the Transport.generation (deployment) of its registration
    subscription: str = ""  # its name (set by ConsumerCore.register)
    idle: IdleState = field(default_factory=IdleState)  # waiting on the channel (``notify``)
