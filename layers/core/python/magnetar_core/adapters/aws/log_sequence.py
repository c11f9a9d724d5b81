"""DynamoDB sequencer of a partition ledger: the counter item ``(ledger key, "$seq")`` in the
cursors table, beside the ledger's producer records (``domain.sequencing``).

``allocate`` is one ``UpdateItem`` (``ADD nxt :n``, conditional on the ledger not being
fenced and, for an epoch marker, on no newer epoch): DynamoDB applies updates of one item
one after another, so concurrent writers never race for an id, and the new values come back
in the same request (``ReturnValues=ALL_NEW``). The first allocation of a ledger creates the
item after the ledger's last item (a ledger written before there were sequencers, or a new
one: -1). ``resolve`` walks the log from the stored (or this process's) resolved head to
the highest id readers may see, writing the holes of dead writers on the way, and stores the
bound again now and then (``RESOLVED_PERSIST_EVERY``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from magnetar_core.adapters.aws.clients import BotoClient, translated
from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.log import IndexEntry
from magnetar_core.domain.sequencing import (
    RESOLVED_PERSIST_EVERY,
    SEQUENCE_SORT_KEY,
    Allocation,
    EpochSuperseded,
    LedgerClosed,
    SequenceState,
    Writer,
    settle,
    stale_tail,
    walk,
)

_PAGE = 100  # items a walk reads per query

_OPEN = "attribute_exists(nxt) AND attribute_not_exists(fz)"


def _state(item: dict) -> SequenceState:
    def num(name: str) -> int:
        return int(item[name]["N"]) if name in item else 0

    return SequenceState(
        next_id=num("nxt"),
        resolved=num("rs"),
        epoch=num("ep"),
        exclusive=item.get("ex", {}).get("BOOL", False),
        fenced=item.get("fz", {}).get("BOOL", False),
        allocated_ms=num("at"),
    )


@dataclass(frozen=True)
class Resolved:
    """A ledger's resolved head, the highest entry at or below it (None: none, or not known
    without a query), and its sequencer as read."""

    head: int
    last: IndexEntry | None
    state: SequenceState


class Sequencer:
    """Allocates entry ids of ledgers and finds their resolved heads."""

    def __init__(
        self,
        dynamodb: BotoClient,
        table: str,
        log_table: str,
        now_ms: Callable[[], int],
        hole_after_ms: int,
    ) -> None:
        """``table``: where the sequencer items live (the cursors table); ``log_table``: the
        ledgers' index items, walked and given holes."""
        self._ddb = dynamodb
        self._table = table
        self._log = log_table
        self._now_ms = now_ms
        self._hole_after_ms = hole_after_ms
        self._known: dict[str, tuple[int, IndexEntry | None]] = {}  # pk -> head, last
        self._lock = threading.Lock()

    def _key(self, pk: str) -> dict:
        return {"pk": {"S": pk}, "sub": {"S": SEQUENCE_SORT_KEY}}

    def state(self, pk: str) -> SequenceState | None:
        """The sequencer item, strongly consistent; None when the ledger never allocated."""
        with translated(f"reading the sequencer of {pk}"):
            item = self._ddb.get_item(
                TableName=self._table, Key=self._key(pk), ConsistentRead=True
            ).get("Item")
        return None if item is None else _state(item)

    def allocate(
        self,
        pk: str,
        count: int,
        writer: Writer | None = None,
        opens: tuple[int, bool] | None = None,
        closes: bool = False,
    ) -> Allocation:
        """``count`` ids (see ``LogStore.allocate``): one UpdateItem; a ledger's first
        allocation also creates the item (one conditional PutItem, once per ledger)."""
        now_ms = self._now_ms()
        sets = ["#at = :at"]
        values: dict = {":n": {"N": str(count)}, ":at": {"N": str(now_ms)}}
        condition = _OPEN
        if writer is not None and writer.epoch is None:
            values[":f"] = {"BOOL": False}
            condition += " AND (attribute_not_exists(ex) OR ex = :f)"
        elif writer is not None:
            values[":w"] = {"N": str(writer.epoch)}
            condition += " AND (attribute_not_exists(ep) OR ep <= :w)"
        if opens is not None:
            sets += ["ep = :ep", "ex = :ex"]
            values[":ep"] = {"N": str(opens[0])}
            values[":ex"] = {"BOOL": opens[1]}
            condition += " AND (attribute_not_exists(ep) OR ep <= :ep)"
        if closes:
            sets.append("fz = :fz")
            values[":fz"] = {"BOOL": True}
        for _ in range(3):
            try:
                with translated(f"allocating {count} entry ids of {pk}"):
                    item = self._ddb.update_item(
                        TableName=self._table,
                        Key=self._key(pk),
                        UpdateExpression=f"ADD nxt :n SET {', '.join(sets)}",
                        ConditionExpression=condition,
                        ExpressionAttributeNames={"#at": "at"},
                        ExpressionAttributeValues=values,
                        ReturnValues="ALL_NEW",
                    )["Attributes"]
            except ConditionFailed:
                state = self.state(pk)
                if state is None:
                    self._create(pk)
                    continue
                if state.fenced:
                    raise LedgerClosed(pk) from None
                refused = writer is not None and not writer.admitted(state.epoch, state.exclusive)
                if refused or (opens is not None and opens[0] < state.epoch):
                    raise EpochSuperseded(state.epoch, state.exclusive) from None
                continue  # the item was created meanwhile (another writer's first allocation)
            state = _state(item)
            return Allocation(state.next_id - count, count, state.epoch, state.exclusive, now_ms)
        raise LedgerClosed(pk)  # created and gone again: a deleted topic's cleanup

    def _create(self, pk: str) -> None:
        """Start the sequencer after the ledger's last item, with that item's access epoch
        (a fenced ledger's sequencer starts fenced). A concurrent creation wins: fine."""
        last = self._stored_last(pk, None)
        next_id = 0 if last is None else last.entry_id + 1
        item = {
            **self._key(pk),
            "nxt": {"N": str(next_id)},
            "rs": {"N": str(next_id - 1)},
            "ep": {"N": str(last.epoch if last else 0)},
            "ex": {"BOOL": bool(last and last.exclusive)},
            "at": {"N": "0"},
        }
        if last is not None and last.fence:
            item["fz"] = {"BOOL": True}
        try:
            with translated(f"creating the sequencer of {pk}"):
                self._ddb.put_item(
                    TableName=self._table, Item=item, ConditionExpression="attribute_not_exists(pk)"
                )
        except ConditionFailed:
            pass

    def persist_resolved(self, pk: str, resolved: int) -> None:
        """Raise the stored resolved-head bound to ``resolved`` (never lowers it)."""
        try:
            with translated(f"storing the resolved head of {pk}"):
                self._ddb.update_item(
                    TableName=self._table,
                    Key=self._key(pk),
                    UpdateExpression="SET rs = :rs",
                    ConditionExpression="attribute_exists(nxt) AND rs < :rs",
                    ExpressionAttributeValues={":rs": {"N": str(resolved)}},
                )
        except ConditionFailed:
            pass  # another reader stored as much or more

    def resolve(self, pk: str) -> Resolved | None:
        """The resolved head of ledger ``pk`` (``domain.sequencing``): one GetItem of the
        sequencer, plus, while ids were allocated past the known head, queries of the items
        after it (and a PutItem per hole). None when the ledger has no sequencer (every
        stored item is resolved)."""
        state = self.state(pk)
        if state is None:
            return None
        top = state.next_id - 1
        with self._lock:
            known, last = self._known.get(pk, (-1, None))
        if known < state.resolved:
            known, last = state.resolved, None
        while known < top:
            items = self._after(pk, known, top)
            now_ms = self._now_ms()
            step = walk(known, items, now_ms, self._hole_after_ms, top)
            holes = list(step.holes)
            if step.resolved == (items[-1].entry_id if items else known) and len(items) < _PAGE:
                holes += stale_tail(step.resolved, state, now_ms, self._hole_after_ms)
            for entry_id in holes:
                self._settle(pk, settle(entry_id, state, now_ms))
            moved = max([step.resolved, *holes])
            if moved == known:
                break
            known, last = moved, step.last or last
            if len(items) < _PAGE and moved < top:
                break
        with self._lock:
            self._known[pk] = (known, last)
        idle = self._now_ms() - state.allocated_ms >= self._hole_after_ms
        if known - state.resolved >= RESOLVED_PERSIST_EVERY or (
            idle and known == top and known > state.resolved
        ):
            self.persist_resolved(pk, known)
        return Resolved(known, last, state)

    def _after(self, pk: str, after: int, top: int) -> list[IndexEntry]:
        """Up to ``_PAGE`` stored items with ids in ``(after, top]``, ascending."""
        with translated(f"reading entries of {pk} after {after}"):
            items = self._ddb.query(
                TableName=self._log,
                KeyConditionExpression="pk = :pk AND eid BETWEEN :a AND :b",
                ExpressionAttributeValues={
                    ":pk": {"S": pk},
                    ":a": {"N": str(after + 1)},
                    ":b": {"N": str(top)},
                },
                Limit=_PAGE,
                ConsistentRead=True,
            )["Items"]
        return [IndexEntry.from_item(item) for item in items]

    def _settle(self, pk: str, item: IndexEntry) -> None:
        """Write ``item`` (a hole, or a dead fencer's fence) unless its id is settled."""
        try:
            with translated(f"settling entry id {item.entry_id} of {pk}"):
                self._ddb.put_item(
                    TableName=self._log,
                    Item=item.to_item(pk),
                    ConditionExpression="attribute_not_exists(eid)",
                )
        except ConditionFailed:
            pass  # the writer (or another reader) settled it first

    def last_at_most(self, pk: str, resolved: Resolved) -> IndexEntry | None:
        """The highest stored entry (not a hole) with id <= the resolved head."""
        if resolved.last is not None and resolved.last.entry_id == resolved.head:
            return resolved.last
        return self._stored_last(pk, resolved.head)

    def _stored_last(self, pk: str, at_most: int | None) -> IndexEntry | None:
        """The highest stored item with id <= ``at_most`` (None: any) that is not a hole;
        strongly consistent queries, backwards."""
        condition = "pk = :pk" + ("" if at_most is None else " AND eid <= :top")
        values: dict = {":pk": {"S": pk}}
        if at_most is not None:
            values[":top"] = {"N": str(at_most)}
        kwargs = {
            "TableName": self._log,
            "KeyConditionExpression": condition,
            "ExpressionAttributeValues": values,
            "ScanIndexForward": False,
            "Limit": 10,
            "ConsistentRead": True,
        }
        while True:
            with translated(f"reading the head of {pk}"):
                page = self._ddb.query(**kwargs)
            for item in page["Items"]:
                entry = IndexEntry.from_item(item)
                if not entry.hole:
                    return entry
            if "LastEvaluatedKey" not in page:
                return None
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
