"""What the asyncio API shares: its ``PulsarException``, the thread-to-loop bridges and the
client's executor.

Three ways a coroutine waits, in order of preference:

- a callback of the SDK (``Producer.send_async``) resolves a future through
  ``loop.call_soon_threadsafe`` (``callback_future``): no thread of its own;
- a consumer's receiver queue wakes the loop when a message lands (``next_message``, through
  ``ConsumerCore.add_waiter``): no thread of its own;
- a blocking HTTP call (create, subscribe, seek, close, ...) runs on the client's executor
  (``Executor.run``): ONE thread pool per client, at most ``MAX_WORKERS`` threads, created on
  demand and joined by ``Client.close``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from .. import exceptions as exc
from .._enums import Result

if TYPE_CHECKING:
    from magnetar._consumer.receiver import ConsumerCore

    from ..message import Message

__all__ = ["MAX_WORKERS", "Executor", "PulsarException", "callback_future", "next_message"]

MAX_WORKERS = 4  # threads of a client's executor (blocking calls only)

T = TypeVar("T")


class PulsarException(Exception):  # noqa: N818 - pulsar-client's name
    """The error of an asyncio call: ``error()`` is the ``Result``, as in pulsar-client's
    ``pulsar.asyncio.PulsarException`` (not a subclass of ``pulsar.PulsarException``)."""

    def __init__(self, result: Result, msg: str | None = None) -> None:
        super().__init__(result, msg)
        self._result = result
        self._msg = msg

    def error(self) -> Result:
        """The ``Result`` of the failed operation."""
        return self._result

    def __str__(self) -> str:
        if self._msg:
            return f"{self._result.value} {self._result.name}: {self._msg}"
        return f"{self._result.value} {self._result.name}"


def converted(e: exc.PulsarException) -> PulsarException:
    """The asyncio ``PulsarException`` of an SDK error (same ``Result``, same message)."""
    return PulsarException(e.result(), str(e) or None)


def _set_future(future: asyncio.Future, result: Result, value: Any) -> None:
    """Settle ``future`` from any thread, as pulsar-client's ``pulsar.asyncio._set_future``:
    ``value`` on ``Result.Ok``, else ``PulsarException(result)``; on the future's loop, and
    nothing when the future is already done or cancelled (or its loop closed)."""

    def settle() -> None:
        if future.done():
            return
        if result == Result.Ok:
            future.set_result(value)
        else:
            future.set_exception(PulsarException(result))

    with contextlib.suppress(RuntimeError):  # a closed loop: nobody awaits the future
        future.get_loop().call_soon_threadsafe(settle)


def callback_future(loop: asyncio.AbstractEventLoop) -> tuple[asyncio.Future, Callable]:
    """A future of ``loop`` and a ``callback(result, value)`` that any thread may call to
    settle it (``_set_future``)."""
    future: asyncio.Future = loop.create_future()

    def callback(result: Result, value: Any) -> None:
        _set_future(future, result, value)

    return future, callback


async def next_message(core: ConsumerCore, timeout_ms: int | None = None) -> Message:
    """The next message of the receiver queue of ``core``, waiting on the event loop (no
    thread) up to ``timeout_ms`` (None: forever).

    Raises PulsarException: ``Timeout``, ``AlreadyClosed`` (the consumer closed).
    """
    loop = asyncio.get_running_loop()
    deadline = None if timeout_ms is None else loop.time() + timeout_ms / 1000
    while True:
        try:
            return core.take(0)[1]
        except exc.Timeout:
            pass
        except exc.PulsarException as e:
            raise converted(e) from None
        left = None if deadline is None else deadline - loop.time()
        if left is not None and left <= 0:
            raise PulsarException(Result.Timeout, "no message arrived within the timeout")
        woken = asyncio.Event()

        def waiter(woken: asyncio.Event = woken) -> None:
            with contextlib.suppress(RuntimeError):  # a closed loop
                loop.call_soon_threadsafe(woken.set)

        core.add_waiter(waiter)
        try:
            await asyncio.wait_for(woken.wait(), left)
        except TimeoutError:
            pass  # one last look at the queue, then Timeout
        finally:
            core.remove_waiter(waiter)


class Executor:
    """The client's pool for blocking SDK calls (see the module)."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(MAX_WORKERS, thread_name_prefix="magnetar-asyncio")
        self.closed = False

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` on the pool; its SDK errors become ``PulsarException``.

        Raises PulsarException(AlreadyClosed) once the client is closed.
        """
        if self.closed:
            raise PulsarException(Result.AlreadyClosed, "the client is closed")
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._pool, functools.partial(fn, *args, **kwargs))
        except exc.PulsarException as e:
            raise converted(e) from None

    def submit(self, fn: Callable[[], Any], log: Any) -> None:
        """Run ``fn()`` on the pool without waiting (not once closed); an error is logged
        with ``log``."""
        if self.closed:
            return

        def run() -> None:
            try:
                fn()
            except Exception:
                log.exception("a background asyncio call failed")

        self._pool.submit(run)

    def shutdown(self, wait: bool) -> None:
        """Stop the pool (``wait``: join its threads); ``run`` refuses work from now on."""
        self.closed = True
        self._pool.shutdown(wait=wait)
