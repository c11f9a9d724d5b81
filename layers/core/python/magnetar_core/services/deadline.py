"""The request's deadline: after it, no commit starts (its caller may have been answered 503).

API Gateway answers 503 once an integration has run 30 s, whatever the function still does;
the functions a route reaches time out after 25 s (template.yaml). A produce that is slow
for its own reasons (an S3 PUT retried, commits lost to contention) checks, before each
conditional write of the log (the commit point), that the Lambda invocation has at least a
reserve left; otherwise it gives up with ServiceUnitNotReady and commits nothing, so nothing
is stored after its client stopped waiting for the answer. The SDK retries it like any 503.

The HTTP edge sets the deadline for the request it handles (``within``); a commit outside any
request (the trigger fan-out, the ingest, tests) has none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from magnetar_core.domain.errors import ServiceUnitNotReady

COMMIT_RESERVE_MS = 2_000
"""The Lambda time a commit must still have before it starts (ms): its conditional write
and the answer take milliseconds; the rest covers a write slowed by the SDK's retries."""


@dataclass(frozen=True)
class Deadline:
    """A point on ``clock_ms`` (a monotonic clock, ms) after which no commit may start."""

    at_ms: float
    clock_ms: Callable[[], float]

    @classmethod
    def after(
        cls,
        remaining_ms: float,
        clock_ms: Callable[[], float],
        reserve_ms: float = COMMIT_RESERVE_MS,
    ) -> Deadline:
        """The deadline of an invocation with ``remaining_ms`` left now, ``reserve_ms`` early."""
        return cls(clock_ms() + remaining_ms - reserve_ms, clock_ms)

    def passed(self) -> bool:
        return self.clock_ms() >= self.at_ms


_current: ContextVar[Deadline | None] = ContextVar("magnetar_deadline", default=None)


@contextmanager
def within(deadline: Deadline | None) -> Iterator[None]:
    """Within the block (this thread / context only), commits check ``deadline``."""
    token = _current.set(deadline)
    try:
        yield
    finally:
        _current.reset(token)


def check_before_commit(what: str) -> None:
    """Raise ServiceUnitNotReady (nothing committed) if the current request's deadline passed."""
    deadline = _current.get()
    if deadline is not None and deadline.passed():
        raise ServiceUnitNotReady(
            f"Not committed to {what}: the request ran out of time before its commit "
            "(the service was slow); nothing was stored, retry"
        )
