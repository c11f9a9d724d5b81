"""Consumer-side reassembly of chunked messages (Pulsar's chunking).

Chunks are grouped by (producer name, uuid), so chunks of several producers may interleave.
A message is handed out when its last chunk arrives, chunk ids 0..total-1 in order: payload
the concatenated chunk payloads, metadata the first chunk's, id a ``ChunkMessageId`` (the
last chunk's position, carrying every chunk's id so an ack acknowledges them all).

Bounds, as Pulsar's consumer: at most ``max_pending`` incomplete messages (when a new one
would exceed it, the oldest is dropped), and an incomplete message older than
``CHUNK_EXPIRY_SECONDS`` is dropped. A dropped message's chunks are acknowledged when
``auto_ack`` (``auto_ack_oldest_chunked_message_on_queue_full``), else left unacknowledged and
handed to ``on_drop`` (the ack timeout, when set, brings them back). A chunk out of order
(a gap) drops its message the same way; a repeated chunk (a redelivery) is ignored.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from magnetar.message_id import ChunkMessageId, MessageId

__all__ = ["CHUNK_EXPIRY_SECONDS", "ChunkAssembler"]

CHUNK_EXPIRY_SECONDS = 60.0  # Pulsar's expireTimeOfIncompleteChunkedMessage default (60 s)


@dataclass
class _Pending:
    first: Any  # the first chunk's EntryMessage
    total: int
    started: float
    parts: list[bytes] = field(default_factory=list)
    ids: list[MessageId] = field(default_factory=list)


class ChunkAssembler:
    """Incomplete chunked messages of one sub-consumer (used by its poll thread only)."""

    def __init__(self, max_pending: int, auto_ack: bool,
                 on_drop: Callable[[list[MessageId], bool], None],
                 expiry: float | None = None) -> None:  # fmt: skip
        self.max_pending = max(max_pending, 1)
        self.auto_ack = auto_ack
        self.on_drop = on_drop  # (chunk ids, acknowledge?)
        self.expiry = CHUNK_EXPIRY_SECONDS if expiry is None else expiry
        self.pending: OrderedDict[tuple[str, str], _Pending] = OrderedDict()

    def add(
        self, producer: str, msg: Any, msg_id: MessageId
    ) -> tuple[Any, bytes, MessageId] | None:
        """Take one chunk; return ``(first chunk, whole payload, ChunkMessageId)`` when it
        completes a message, else None."""
        self.expire()
        chunk = msg.chunk
        key = (producer, chunk.uuid)
        ctx = self.pending.get(key)
        if ctx is not None and chunk.chunk_id < len(ctx.parts):
            return None  # a repeated chunk (redelivered): already have it
        if chunk.chunk_id == 0:
            if len(self.pending) >= self.max_pending:
                self._drop(next(iter(self.pending)))
            ctx = self.pending[key] = _Pending(msg, chunk.total_chunks, time.monotonic())
        elif ctx is None or chunk.chunk_id != len(ctx.parts):
            if ctx is not None:
                self._drop(key)
            self.on_drop([msg_id], self.auto_ack)  # a gap: its message cannot be rebuilt
            return None
        ctx.parts.append(bytes(msg.payload))
        ctx.ids.append(msg_id)
        if len(ctx.parts) < ctx.total:
            return None
        del self.pending[key]
        return ctx.first, b"".join(ctx.parts), ChunkMessageId(ctx.ids)

    def wait_ms(self, longest: int) -> int:
        """How long a receive may wait so the oldest incomplete message expires on time."""
        if not self.pending:
            return longest
        oldest = min(c.started for c in self.pending.values())
        left = oldest + self.expiry - time.monotonic()
        return max(0, min(longest, int(left * 1000) + 1))

    def expire(self) -> None:
        """Drop incomplete messages older than the expiry."""
        limit = time.monotonic() - self.expiry
        for key in [k for k, c in self.pending.items() if c.started <= limit]:
            self._drop(key)

    def _drop(self, key: tuple[str, str]) -> None:
        ctx = self.pending.pop(key)
        self.on_drop(ctx.ids, self.auto_ack)
