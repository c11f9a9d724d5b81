"""The optimistic read-modify-write every versioned record goes through.

Read the record (strongly consistent), change it purely, write it conditionally on what was
read; when the write loses its race (``ConditionFailed``: someone wrote first) sleep a
jittered backoff (``runtime.backoff``) and start over from a fresh read, at most
``max_attempts`` times. Running out of attempts is not an exception here but a typed
outcome, ``Conflict``: each caller says what that means to its client (mostly
ServiceUnitNotReady, "retry").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.runtime import Runtime

S = TypeVar("S")
"""What ``read`` returns: the record as read (or None when a caller allows it missing)."""
W = TypeVar("W")
"""What ``write`` takes: the changed record (the same object, or a new one)."""
R = TypeVar("R")
"""What the update returns to its caller."""


@dataclass(frozen=True)
class Conflict:
    """Every one of ``attempts`` conditional writes lost its race to another writer."""

    attempts: int


def update(
    read: Callable[[], S],
    change: Callable[[S], tuple[R, W | None]],
    write: Callable[[W], object],
    runtime: Runtime,
    max_attempts: int,
) -> R | Conflict:
    """Run ``change`` on what ``read`` returns and ``write`` its result, until a write wins.

    ``change(record)`` returns ``(result, to_write)``: ``to_write`` None means nothing to
    write, and ``result`` is returned at once; otherwise ``to_write`` is written and, when
    the write wins, ``result`` is returned. A lost write (``write`` raised ConditionFailed)
    sleeps ``runtime.backoff.delay_ms(attempt)`` ms and starts over with a fresh read.
    Returns ``Conflict(max_attempts)`` when every attempt lost; whatever ``read``,
    ``change`` or ``write`` raise otherwise propagates.
    """
    for attempt in range(max_attempts):
        result, to_write = change(read())
        if to_write is None:
            return result
        try:
            write(to_write)
        except ConditionFailed:
            runtime.sleep_ms(runtime.backoff.delay_ms(attempt))
            continue
        return result
    return Conflict(max_attempts)


def changed(record: W, result: R, dirty: bool) -> tuple[R, W | None]:
    """The ``change`` outcome of a change that mutated ``record`` in place: write it when
    ``dirty``, else nothing."""
    return result, (record if dirty else None)
