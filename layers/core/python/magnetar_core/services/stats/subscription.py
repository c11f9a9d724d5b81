"""One subscription's stats in the shape of Pulsar's SubscriptionStats (a subset), from its
cursor and the index rows of its partition (``services.stats`` reads both).

``msgBacklog`` counts every message not acknowledged — read or not, whether the consumer
that read it is still connected or not (a closed consumer's entries went back for
redelivery and stay in the backlog until acknowledged); a partly acknowledged batch counts
the messages left. ``msgBacklogNoDelayed`` is ``msgBacklog - msgDelayed``, as Pulsar's.
``backlogSize`` is the stored bytes of the entries with an unacknowledged message (a partly
acknowledged batch weighs its whole entry), ``earliestMsgPublishTimeInBacklog`` the publish
time (epoch ms) of the first of them (0: no backlog). Out counters and rates come from the
cursor's ``OutCounters``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from magnetar_core.domain.counters import EntryCounts, per_second
from magnetar_core.domain.cursor.state import FAILOVER, CursorState
from magnetar_core.domain.dispatchers import failover_active


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def unacked_in(state: CursorState, entry_id: int, messages: int) -> int:
    """Messages of an entry of ``messages`` messages not acknowledged (at least 0)."""
    if entry_id <= state.mark_delete or entry_id in state.acked:
        return 0
    acked = state.batch_acks.get(entry_id, ())
    return max(0, messages - sum(1 for i in acked if 0 <= i < messages))


def subscription_stats(
    state: CursorState,
    rows: list[EntryCounts],
    ledger: int,
    partition: int,
    topic: str,
    now_ms: int,
) -> dict[str, Any]:
    """Stats of cursor ``state`` over the partition's index ``rows`` (entries with messages
    only, ascending), at ``now_ms`` (epoch ms) for the rates."""
    backlog = backlog_bytes = earliest_ms = 0
    for row in rows:
        left = unacked_in(state, row.entry_id, row.messages)
        if left:
            backlog += left
            backlog_bytes += row.size_bytes
            earliest_ms = earliest_ms or row.publish_ms
    consumers = _consumers(state)
    active = (
        failover_active(state.consumers, partition, topic) if state.sub_type == FAILOVER else None
    )
    delayed = state.delayed_count()  # entries, as Pulsar's delayed tracker counts them
    out_messages, out_bytes = state.out.last_window(now_ms)
    out: dict[str, Any] = {
        "type": state.sub_type,
        "isDurable": state.durable,
        "activeConsumerName": state.consumers[active].name if active else None,
        "msgBacklog": backlog,
        "msgBacklogNoDelayed": max(0, backlog - delayed),
        "backlogSize": backlog_bytes,
        "earliestMsgPublishTimeInBacklog": earliest_ms,
        "unackedMessages": sum(c["unackedMessages"] for c in consumers),
        "msgOutCounter": state.out.messages,
        "bytesOutCounter": state.out.size_bytes,
        "msgRateOut": per_second(out_messages),
        "msgThroughputOut": per_second(out_bytes),
        "markDeletePosition": f"{ledger}:{state.mark_delete}",
        "readPosition": f"{ledger}:{state.read_position}",
        "msgRedeliverPending": len(state.redeliver),
        "msgDelayed": delayed,
        "consumers": consumers,
    }
    ks = state.key_shared
    if ks is not None:
        out["keySharedMode"] = ks.mode
        out["allowOutOfOrderDelivery"] = ks.draining.allow_out_of_order_delivery
    return out


def _consumers(state: CursorState) -> list[dict[str, Any]]:
    """Pulsar's ConsumerStats of each registered consumer, by name: ``unackedMessages`` are
    the messages in flight to it (by the sizes recorded at dispatch)."""
    consumers: list[dict[str, Any]] = []
    ks = state.key_shared
    for cid, info in sorted(state.consumers.items(), key=lambda kv: kv[1].name):
        consumer: dict[str, Any] = {
            "consumerName": info.name,
            "consumerId": cid,
            "unackedMessages": max(0, state.unacked_messages(cid)),
            "connectedSince": _iso(info.connected_ms),
        }
        if ks is not None:
            ranges = ks.selector.ranges().get(cid, [])
            consumer["keyHashRangeArrays"] = [list(r) for r in ranges]
            consumer.update(ks.draining.stats(cid))
        consumers.append(consumer)
    return consumers
