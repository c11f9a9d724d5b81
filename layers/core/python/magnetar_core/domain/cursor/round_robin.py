"""Pulsar's round-robin turn on a Shared subscription: how many entries one receive may
always take of what is available, whatever the consumer already holds.

Pulsar's Shared dispatcher reads entries and deals them to the consumers with permits
(receiver-queue space) in turns: each turn is at most ``dispatcherMaxRoundRobinBatchSize``
messages (20 by default), turned into entries by the read's average batch size (at least
one entry there). Unacknowledged messages do not take permits (only
``maxUnackedMessagesPerConsumer``, 50,000, stops a consumer). Here a receive is its
consumer's turn: it asks for its receiver queue's free space, and may take one turn of what
is available even when it holds unacknowledged entries; beyond a turn, a receive takes its
fair share (``dispatching.fair_share``), which splits a backlog among the consumers. A turn
here is whole entries within 20 messages: entries larger than that (batches of more than 20
messages) are left to the fair share alone, which deals them evenly where a pull cannot keep
Pulsar's fixed rotation.
Without the turn, a consumer holding entries while its acknowledgements are grouped (100
ms in the SDK) waited for them although entries were there, and committed entries stood
until a consumer below its share came by: at 500 messages a second over 8 prefetching
consumers, that standing queue was most of publish-to-receive latency.
"""

from __future__ import annotations

from collections.abc import Sequence

ROUND_ROBIN_MESSAGES = 20
"""Pulsar's ``dispatcherMaxRoundRobinBatchSize`` default (broker.conf)."""


def round_robin_turn(
    candidates: Sequence[tuple[int, int]], messages: int = ROUND_ROBIN_MESSAGES
) -> int:
    """The entries of one turn among ``candidates`` (``(entry id, message count)`` in
    dispatch order): ``messages`` over their average batch size, rounded down (0 when an
    average entry holds more than a turn), no more than there are."""
    if not candidates:
        return 0
    total = sum(max(count, 1) for _, count in candidates)
    return min(messages * len(candidates) // total, len(candidates))
