"""The message listener's thread (``message_listener`` / ``reader_listener``): it hands each
message of the receiver queue to ``fn(consumer, message)`` in order, waits while the
consumer is paused (``pause_message_listener``), and ends when the consumer closes. A
listener that raises is logged and the next message follows, as in pulsar-client."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from magnetar import exceptions as exc

if TYPE_CHECKING:
    from magnetar.message import Message

    from .core import Core

__all__ = ["listen"]


def listen(core: Core, consumer: object, fn: Callable[[Any, Message], None]) -> None:
    """The thread's loop: ``consumer`` is the public Consumer handed to ``fn``."""
    while True:
        with core.cond:
            while not core.stopping and (core.paused or not core.queue):
                core.cond.wait()
            if core.stopping:
                return
        try:
            _, msg = core.take(0)
        except (exc.Timeout, exc.AlreadyClosed):
            continue
        try:
            fn(consumer, msg)
        except Exception:
            core.log.exception("message listener raised")
