"""Produce several entries in one request (``application/vnd.magnetar.entries``).

The body's frames (``magnetar_wire.frames``) are committed one by one, in order, each by
``Producer.publish`` as a request of its own would commit it, except that the entry ids are
taken for the whole request at the first commit (one sequencer update: a ``Reservation``;
ids left over after a failure or duplicates are settled as holes): consecutive positions
on an unpartitioned topic or a partition, each entry its own message ids (a delayed message
stays an unbatched entry of its own), deduplication per entry. The first failure stops the
request: the entries before it stay committed and are reported, that entry's error is
reported, the entries after it are reported as not attempted (the SDK resends those, in
order). When the very first entry fails nothing was stored and the request fails with that
entry's error, as a single-entry produce would.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from magnetar_core.domain.errors import InvalidMessage, MagnetarError, ServiceUnitNotReady
from magnetar_core.services.commit import Reservation
from magnetar_core.services.entries import PublishResult
from magnetar_core.services.produce import Producer
from magnetar_wire.frames import FrameError, decode_frames
from magnetar_wire.names import TopicName
from magnetar_wire.routing import JAVA_STRING_HASH

logger = logging.getLogger(__name__)

DEFAULT_BUDGET_MS = 10_000
"""How long one request keeps committing before it reports the rest not attempted (ms):
well inside API Gateway's 30 s integration timeout and the function's timeout."""


@dataclass(frozen=True)
class EntryFailure:
    """An entry that was not committed: Pulsar's error name, the HTTP status a produce of
    it alone would have got, a message, whether it was attempted (False: an earlier entry
    failed or the time budget ran out) and how long to wait before resending (throttled)."""

    code: str
    status: int
    message: str
    attempted: bool
    retry_after_ms: int | None = None


EntryResult = PublishResult | EntryFailure


@dataclass(frozen=True)
class ManyResult:
    """Each entry's outcome, in the body's order: committed ones first, then at most one
    attempted failure, then the ones not attempted."""

    results: tuple[EntryResult, ...]

    @property
    def committed(self) -> int:
        """How many entries were committed (or found to be duplicates)."""
        return sum(isinstance(r, PublishResult) for r in self.results)


class ProduceMany:
    """Commits the entries of one multi-entry request through ``Producer.publish``."""

    def __init__(
        self, producer: Producer, now_ms: Callable[[], int], budget_ms: int = DEFAULT_BUDGET_MS
    ) -> None:
        self._producer = producer
        self._now_ms = now_ms
        self._budget_ms = budget_ms

    def publish(
        self,
        topic: TopicName,
        body: bytes,
        *,
        epoch: int | None = None,
        hashing_scheme: str = JAVA_STRING_HASH,
    ) -> ManyResult:
        """Commit the framed entries of ``body`` to ``topic`` in order (see the module).

        Raises:
            InvalidMessage: the body is empty, malformed, over ``MAX_REQUEST_BYTES`` or holds
                more than ``MAX_ENTRIES_PER_REQUEST`` entries (nothing stored).
            MagnetarError: what ``Producer.publish`` raises for the first entry (nothing
                stored); a later entry's error is reported in the result instead.
        """
        try:
            entries = decode_frames(body)
        except FrameError as e:
            raise InvalidMessage(f"Malformed multi-entry body: {e}") from None
        started_ms = self._now_ms()
        results: list[EntryResult] = []
        # one sequencer update for the request's entries, not one each (a partitioned
        # topic's base name routes entry by entry: no reservation there)
        ids = Reservation(wanted=0 if self._producer.routes(topic) else 1)
        try:
            for index, entry in enumerate(entries):
                if index and self._now_ms() - started_ms >= self._budget_ms:
                    results += _not_attempted(len(entries) - index, _budget_spent(self._budget_ms))
                    break
                if ids.wanted:  # 0 once the entries went to several partitions
                    ids.wanted = len(entries) - index
                try:
                    results.append(
                        self._producer.publish(
                            topic,
                            entry,
                            epoch=epoch,
                            hashing_scheme=hashing_scheme,
                            reservation=ids,
                        )
                    )
                except Exception as e:  # after commits: report them (a 500 would resend them)
                    if not results:
                        raise
                    failure = _failure(e, index, len(entries))
                    why = f"entry {index} before it failed with {failure.code}; resend it in order"
                    results += [failure, *_not_attempted(len(entries) - index - 1, why)]
                    break
        finally:
            self._producer.release(ids)  # ids left over (a failure, duplicates): holes
        return ManyResult(tuple(results))


_FAULT = "Internal error while committing this entry; the service log has the details"


def _failure(error: Exception, index: int, count: int) -> EntryFailure:
    """What entry ``index`` (of ``count``) failed with: a domain error as its handler would
    answer it alone; anything else (logged, as every fault) an UnknownError (500)."""
    retry = getattr(error, "retry_after_ms", None)
    if isinstance(error, MagnetarError) and (error.status < 500 or retry is not None):
        return EntryFailure(error.code, error.status, error.message, True, retry)
    logger.error("multi-entry produce: entry %d of %d failed", index, count, exc_info=error)
    if isinstance(error, MagnetarError):
        return EntryFailure(error.code, error.status, error.message, True)
    return EntryFailure("UnknownError", 500, _FAULT, True)


def _budget_spent(budget_ms: int) -> str:
    return f"the request used its {budget_ms} ms commit budget; resend the rest in order"


def _not_attempted(count: int, why: str) -> list[EntryResult]:
    error = ServiceUnitNotReady(f"Not attempted: {why}")
    return [EntryFailure(error.code, error.status, error.message, False)] * count
