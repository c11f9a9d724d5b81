"""The sender's commits: every batch that is ready, coalesced into multi-entry requests.

While one request is in flight, the producer keeps queueing; the sender then takes every
ready batch (``Batch``: a batch, a single message, or a chunked message) at once. Each
becomes a ``Unit``: its items and the entries that carry them (built on the sender thread).
The units of one partition are committed in send order, as many entries per request as the
service takes (``publish_many``); each unit then completes from its entries' results. A
unit whose entry failed fails as a whole (its later chunks are not sent); the units after
it are sent on, in order, as single-entry requests would have been. Results are handed back
in send order, so callbacks keep pulsar-client's order.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from magnetar import exceptions as exc
from magnetar._enums import Result
from magnetar.message_id import ChunkMessageId, MessageId
from magnetar_wire import EntryFormatError, EntryMessage
from magnetar_wire.frames import MAX_ENTRIES_PER_REQUEST, MAX_REQUEST_BYTES

from .batches import Batch, Pending
from .publish import entry_message_ids
from .publish_many import commit_entries, fits_request

if TYPE_CHECKING:
    from magnetar._transport.http import Transport

    from .registration import Lease

__all__ = ["Outcome", "Unit", "commit_units", "plan_units", "take_ready"]

# what one message's send came to: the arguments of its Completion
Outcome = tuple[Result, "MessageId | None", "exc.PulsarException | None"]


def take_ready(outbox: collections.deque[Batch]) -> list[Batch]:
    """The oldest batches of a non-empty ``outbox``, taken off it: at least one, and up to
    about one request's worth (``MAX_ENTRIES_PER_REQUEST`` batches, ``MAX_REQUEST_BYTES`` of
    payload)."""
    taken, size = [outbox.popleft()], 0
    while (outbox and len(taken) < MAX_ENTRIES_PER_REQUEST
           and (size := size + sum(i.size for i in taken[-1].items))
           < MAX_REQUEST_BYTES):  # fmt: skip
        taken.append(outbox.popleft())
    return taken


@dataclass
class Unit:
    """One batch (or message, or chunked message) on its way: its items, the entries that
    carry them, the produce results of those committed so far, and its outcome once known
    (a failure, or the messages' ids after ``finish``)."""

    partition: int
    batched: bool
    items: list[Pending]
    entries: list[bytes] = field(default_factory=list)
    responses: list[Any] = field(default_factory=list)
    outcomes: list[Outcome] | None = None
    sequence_id: int | None = None
    """The highest sequence id of its messages, once stored."""

    @property
    def deadline(self) -> float | None:
        """The earliest send deadline of its items (``time.monotonic()``), None: none."""
        deadlines = [i.deadline for i in self.items if i.deadline is not None]
        return min(deadlines) if deadlines else None

    def fail(self, error: exc.PulsarException) -> None:
        """Every message of the unit completes with ``error``."""
        self.outcomes = [(error.result(), None, error)] * len(self.items)

    def finish(self) -> None:
        """Complete the messages from the entries' produce results (when not failed);
        a malformed result fails the unit with UnknownError."""
        if self.outcomes is not None:
            return
        try:
            ids: list[MessageId] = []
            for resp in self.responses:
                ids += entry_message_ids(resp, len(self.items), self.batched)
        except exc.UnknownError as e:
            self.fail(e)
            return
        if len(self.entries) > 1:
            ids = [ChunkMessageId(ids)]
        self.outcomes = [(Result.Ok, i, None) for i in ids]
        self.sequence_id = max(i.fields["sequence_id"] for i in self.items)


def plan_units(
    batch: Batch, build: Callable[[list[EntryMessage], bool], list[bytes]]
) -> list[Unit]:
    """The units that carry ``batch``: one, whose entries ``build(messages, batched)`` made
    (or which failed with what it raised: fenced, too big, not encodable: InvalidMessage),
    or, for a batch whose metadata pushes it over the maximum message size, those of its two
    halves (the payloads fit the limit, payloads and metadata do not)."""
    unit = Unit(batch.partition, batch.batched, batch.items)
    try:
        unit.entries = build([EntryMessage(**p.fields) for p in batch.items], batch.batched)
    except exc.MessageTooBig as e:
        if len(batch.items) < 2:
            unit.fail(e)
            return [unit]
        half = len(batch.items) // 2
        return [u for part in (batch.items[:half], batch.items[half:])
                for u in plan_units(Batch(batch.partition, True, part), build)]  # fmt: skip
    except exc.PulsarException as e:
        unit.fail(e)
    except EntryFormatError as e:
        unit.fail(exc.InvalidMessage(f"the message cannot be encoded: {e}"))
    return [unit]


def commit_units(
    t: Transport,
    lease: Lease,
    units: list[Unit],
    *,
    aborted: Callable[[], bool],
    fenced: Callable[[], exc.ProducerFenced | None],
    on_fenced: Callable[[exc.ProducerFenced], None],
    before_attempt: Callable[[], None] | None = None,
) -> None:
    """Commit the entries of ``units`` (of one partition, in send order; failed ones are
    skipped) to ``lease``, as few requests as the limits allow; each unit ends failed or
    with all its entries' results. ``fenced()`` is checked before each request (a fenced
    producer sends nothing more); ``on_fenced`` is told of a ``ProducerFenced`` answer."""
    queue = [(u, entry) for u in units if u.outcomes is None for entry in u.entries]
    position = 0
    while position < len(queue):
        unit = queue[position][0]
        if unit.outcomes is not None:  # an earlier chunk of it failed
            position += 1
            continue
        error = fenced()
        if error is not None:
            unit.fail(exc.ProducerFenced(f"the producer was fenced: {error}"))
            position += 1
            continue
        count = fits_request([len(entry) for _, entry in queue[position:]])
        taken = queue[position : position + count]
        done, failure = commit_entries(
            t, lease, [entry for _, entry in taken], [u.deadline for u, _ in taken],
            aborted, before_attempt,
        )  # fmt: skip
        for (owner, _), resp in zip(taken, done, strict=False):
            owner.responses.append(resp)
        position += len(done)
        if failure is not None:
            if isinstance(failure, exc.ProducerFenced):
                on_fenced(failure)
            queue[position][0].fail(failure)
            position += 1
