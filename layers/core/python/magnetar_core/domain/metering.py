"""What one request did, counted where it happens: messages and bytes in and out, acks,
nacks, dead letter moves, timer starts.

Services call ``count(name, value)`` at the one place each thing happens (the producer's
commit, the fetch of delivered entries, the cursor changes, the dead letter publish, a
timer start); the HTTP edge (``magnetar_core.api.metrics``) collects them per invocation
with ``counting(sink)`` and writes them as CloudWatch metrics. Outside ``counting`` (a job,
the local trigger driver, a test) ``count`` does nothing. Pure: a context variable, no I/O.
The sink is per thread / task (a ``ContextVar``): a count made on a worker thread of a
pool is not seen, so count in the calling thread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar

MESSAGES_IN = "MessagesIn"
"""Messages committed by a produce (a batch counts its messages; duplicates none)."""
BYTES_IN = "BytesIn"
"""Bytes of the entries committed (as stored: compressed, with their metadata)."""
MESSAGES_OUT = "MessagesOut"
"""Messages dispatched to a consumer by a receive (redeliveries included)."""
BYTES_OUT = "BytesOut"
"""Bytes of the entries dispatched (whole entries, inline or by URL)."""
ACKS = "Acks"
"""Acknowledged positions that changed a cursor (what an ack request returns)."""
NACKS = "Nacks"
"""Entries sent back for redelivery by nacks and redeliver-unacknowledged."""
DEAD_LETTER_MOVES = "DeadLetterMoves"
"""Entries published to a dead letter topic."""
TIMER_STARTS = "TimerStarts"
"""Delay timer executions started (Step Functions; one per new due bucket)."""
FUNCTION_PROCESSED = "FunctionMessagesProcessed"
"""Messages a Pulsar Function processed successfully (its ``process`` returned)."""
FUNCTION_USER_EXCEPTIONS = "FunctionUserExceptions"
"""Messages on which a Pulsar Function's ``process`` raised."""
FUNCTION_SYSTEM_EXCEPTIONS = "FunctionSystemExceptions"
"""A Pulsar Function's batches that could not run (its code does not load, its process
died or timed out)."""

BYTE_COUNTS = frozenset({BYTES_IN, BYTES_OUT})
"""The counts whose unit is bytes; every other one counts things."""

Sink = Callable[[str, float], None]
_sink: ContextVar[Sink | None] = ContextVar("magnetar_metering_sink", default=None)


def count(name: str, value: float = 1) -> None:
    """Add ``value`` to count ``name`` of the current request (nothing outside
    ``counting``, nothing for 0)."""
    sink = _sink.get()
    if sink is not None and value:
        sink(name, value)


def count_in(messages: int, entry_bytes: int) -> None:
    """Count a committed entry: its ``messages`` and its size in bytes."""
    count(MESSAGES_IN, messages)
    count(BYTES_IN, entry_bytes)


def count_out(messages: int, entry_bytes: int) -> None:
    """Count dispatched entries: their ``messages`` and their size in bytes."""
    count(MESSAGES_OUT, messages)
    count(BYTES_OUT, entry_bytes)


@contextmanager
def counting(sink: Sink) -> Iterator[None]:
    """Within the block (this thread / context only), ``count`` calls ``sink(name, value)``."""
    token = _sink.set(sink)
    try:
        yield
    finally:
        _sink.reset(token)


def uncounted() -> AbstractContextManager[None]:
    """Within the block, ``count`` counts nothing (the dead letter publish: its messages are
    ``DEAD_LETTER_MOVES``, not the request's ``MESSAGES_IN``)."""
    return counting(_ignore)


def _ignore(name: str, value: float) -> None:
    pass
