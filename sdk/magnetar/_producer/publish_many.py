"""Committing several entries in one request (``application/vnd.magnetar.entries``).

``fits_request`` says how many of the next entries one request may carry (the service's
limits: ``MAX_ENTRIES_PER_REQUEST`` frames, ``MAX_REQUEST_BYTES`` of body; an entry above
``INLINE_MAX_BYTES`` goes alone, by upload). ``post_entries`` sends one such request and reads
each entry's outcome; ``commit_entries`` retries the entries the service did not store, in
order, until each one's deadline, as ``commit_entry`` does for one.

The service commits the entries in order and stops at the first failure (docs/http-api/producing.md,
"Several entries in one request"): the answer lists the committed entries' results, then
that entry's error; if the very first entry failed, the request fails with its error.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from magnetar import exceptions as exc
from magnetar_wire.frames import (
    ENTRIES_CONTENT_TYPE,
    MAX_ENTRIES_PER_REQUEST,
    MAX_REQUEST_BYTES,
    encode_frames,
    framed_size,
)

from .publish import HELD_OR_RETRYABLE, INLINE_MAX_BYTES, post_entry, retry_pause

if TYPE_CHECKING:
    from magnetar._transport.http import Transport

    from .registration import Lease

__all__ = ["commit_entries", "fits_request", "post_entries"]


def fits_request(sizes: Sequence[int]) -> int:
    """How many of the entries of ``sizes`` (bytes each, in order) the next request carries:
    at least one; more only while each is at most ``INLINE_MAX_BYTES`` and together they fit
    ``MAX_ENTRIES_PER_REQUEST`` and ``MAX_REQUEST_BYTES`` (frame headers included)."""
    total = 0
    for count, size in enumerate(sizes[:MAX_ENTRIES_PER_REQUEST]):
        total += framed_size(size)
        if size > INLINE_MAX_BYTES or total > MAX_REQUEST_BYTES:
            return max(count, 1)
    return max(min(len(sizes), MAX_ENTRIES_PER_REQUEST), 1)


def post_entries(
    t: Transport, base: str, entries: Sequence[bytes], epoch: int | None, timeout: float | None
) -> tuple[list[Any], exc.PulsarException | None]:
    """Commit ``entries`` (two or more, within the limits of ``fits_request``) in order to the
    topic or partition at ``base``: returns the produce results of the committed ones, and
    the error of the first one not committed (None when all were).

    Raises:
        PulsarException: the request failed as a whole (the first entry's error, nothing
            stored; or ``Timeout`` / ``ConnectError`` / a 5xx: unknown what was stored).
    """
    query = f"?epoch={epoch}" if epoch is not None else ""
    resp = t.call("POST", f"{base}/messages{query}", data=encode_frames(entries),
                  content_type=ENTRIES_CONTENT_TYPE, timeout=timeout)  # fmt: skip
    results = resp.get("results") if isinstance(resp, dict) else None
    if not isinstance(results, list) or len(results) != len(entries):
        raise exc.UnknownError(f"unexpected multi-entry produce response: {resp!r:.300}")
    done: list[Any] = []
    for result in results:
        if not isinstance(result, dict):
            raise exc.UnknownError(f"unexpected multi-entry produce result: {result!r:.300}")
        if "error" in result:
            message, retry_ms = str(result.get("message", "")), result.get("retryAfterMs")
            return done, exc.exception_for(result["error"], message, retry_ms)
        done.append(result)
    return done, None


def commit_entries(
    t: Transport,
    lease: Lease,
    entries: Sequence[bytes],
    deadlines: Sequence[float | None],
    aborted: Callable[[], bool],
    before_attempt: Callable[[], None] | None = None,
) -> tuple[list[Any], exc.PulsarException | None]:
    """Commit ``entries`` in order (one request when there is one entry or they fit one
    multi-entry request), resending what the service did not store while it says that is
    retryable, with the same backoff and deadlines as ``commit_entry`` (``deadlines[i]``:
    ``time.monotonic()`` by which entry ``i`` must be stored, None: no limit). Returns the
    produce results of the first entries committed and the error that stopped the next one
    (None when all were committed): ``Timeout`` once its deadline passed (or the
    ``ProducerBlockedQuotaExceededError`` that held it to the end), a non-retryable error of
    the service, or the retryable one after ``aborted()``."""
    done: list[Any] = []
    pause = 0.02
    held: exc.ProducerBlockedQuotaExceededError | None = None
    while len(done) < len(entries):
        deadline = deadlines[len(done)]
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            if held is not None:
                return done, held
            return done, exc.Timeout("the message was not stored within send_timeout_millis")
        rest = entries[len(done) :]
        try:
            if before_attempt is not None:
                before_attempt()
            if len(rest) == 1:
                done.append(post_entry(t, lease.base, rest[0], lease.epoch, remaining))
                continue
            got, failure = post_entries(t, lease.base, rest, lease.epoch, remaining)
            done += got
            if got:
                pause, held = 0.02, None  # progress: the next wait starts short again
            if failure is not None:
                raise failure
        except HELD_OR_RETRYABLE as e:
            if aborted():
                return done, e
            held = e if isinstance(e, exc.ProducerBlockedQuotaExceededError) else None
            deadline = deadlines[len(done)]
            time.sleep(
                retry_pause(e, pause, None if deadline is None else deadline - time.monotonic())
            )
            pause = min(pause * 2, 1.0)
        except exc.PulsarException as e:
            return done, e
    return done, None
