"""DynamoDB adapter for grant items (``domain.cursor.grants``): one item per consumer of a
Shared subscription, in the cursors table under a partition key of its own
(``grant_key``, sort key ``$grant``), each change one UpdateItem.

Attributes: ``q`` the granted deliveries as JSON ``[[entry, redelivery count, batch
indexes or null], ...]``, ``sz`` their number, ``n`` how many were handed out, ``lsd`` (number
set) the entries whose acks may be recorded here, ``ack`` (number set) acks recorded, ``rev``
bumped by every grant and revocation, ``rvk`` set once the whole grant is revoked (a whole
revocation writes the item even where there was none), ``rl`` the consumer's registering
role, ``dsq`` the sequence of the last dispatch round's slot taken (``domain.cursor.rounds``). Only the consumer's own requests hand out, grant and ack; a
revocation comes from whoever takes its entries back. A hand-out whose answer was lost and
that botocore sent again skips one delivery (``ADD`` is not idempotent): that entry stays
leased to the consumer until it closes or lapses, then is redelivered; the others are
idempotent (sets) or conditional on ``rev``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from magnetar_core.adapters.aws.clients import BotoClient, translated
from magnetar_core.domain.cursor.grants import GRANT_SUBSCRIPTION, Grant, GrantChange, grant_key
from magnetar_core.domain.cursor.records import Delivery
from magnetar_core.domain.errors import ConditionFailed

Item = dict[str, Any]
BATCH_GET_KEYS = 100
"""Keys of one BatchGetItem (DynamoDB's limit)."""


def grant_from_item(item: Item) -> Grant:
    """A grant from its DynamoDB item."""
    queue = tuple(
        Delivery(int(e), int(c), tuple(m) if m is not None else None)
        for e, c, m in json.loads(item.get("q", {}).get("S", "[]"))
    )
    return Grant(
        queue=queue,
        handed=int(item.get("n", {}).get("N", "0")),
        leased=_numbers(item, "lsd"),
        acked=_numbers(item, "ack"),
        rev=int(item.get("rev", {}).get("N", "0")),
        revoked=bool(item.get("rvk", {}).get("BOOL", False)),
        role=item["rl"]["S"] if "rl" in item else None,
        dealt_seq=int(item.get("dsq", {}).get("N", "0")),
    )


def queue_json(queue: tuple[Delivery, ...]) -> str:
    """The ``q`` attribute of a queue of deliveries."""
    rows = [[d.entry_id, d.redelivery_count, d.batch_indexes] for d in queue]
    return json.dumps(rows, separators=(",", ":"))


def _numbers(item: Item, name: str) -> frozenset[int]:
    return frozenset(int(v) for v in item.get(name, {}).get("NS", ()))


def _number_set(values: frozenset[int]) -> dict[str, list[str]]:
    return {"NS": [str(v) for v in sorted(values)]}


def _role_condition(role: str | None, values: Item) -> str:
    if role is None:
        return ""
    values[":role"] = {"S": role}
    return " AND (attribute_not_exists(rl) OR rl = :role)"


class GrantItems:
    """Reads and changes grant items of one cursors table."""

    def __init__(self, dynamodb: BotoClient, table: str) -> None:
        self._ddb = dynamodb
        self._table = table

    def _key(self, pk: str, subscription: str, consumer_id: str) -> Item:
        return {
            "pk": {"S": grant_key(pk, subscription, consumer_id)},
            "sub": {"S": GRANT_SUBSCRIPTION},
        }

    def grant(self, pk: str, subscription: str, consumer_id: str) -> Grant | None:
        with translated(f"reading the grant of {consumer_id} on {subscription} of {pk}"):
            item = self._ddb.get_item(
                TableName=self._table,
                Key=self._key(pk, subscription, consumer_id),
                ConsistentRead=True,
            ).get("Item")
        return grant_from_item(item) if item else None

    def _update(self, action: str, **kwargs: Any) -> Item | None:
        """One UpdateItem returning the item as changed; None when its condition failed."""
        try:
            with translated(action):
                return self._ddb.update_item(
                    TableName=self._table, ReturnValues="ALL_NEW", **kwargs
                )["Attributes"]
        except ConditionFailed:
            return None

    def hand_out(
        self, pk: str, subscription: str, consumer_id: str, role: str | None, count: int = 1
    ) -> Grant | None:
        values: Item = {":k": {"N": str(count)}}
        condition = "n < sz AND attribute_not_exists(rvk)" + _role_condition(role, values)
        item = self._update(
            f"handing out the grant of {consumer_id} on {subscription} of {pk}",
            Key=self._key(pk, subscription, consumer_id),
            UpdateExpression="ADD n :k",
            ConditionExpression=condition,
            ExpressionAttributeValues=values,
        )
        return grant_from_item(item) if item is not None else None

    def put_grant(self, pk: str, subscription: str, consumer_id: str, change: GrantChange) -> bool:
        values: Item = {
            ":q": {"S": queue_json(change.queue)},
            ":n": {"N": str(change.handed)},
            ":sz": {"N": str(len(change.queue))},
            ":rev": {"N": str(change.rev + 1)},
        }
        sets = ["q = :q", "n = :n", "sz = :sz", "rev = :rev"]
        removes = ["rvk"]
        if change.leased:
            values[":lsd"] = _number_set(change.leased)
            sets.append("lsd = :lsd")
        else:
            removes.append("lsd")
        if change.role is not None:
            values[":rl"] = {"S": change.role}
            sets.append("rl = :rl")
        if change.dealt_seq is not None:
            values[":dsq"] = {"N": str(change.dealt_seq)}
            sets.append("dsq = :dsq")
        expression = f"SET {', '.join(sets)} REMOVE {', '.join(removes)}"
        if change.folded:
            values[":fold"] = _number_set(change.folded)
            expression += " DELETE ack :fold"
        if change.fresh:
            condition = "attribute_not_exists(pk)"
        else:
            condition = "rev = :was"
            values[":was"] = {"N": str(change.rev)}
        if change.dealt_seq is not None and not change.fresh:
            values[":dsq"] = {"N": str(change.dealt_seq)}
            condition += (
                " AND attribute_not_exists(rvk) AND (attribute_not_exists(dsq) OR dsq < :dsq)"
            )
        return (
            self._update(
                f"granting to {consumer_id} on {subscription} of {pk}",
                Key=self._key(pk, subscription, consumer_id),
                UpdateExpression=expression,
                ConditionExpression=condition,
                ExpressionAttributeValues=values,
            )
            is not None
        )

    def ack_granted(
        self,
        pk: str,
        subscription: str,
        consumer_id: str,
        entry_ids: frozenset[int],
        role: str | None,
    ) -> bool:
        if not entry_ids:
            return True
        values: Item = {":acks": _number_set(entry_ids)}
        held = []
        for i, entry_id in enumerate(sorted(entry_ids)):
            values[f":e{i}"] = {"N": str(entry_id)}
            held.append(f"contains(lsd, :e{i})")
        condition = " AND ".join(held) + _role_condition(role, values)
        return (
            self._update(
                f"acknowledging on the grant of {consumer_id} on {subscription} of {pk}",
                Key=self._key(pk, subscription, consumer_id),
                UpdateExpression="ADD ack :acks",
                ConditionExpression=condition,
                ExpressionAttributeValues=values,
            )
            is not None
        )

    def revoke_grant(
        self,
        pk: str,
        subscription: str,
        consumer_id: str,
        entry_ids: frozenset[int] | None,
    ) -> Grant | None:
        values: Item = {":one": {"N": "1"}}
        condition: str | None = "attribute_exists(pk)"
        if entry_ids is None:  # written even where there was no item: a slot's take fails
            values[":t"] = {"BOOL": True}
            expression = "SET rvk = :t REMOVE lsd ADD rev :one"
            condition = None
        elif entry_ids:
            values[":ids"] = _number_set(entry_ids)
            expression = "ADD rev :one DELETE lsd :ids"
        else:
            expression = "ADD rev :one"
        conditional = {"ConditionExpression": condition} if condition else {}
        item = self._update(
            f"revoking the grant of {consumer_id} on {subscription} of {pk}",
            Key=self._key(pk, subscription, consumer_id),
            UpdateExpression=expression,
            ExpressionAttributeValues=values,
            **conditional,
        )
        return grant_from_item(item) if item is not None else None

    def void_slot(self, pk: str, subscription: str, consumer_id: str, seq: int) -> bool:
        values: Item = {":s": {"N": str(seq)}, ":zero": {"N": "0"}}
        return (
            self._update(
                f"taking back the slot of {consumer_id} on {subscription} of {pk}",
                Key=self._key(pk, subscription, consumer_id),
                UpdateExpression="SET dsq = :s, rev = if_not_exists(rev, :zero)",
                ConditionExpression="attribute_not_exists(dsq) OR dsq < :s",
                ExpressionAttributeValues=values,
            )
            is not None
        )

    def grants_of(
        self, pk: str, subscription: str, consumer_ids: Sequence[str]
    ) -> dict[str, Grant | None]:
        keys = {grant_key(pk, subscription, c): c for c in consumer_ids}
        out: dict[str, Grant | None] = dict.fromkeys(consumer_ids)
        todo = list(keys)
        while todo:
            page, todo = todo[:BATCH_GET_KEYS], todo[BATCH_GET_KEYS:]
            request = {self._table: {"Keys": [{"pk": {"S": k}, "sub": {"S": GRANT_SUBSCRIPTION}}
                                              for k in page], "ConsistentRead": True}}  # fmt: skip
            with translated(f"reading the grants of {len(page)} consumers on {subscription}"):
                answer = self._ddb.batch_get_item(RequestItems=request)
            for item in answer.get("Responses", {}).get(self._table, []):
                out[keys[item["pk"]["S"]]] = grant_from_item(item)
            left = answer.get("UnprocessedKeys", {}).get(self._table, {}).get("Keys", [])
            todo = [k["pk"]["S"] for k in left] + todo
        return out
