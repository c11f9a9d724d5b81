"""The notification channel (issue 16, "Idle"), pure: watches, notices and lease holds.

An idle SDK consumer holds a WebSocket connection (API Gateway's WebSocket API on AWS, the
local gateway's channel locally) and *watches* its partitions: a ``watch`` message names
``(partition topic, subscription, consumer id)`` triples. A commit on a watched partition
(the log table's stream on AWS, the gateway's produce answers locally) posts a small
*notice* ``{"notice": "<partition topic>"}`` to each watching connection and consumes the
watch (one notice per idle spell: a busy topic costs no WebSocket messages); the consumer
then long-polls again and watches anew when it is idle again.

Lease hold: a watching consumer makes no request for minutes, yet must keep its consumer
lease (``CONSUMER_LEASE_MS``, 60 s). A watch *holds* the consumer until the connection's
latest possible end (API Gateway closes a connection after 2 h: ``HOLD_MS`` = 2 h and a
margin), tagged with the connection's id; ``$disconnect`` of that connection (and only that
one: a reconnecting client's old connection ends after its new one watched) releases the
hold and restarts the ordinary lease from that moment. So Exclusive and Failover stay
correct when a client dies: its connection's ``$disconnect`` (API Gateway sends it when the
socket closes, or after the 10 min idle timeout of a silent peer) frees the consumer one
lease later; should ``$disconnect`` never come, the hold ends by itself.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from magnetar_core.domain.cursor.records import ConsumerInfo
from magnetar_core.domain.cursor.state import CursorState
from magnetar_core.domain.errors import InvalidMessage
from magnetar_wire.errors import InvalidTopicName
from magnetar_wire.names import TopicName

CONNECTION_MAX_MS = 2 * 60 * 60 * 1000
"""API Gateway ends a WebSocket connection after 2 hours (ms)."""
HOLD_MARGIN_MS = 5 * 60 * 1000
"""How long past a connection's latest end its hold lasts (ms): ``$disconnect`` may come late."""
HOLD_MS = CONNECTION_MAX_MS + HOLD_MARGIN_MS
"""How long a watch holds its consumer's lease, from the watch (ms)."""
MAX_WATCHES = 100
"""Most ``(topic, subscription, consumer)`` triples one ``watch`` message may name."""


@dataclass(frozen=True)
class Watch:
    """A connection waiting for commits on one partition for one consumer. ``topic`` is the
    partition's full name (a non-partitioned topic's own name)."""

    topic: str
    subscription: str
    consumer_id: str
    connection_id: str


CONNECTION_PREFIX = "$conn/"
"""Partition keys of the notify table that list a connection (never a topic's full name)."""
CONNECTION_SK = "$"
"""The sort key of a connection's own record (its role) under its partition key."""


def watch_key(w: Watch) -> tuple[str, str]:
    """``(pk, sk)`` of a watch in the notify table: ``pk`` the partition watched."""
    return w.topic, f"{w.connection_id}|{w.subscription}|{w.consumer_id}"


def listing_key(w: Watch) -> tuple[str, str]:
    """``(pk, sk)`` of a watch listed under its connection (for ``$disconnect``)."""
    return CONNECTION_PREFIX + w.connection_id, f"{w.topic}|{w.subscription}|{w.consumer_id}"


def parse_watches(body: Any, connection_id: str) -> list[Watch]:
    """The watches of a ``watch`` message body: ``{"action": "watch", "watches": [{"topic":
    ..., "subscription": ..., "consumerId": ...}, ...]}`` (1 to ``MAX_WATCHES``). Raises
    InvalidMessage naming the field that is wrong, InvalidTopicName for a bad topic."""
    if not isinstance(body, Mapping):
        raise InvalidMessage("a watch message is a JSON object with a list 'watches'")
    items = body.get("watches")
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_WATCHES:
        raise InvalidMessage(f"'watches' must be a list of 1 to {MAX_WATCHES} objects")
    watches = []
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise InvalidMessage(f"watches[{index}] must be an object")
        fields = []
        for name in ("topic", "subscription", "consumerId"):
            value = item.get(name)
            if not isinstance(value, str) or not value:
                raise InvalidMessage(f"watches[{index}].{name} must be a non-empty string")
            fields.append(value)
        topic = str(TopicName.parse(fields[0]))  # InvalidTopicName
        watches.append(Watch(topic, fields[1], fields[2], connection_id))
    return watches


def notice(topic: str) -> bytes:
    """The message posted to a watching connection when ``topic`` (a partition) committed."""
    return json.dumps({"notice": topic}, separators=(",", ":")).encode()


def committed_partitions(event: Mapping[str, Any]) -> list[str]:
    """The partitions (full names, in order of first appearance) an index-table stream
    event's INSERT records committed to; other records are ignored (the trigger fan-out
    logs them). Never raises."""
    seen: dict[str, None] = {}
    records = event.get("Records") if isinstance(event, Mapping) else None
    for record in records if isinstance(records, list) else []:
        if not isinstance(record, Mapping) or record.get("eventName") != "INSERT":
            continue
        data = record.get("dynamodb")
        keys = data.get("Keys") if isinstance(data, Mapping) else None
        pk = keys.get("pk") if isinstance(keys, Mapping) else None
        value = pk.get("S") if isinstance(pk, Mapping) else None
        if not isinstance(value, str) or "|" not in value:
            continue
        topic, _, ledger = value.rpartition("|")
        try:
            if ledger.isdigit():
                seen.setdefault(str(TopicName.parse(topic)), None)
        except InvalidTopicName:
            continue
    return list(seen)


def hold(info: ConsumerInfo, connection_id: str, now_ms: int, hold_ms: int = HOLD_MS) -> bool:
    """Hold ``info``'s lease for ``connection_id`` until ``now_ms + hold_ms`` (and mark it
    seen); returns whether anything changed enough to be stored (a hold renewed by the same
    connection within a tenth of ``hold_ms`` is not rewritten)."""
    until_ms = now_ms + hold_ms
    if info.held_by == connection_id and until_ms - info.held_until_ms < hold_ms // 10:
        return False
    info.held_by, info.held_until_ms, info.seen_ms = connection_id, until_ms, now_ms
    return True


def recheck_at_ms(state: CursorState, consumer_id: str, lease_ms: int) -> int | None:
    """When work may become available on the cursor without a commit (epoch ms; None: only a
    commit brings work): its earliest delayed bucket (a delay timer releases it without
    writing the log), or the earliest lease end of another consumer holding entries (they
    come back for redelivery then). A watching consumer looks again at that time."""
    dues = [state.delays.next_due()]
    for other, info in state.consumers.items():
        if other != consumer_id and state.roster.leases.get(other):
            dues.append(max(info.seen_ms + lease_ms, info.held_until_ms) + 1)
    return min((due for due in dues if due is not None), default=None)


def release(info: ConsumerInfo, connection_id: str, now_ms: int) -> bool:
    """End ``info``'s hold if ``connection_id`` holds it: its ordinary lease runs again from
    ``now_ms``. Returns whether it was held by that connection (else nothing changes)."""
    if info.held_by != connection_id:
        return False
    info.held_by, info.held_until_ms, info.seen_ms = None, 0, now_ms
    return True
