"""DynamoDB adapter for the log index: ``(partition|ledger, entry_id) -> entry object``.

A produce takes its entry id from the ledger's sequencer (``adapters.aws.log_sequence``: an
atomic counter in the cursors table) and commits with a conditional put of its index item
at that id: the commit point. Reads see the *resolved* ledger (``domain.sequencing``): up to
the highest id below which nothing is in flight; holes of dead writers are skipped, except by
``read_from``, which returns them as the markers they look like (no messages). A ledger
without a sequencer (written before there were sequencers) reads as stored. A *fence* item
closes a ledger (written when a topic is deleted): a producer that finds it reloads the
topic instead of committing into a dead ledger. ``append_once`` commits an inbound source
event: the index item and a TTL'd marker of the event in the cursors table, in one
TransactWriteItems (docs/architecture/inbound.md). The paged scans of a ledger (counts, the
producers' tail, the last message) are ``adapters.aws.log_scans``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from botocore.exceptions import ClientError

from magnetar_core.adapters.aws import log_scans
from magnetar_core.adapters.aws.clients import (
    BotoClient,
    cancellation_reasons,
    error_code,
    throttled,
    translated,
)
from magnetar_core.adapters.aws.log_sequence import Resolved, Sequencer
from magnetar_core.domain.counters import EntryCounts
from magnetar_core.domain.errors import ConditionFailed, StorageFault
from magnetar_core.domain.log import ONCE_SORT_KEY, IndexEntry, once_marker_pk
from magnetar_core.domain.sequencing import HOLE_AFTER_MS, Allocation, Writer

_CHECK_FAILED = "ConditionalCheckFailed"
_RACED = {"ConditionalCheckFailed", "TransactionConflict"}
_THROTTLED = {"ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded"}


class LogStore:
    """Reads and appends index items of the log table."""

    def __init__(
        self,
        dynamodb: BotoClient,
        table: str,
        markers_table: str | None = None,
        now_ms: Callable[[], int] | None = None,
        hole_after_ms: int = HOLE_AFTER_MS,
    ) -> None:
        """``markers_table``: the cursors table (TTL attribute ``ttl``), where
        ``append_once`` keeps its markers and the sequencers live: ``allocate`` needs it,
        and without it reads take every stored item as resolved (the expiry job's
        deletes). ``now_ms``: the clock holes are judged by (wall clock by default)."""
        self._ddb = dynamodb
        self._table = table
        self._markers = markers_table
        clock = now_ms or (lambda: int(time.time() * 1000))
        self._seq = (
            None
            if markers_table is None
            else Sequencer(dynamodb, markers_table, table, clock, hole_after_ms)
        )

    def _resolved(self, pk: str) -> Resolved | None:
        return None if self._seq is None else self._seq.resolve(pk)

    def allocate(
        self,
        pk: str,
        count: int,
        writer: Writer | None = None,
        opens: tuple[int, bool] | None = None,
        closes: bool = False,
    ) -> Allocation:
        """Take ``count`` consecutive entry ids (``LogStore.allocate``): one UpdateItem."""
        if self._seq is None:
            raise StorageFault("No table for sequencers was configured (markers_table)")
        return self._seq.allocate(pk, count, writer, opens, closes)

    def append(self, pk: str, entry: IndexEntry) -> None:
        """Commit ``entry`` at its entry id; raises ConditionFailed when the id is taken or
        an ``append_once`` transaction is writing it (TransactionConflictException: a lost
        race too)."""
        action = f"committing entry {entry.entry_id} of {pk}"
        with translated(action):
            try:
                self._ddb.put_item(
                    TableName=self._table,
                    Item=entry.to_item(pk),
                    ConditionExpression="attribute_not_exists(eid)",
                )
            except ClientError as exc:
                if error_code(exc) == "TransactionConflictException":
                    raise ConditionFailed(action) from exc
                raise

    def append_once(self, pk: str, entry: IndexEntry, once_key: str, expires_s: int) -> bool:
        """Commit ``entry`` and the marker of ``once_key`` (expiring by TTL at ``expires_s``)
        in one TransactWriteItems: 2 items, 2 write units each. False, writing nothing, when
        the marker exists; raises ConditionFailed when the id is taken or another
        transaction touched an item (a lost race), TooManyRequests, StorageFault."""
        if self._markers is None:
            raise StorageFault("No table for once markers was configured (markers_table)")
        action = f"committing entry {entry.entry_id} of {pk} once for {once_key}"
        marker = {
            "pk": {"S": once_marker_pk(pk, once_key)},
            "sub": {"S": ONCE_SORT_KEY},
            "eid": {"N": str(entry.entry_id)},
            "ttl": {"N": str(expires_s)},
        }
        put = [
            (self._table, entry.to_item(pk), "attribute_not_exists(eid)"),
            (self._markers, marker, "attribute_not_exists(pk)"),
        ]
        items = [{"Put": {"TableName": t, "Item": i, "ConditionExpression": c}} for t, i, c in put]
        with translated(action):
            try:
                self._ddb.transact_write_items(TransactItems=items)
            except ClientError as exc:
                reasons = cancellation_reasons(exc)
                if not reasons:
                    raise
                if reasons[1:2] == [_CHECK_FAILED]:
                    return False
                if _RACED & set(reasons):
                    raise ConditionFailed(action) from exc
                if _THROTTLED & set(reasons):
                    raise throttled(action) from exc
                raise StorageFault(f"{action} failed: {', '.join(reasons)}") from exc
        return True

    def last(self, pk: str) -> IndexEntry | None:
        """The highest committed entry (or fence) at or below the resolved head: the
        sequencer's GetItem and, unless the walk saw it, one strongly consistent query."""
        if self._seq is not None and (resolved := self._seq.resolve(pk)) is not None:
            return None if resolved.head < 0 else self._seq.last_at_most(pk, resolved)
        with translated(f"reading the head of {pk}"):
            items = self._ddb.query(
                TableName=self._table,
                KeyConditionExpression="pk = :pk",
                ExpressionAttributeValues={":pk": {"S": pk}},
                ScanIndexForward=False,
                Limit=1,
                ConsistentRead=True,
            )["Items"]
        return IndexEntry.from_item(items[0]) if items else None

    def head(self, pk: str) -> int:
        """The highest committed entry id of a ledger, a fence not counted (-1: empty)."""
        last = self.last(pk)
        return -1 if last is None else (last.entry_id - 1 if last.fence else last.entry_id)

    def last_with_messages(self, pk: str, at_most: int) -> IndexEntry | None:
        """The highest entry at or below ``at_most`` that holds messages (``log_scans``)."""
        return log_scans.last_with_messages(self._ddb, self._table, pk, at_most)

    def read_from(self, pk: str, start: int, limit: int) -> list[IndexEntry]:
        """Up to ``limit`` items with ids at or after ``start`` and at or below the resolved
        head, ascending, holes as what they are (no messages, as markers); one query."""
        resolved = self._resolved(pk)
        condition = "pk = :pk AND eid >= :start"
        values = {":pk": {"S": pk}, ":start": {"N": str(start)}}
        if resolved is not None:
            if resolved.head < start:
                return []
            condition = "pk = :pk AND eid BETWEEN :start AND :top"
            values[":top"] = {"N": str(resolved.head)}
        with translated(f"reading entries of {pk} from {start}"):
            items = self._ddb.query(
                TableName=self._table,
                KeyConditionExpression=condition,
                ExpressionAttributeValues=values,
                Limit=limit,
                ConsistentRead=True,
            )["Items"]
        return [IndexEntry.from_item(item) for item in items]

    def range_counts(self, pk: str, start: int, end: int) -> list[EntryCounts]:
        """The message counts of the entries in ``[start, end]`` (``log_scans``)."""
        return log_scans.range_counts(self._ddb, self._table, pk, start, end)

    def producer_tail(self, pk: str, start: int) -> list[tuple[int, str, int, bool]]:
        """The producers' tail from ``start`` to the resolved head (``log_scans``)."""
        resolved = self._resolved(pk)
        head = None if resolved is None else resolved.head
        return log_scans.producer_tail(self._ddb, self._table, pk, start, head)

    def exists(self, pk: str, entry_id: int) -> bool:
        """Whether an entry id is settled: at or below the resolved head (the sequencer's
        GetItem, a walk while ids are in flight); without a sequencer, whether it is
        stored (one small strongly consistent read)."""
        resolved = self._resolved(pk)
        if resolved is not None:
            return entry_id <= resolved.head
        with translated(f"checking entry {entry_id} of {pk}"):
            item = self._ddb.get_item(
                TableName=self._table,
                Key={"pk": {"S": pk}, "eid": {"N": str(entry_id)}},
                ProjectionExpression="eid",
                ConsistentRead=True,
            ).get("Item")
        return item is not None

    def get_many(self, pk: str, entry_ids: Iterable[int]) -> dict[int, IndexEntry]:
        """Index items by entry id (BatchGetItem, 100 keys a request, unprocessed retried;
        one id: a GetItem, quicker); holes are absent, as ids never stored."""
        wanted = sorted(set(entry_ids))
        found: dict[int, IndexEntry] = {}
        if len(wanted) == 1:  # a grant's hand-out: one item
            with translated(f"reading entry {wanted[0]} of {pk}"):
                item = self._ddb.get_item(
                    TableName=self._table,
                    Key={"pk": {"S": pk}, "eid": {"N": str(wanted[0])}},
                    ConsistentRead=True,
                ).get("Item")
            entry = IndexEntry.from_item(item) if item else None
            return {entry.entry_id: entry} if entry is not None and not entry.hole else {}
        for i in range(0, len(wanted), 100):
            keys = [{"pk": {"S": pk}, "eid": {"N": str(e)}} for e in wanted[i : i + 100]]
            request: dict[str, object] | None = {
                self._table: {"Keys": keys, "ConsistentRead": True}
            }
            while request:
                with translated(f"reading entries of {pk}"):
                    page = self._ddb.batch_get_item(RequestItems=request)
                for item in page["Responses"].get(self._table, []):
                    entry = IndexEntry.from_item(item)
                    if not entry.hole:
                        found[entry.entry_id] = entry
                request = page.get("UnprocessedKeys") or None
        return found
