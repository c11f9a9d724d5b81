"""Which messages a trigger sends next, pure: batches, concurrency, order, batching window.

A delivery step holds the messages it received (``pending``, in the order the subscription
handed them out) and sends them as batches of at most ``batchSize``, up to
``maximumConcurrency`` batches in flight at once. Each message belongs to an ordering
*group* (``DispatchPolicy.group_of``):

- Shared: none; any message may go in any batch, and batches overtake each other.
- Key_Shared: the sticky key hash of its ordering key or key (keyless messages share one
  group), as the subscription's Key_Shared selector sees it.
- Failover: its partition.

A group held by a batch in flight (or blocked: a message of it failed or waits for a retry)
is *busy*: none of its messages goes out until it is free again, and the next batch takes
the earliest pending messages of free groups only, so a group's messages go out in order
and never in two batches at once.

Bisect on error (ordered subscriptions): a batch that failed as a whole is split in halves
(``halves``); the first half goes again first, and the second half's messages of a group
that failed in the first are held back (``without_groups``), so a group's later message is
never sent before an earlier one succeeded or went for retry (then dead-lettered).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from magnetar_core.domain.keyshared.hashing import sticky_key_hash

T = TypeVar("T")
ORDERED = ("Key_Shared", "Failover")


@dataclass(frozen=True)
class DispatchPolicy:
    """A trigger's rules for forming and starting batches (sizes in messages, times in
    epoch ms). Raises ValueError for a batch size, concurrency or window out of range."""

    subscription_type: str
    batch_size: int = 10
    max_concurrency: int = 1
    batching_window_ms: int = 0

    def __post_init__(self) -> None:
        if self.batch_size < 1 or self.max_concurrency < 1 or self.batching_window_ms < 0:
            raise ValueError("batch size and concurrency must be >= 1 and the window >= 0")

    @property
    def ordered(self) -> bool:
        """Whether messages of one group keep their order (Key_Shared, Failover)."""
        return self.subscription_type in ORDERED

    def group_of(
        self, key: str | None, ordering_key: bytes | None, partition: int
    ) -> Hashable | None:
        """The ordering group of a message (None on Shared: no order kept)."""
        if self.subscription_type == "Key_Shared":
            return sticky_key_hash(key, ordering_key)
        if self.subscription_type == "Failover":
            return partition
        return None

    def may_start(self, in_flight: int) -> bool:
        """Whether another batch may start while ``in_flight`` batches are under way."""
        return in_flight < self.max_concurrency

    def next_batch(
        self, groups: Sequence[Hashable | None], busy: Collection[Hashable | None]
    ) -> list[int]:
        """The indexes (ascending) into ``pending`` (given as each pending message's group)
        of the next batch: the earliest messages whose group is not ``busy``, at most
        ``batch_size`` of them. Empty when every pending message's group is busy. On Shared
        (group None) nothing is ever busy."""
        chosen: list[int] = []
        for index, group in enumerate(groups):
            if group is not None and group in busy:
                continue
            chosen.append(index)
            if len(chosen) == self.batch_size:
                break
        return chosen

    def window_due_ms(self, pending: int, oldest_publish_ms: int, now_ms: int) -> int | None:
        """When a step holding ``pending`` messages, the oldest published at
        ``oldest_publish_ms``, should send: None for now (a full batch, no window, or the
        window has passed since the oldest message was published), else the epoch ms the
        window ends."""
        if pending == 0 or pending >= self.batch_size or self.batching_window_ms == 0:
            return None
        due = oldest_publish_ms + self.batching_window_ms
        return None if now_ms >= due else due


def halves(batch: Sequence[T]) -> tuple[list[T], list[T]]:
    """A failed batch's two halves, in order (the first the larger when odd). Raises
    ValueError for a batch of fewer than 2 messages: it cannot be split."""
    if len(batch) < 2:
        raise ValueError("only a batch of 2 or more messages can be bisected")
    middle = (len(batch) + 1) // 2
    return list(batch[:middle]), list(batch[middle:])


def without_groups(
    batch: Sequence[T],
    blocked: Collection[Hashable | None],
    group_of: Callable[[T], Hashable | None],
) -> tuple[list[T], list[T]]:
    """``(to send, to hold back)``: the batch's messages whose group is not ``blocked``,
    and those whose group is (in order, each)."""
    send: list[T] = []
    hold: list[T] = []
    for item in batch:
        group = group_of(item)
        (hold if group is not None and group in blocked else send).append(item)
    return send, hold
