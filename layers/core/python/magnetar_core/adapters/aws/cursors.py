"""DynamoDB adapter for cursors: one item per (partition|ledger, subscription), versioned.

Scalar positions (``md``, ``rp``), the type and the version are top-level attributes; the
range sets, leases, redelivery counts and consumers travel as one compact JSON attribute:
the acknowledged, redelivery and lease range sets as ``RangeSet.to_deltas`` (gaps and
lengths, not ids; the ``[[start, end], ...]`` form of older items is still read); with
``ks``: a Key_Shared subscription's selector, draining hashes, lease and delay masks;
``mc`` / ``mp``: redelivery counts of single messages and messages parked for the dead
letter topic, ``MessageCounts``; ``dl``:
delayed entries by due bucket, ``drel`` the latest bucket consumed, ``tid`` the timer id;
``dlp``: the dead letter policy, ``dlq``: the dead letter outbox; ``out``: the dispatch
counters of the stats, ``OutCounters.to_list``; ``dt``: dispatch rounds' dealt slots by
consumer, ``Dealt.to_list``.
``rel`` is a top-level number set of buckets released by timer workflows: Step Functions
adds to it (bumping ``ver``), a write carries over the values its state did not consume.
Every write is conditional on the version read, so concurrent dispatchers never lose an
update: a lost race is a ConditionFailed that the caller retries.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict

from magnetar_core.adapters.aws.clients import (
    BotoClient,
    put_conditional,
    tokens_of,
    translated,
    version_condition,
)
from magnetar_core.adapters.aws.grants import GrantItems
from magnetar_core.domain.counters import OutCounters
from magnetar_core.domain.cursor.dead_letters import DeadLetterOutbox
from magnetar_core.domain.cursor.dealt import Dealt
from magnetar_core.domain.cursor.message_counts import MessageCounts
from magnetar_core.domain.cursor.state import ConsumerInfo, CursorState, KeySharedState
from magnetar_core.domain.rangeset import RangeSet


def cursor_to_item(pk: str, state: CursorState) -> dict:
    """The DynamoDB item for ``state`` at its next version."""
    body: dict[str, object] = {
        "acked": state.acked.to_deltas(),
        "backs": {str(k): sorted(v) for k, v in state.batch_acks.items()},
        "bsize": {str(k): v for k, v in state.batch_sizes.items()},
        "redeliver": state.redeliver.to_deltas(),
        "leases": {cid: lease.to_deltas() for cid, lease in state.leases.items()},
        "counts": {str(k): v for k, v in state.redelivery_counts.items()},
        "consumers": {cid: info.to_dict() for cid, info in state.consumers.items()},
    }
    if state.key_shared is not None:
        body["ks"] = state.key_shared.to_dict()
    if state.dealt:
        body["dt"] = {cid: slot.to_list() for cid, slot in state.dealt.items()}
    body.update(state.reads.messages.to_dict())
    body.update(state.delays.to_dict())
    body.update(state.outbox.to_dict())
    if state.timer_id:
        body["tid"] = state.timer_id
    if state.read_compacted:
        body["rc"] = True
    if state.out.messages or state.out.size_bytes:
        body["out"] = state.out.to_list()
    item = {
        "pk": {"S": pk},
        "sub": {"S": state.subscription},
        "ver": {"N": str(state.version + 1)},
        "type": {"S": state.sub_type},
        "md": {"N": str(state.mark_delete)},
        "rp": {"N": str(state.read_position)},
        "nc": {"N": str(len(state.consumers))},
        "dur": {"BOOL": state.durable},
        "st": {"S": json.dumps(body, separators=(",", ":"))},
    }
    if state.released:
        item["rel"] = {"NS": [str(b) for b in sorted(state.released)]}
    return item


def cursor_from_item(item: dict) -> CursorState:
    """Rebuild a cursor from its DynamoDB item."""
    body = json.loads(item["st"]["S"])
    state = CursorState(
        subscription=item["sub"]["S"],
        sub_type=item["type"]["S"],
        mark_delete=int(item["md"]["N"]),
        read_position=int(item["rp"]["N"]),
        acked=RangeSet.from_json(body["acked"]),
        batch_acks={int(k): set(v) for k, v in body["backs"].items()},
        batch_sizes={int(k): int(v) for k, v in body["bsize"].items()},
        redeliver=RangeSet.from_json(body["redeliver"]),
        leases={cid: RangeSet.from_json(r) for cid, r in body["leases"].items()},
        redelivery_counts={int(k): int(v) for k, v in body["counts"].items()},
        consumers={cid: ConsumerInfo.from_dict(cid, d) for cid, d in body["consumers"].items()},
        version=int(item["ver"]["N"]),
        durable=item.get("dur", {"BOOL": True})["BOOL"],
        key_shared=KeySharedState.from_dict(body["ks"]) if "ks" in body else None,
        delayed={int(b): RangeSet.from_list(r) for b, r in body.get("dl", {}).items()},
        released={int(b) for b in item.get("rel", {}).get("NS", ())},
        released_max=int(body.get("drel", 0)),
        timer_id=body.get("tid", ""),
        read_compacted=body.get("rc", False),
    )
    state.outbox = DeadLetterOutbox.from_dict(body)
    state.reads.messages = MessageCounts.from_dict(body)
    state.out = OutCounters.from_list(body.get("out", []))
    state.dealt = {cid: Dealt.from_list(v) for cid, v in body.get("dt", {}).items()}
    return state


TOKENS_REMEMBERED = 4096
"""Cursor versions whose write tokens a store remembers (the oldest forgotten first)."""


class CursorStore(GrantItems):
    """Reads and conditionally writes cursor items (and consumers' grant items:
    ``GrantItems``)."""

    def __init__(self, dynamodb: BotoClient, table: str) -> None:
        super().__init__(dynamodb, table)
        # write tokens of the cursor versions read (and written) here, by (pk, sub, version):
        # the next write of that version carries them (``put_conditional``)
        self._tokens: OrderedDict[tuple[str, str, int], list[str]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, pk: str, subscription: str) -> CursorState | None:
        """The cursor, strongly consistent, or None."""
        with translated(f"reading cursor {subscription} of {pk}"):
            item = self._ddb.get_item(
                TableName=self._table,
                Key={"pk": {"S": pk}, "sub": {"S": subscription}},
                ConsistentRead=True,
            ).get("Item")
        if not item:
            return None
        state = cursor_from_item(item)
        self._remember(pk, subscription, state.version, tokens_of(item))
        return state

    def _remember(self, pk: str, subscription: str, version: int, tokens: list[str]) -> None:
        with self._lock:
            self._tokens[(pk, subscription, version)] = tokens
            self._tokens.move_to_end((pk, subscription, version))
            while len(self._tokens) > TOKENS_REMEMBERED:
                self._tokens.popitem(last=False)

    def put(self, pk: str, state: CursorState) -> None:
        """Write ``state`` if nobody wrote since it was read (version ``state.version``).

        A new cursor (version 0) is written only if none exists. Raises ConditionFailed.
        On success ``state.version`` is the new version. A write whose answer was lost and
        that botocore retried counts once (``put_conditional``): otherwise the dispatcher
        re-planned on top of its own landed write, and entries that write leased to the
        consumer were never sent to it. The write also carries the tokens of the version it
        replaces (read here), so it is recognised as landed even when another dispatcher
        read it and wrote on top before its check (reliability finding 7).
        """
        with self._lock:
            read = self._tokens.get((pk, state.subscription, state.version), [])
        tokens = put_conditional(
            self._ddb, self._table, cursor_to_item(pk, state),
            {"pk": {"S": pk}, "sub": {"S": state.subscription}},
            version_condition(state.version), f"writing cursor {state.subscription} of {pk}",
            read_tokens=read,
        )  # fmt: skip
        state.version += 1
        self._remember(pk, state.subscription, state.version, tokens)

    def delete(self, pk: str, state: CursorState) -> None:
        """Delete the cursor if unchanged since read; raises ConditionFailed."""
        with translated(f"deleting cursor {state.subscription} of {pk}"):
            self._ddb.delete_item(
                TableName=self._table,
                Key={"pk": {"S": pk}, "sub": {"S": state.subscription}},
                ConditionExpression="ver = :v",
                ExpressionAttributeValues={":v": {"N": str(state.version)}},
            )

    def list(self, pk: str) -> list[CursorState]:
        """Every cursor of one partition ledger (paginated query)."""
        kwargs = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": pk}},
            "ConsistentRead": True,
        }
        out: list[CursorState] = []
        while True:
            with translated(f"listing cursors of {pk}"):
                page = self._ddb.query(**kwargs)
            out.extend(
                cursor_from_item(item)
                for item in page["Items"]
                if not item["sub"]["S"].startswith("$")
            )
            if "LastEvaluatedKey" not in page:
                return out
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def delete_all(self, pk: str) -> int:
        """Delete every item of one partition ledger (cursors, producer lease, dedup
        snapshot); returns how many."""
        kwargs = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": pk}},
            "ProjectionExpression": "pk, #s",
            "ExpressionAttributeNames": {"#s": "sub"},
        }
        deleted = 0
        while True:
            with translated(f"listing items of {pk}"):
                page = self._ddb.query(**kwargs)
            for item in page["Items"]:
                with translated(f"deleting {item['sub']['S']} of {pk}"):
                    self._ddb.delete_item(
                        TableName=self._table, Key={"pk": item["pk"], "sub": item["sub"]}
                    )
                deleted += 1
            if "LastEvaluatedKey" not in page:
                return deleted
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
