"""Paged queries over one ledger of the log table, for ``adapters.aws.log.LogStore``: the
message counts of a range (stats, backlog, expiry), the producers' tail (the dedup replay)
and the last entry that holds messages. Each page is one query; holes are left out."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from magnetar_core.adapters.aws.clients import BotoClient, translated
from magnetar_core.domain.counters import EntryCounts
from magnetar_core.domain.log import IndexEntry


def _pages(dynamodb: BotoClient, query: dict[str, Any], action: str) -> Iterator[list[dict]]:
    """The items of ``query``, page by page (``LastEvaluatedKey`` followed)."""
    query = dict(query)
    while True:
        with translated(action):
            page = dynamodb.query(**query)
        yield page["Items"]
        if "LastEvaluatedKey" not in page:
            return
        query["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _not_hole(item: dict) -> bool:
    return not item.get("hole", {}).get("BOOL", False)


def last_with_messages(
    dynamodb: BotoClient, table: str, pk: str, at_most: int
) -> IndexEntry | None:
    """The highest entry at or below ``at_most`` that holds messages (markers, fences and
    ids the expiry job deleted are passed over): a backward, strongly consistent query,
    paged 100 items at a time."""
    query = {
        "TableName": table,
        "KeyConditionExpression": "pk = :pk AND eid <= :top",
        "FilterExpression": "n > :zero",
        "ExpressionAttributeValues": {
            ":pk": {"S": pk},
            ":top": {"N": str(at_most)},
            ":zero": {"N": "0"},
        },
        "ScanIndexForward": False,
        "ConsistentRead": True,
        "Limit": 100,
    }
    for items in _pages(dynamodb, query, f"finding the last message of {pk}"):
        if items:
            return IndexEntry.from_item(items[0])
    return None


def range_counts(
    dynamodb: BotoClient, table: str, pk: str, start: int, end: int
) -> list[EntryCounts]:
    """``(entry_id, messages, size_bytes, publish_ms)`` of entries in ``[start, end]``
    (paginated query): ``messages`` is the entry's message count, 0 for markers and
    partial chunks; ``publish_ms`` the earliest publish time (``pt0``)."""
    if start > end:
        return []
    query = {
        "TableName": table,
        "KeyConditionExpression": "pk = :pk AND eid BETWEEN :a AND :b",
        "ExpressionAttributeValues": {
            ":pk": {"S": pk},
            ":a": {"N": str(start)},
            ":b": {"N": str(end)},
        },
        "ProjectionExpression": "eid, n, #len, pc, pt0, hole",
        "ExpressionAttributeNames": {"#len": "len"},
    }
    return [
        EntryCounts(
            int(i["eid"]["N"]),
            0 if i.get("pc", {}).get("BOOL", False) else int(i.get("n", {"N": "0"})["N"]),
            int(i.get("len", {"N": "0"})["N"]),
            int(i.get("pt0", {"N": "0"})["N"]),
        )
        for items in _pages(dynamodb, query, f"counting messages of {pk}")
        for i in items
        if _not_hole(i)
    ]


def producer_tail(
    dynamodb: BotoClient, table: str, pk: str, start: int, head: int | None
) -> list[tuple[int, str, int, bool]]:
    """``(entry_id, producer, highest sequence id, completes)`` of every entry from
    ``start`` up to ``head`` (the resolved head; None: whatever is stored), ascending, holes
    skipped (paginated, strongly consistent query). ``completes`` is False for markers and
    for chunks other than a message's last."""
    values = {":pk": {"S": pk}, ":start": {"N": str(start)}}
    condition = "pk = :pk AND eid >= :start"
    if head is not None:
        if head < start:
            return []
        condition = "pk = :pk AND eid BETWEEN :start AND :top"
        values[":top"] = {"N": str(head)}
    query = {
        "TableName": table,
        "KeyConditionExpression": condition,
        "ExpressionAttributeValues": values,
        "ProjectionExpression": "eid, pn, sq1, n, pc, hole",
        "ConsistentRead": True,
    }
    return [
        (
            int(i["eid"]["N"]),
            i.get("pn", {"S": ""})["S"],
            int(i.get("sq1", {"N": "0"})["N"]),
            int(i.get("n", {"N": "0"})["N"]) > 0 and not i.get("pc", {}).get("BOOL", False),
        )
        for items in _pages(dynamodb, query, f"replaying the tail of {pk}")
        for i in items
        if _not_hole(i)
    ]
