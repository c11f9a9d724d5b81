"""Which AWS requests each store port call makes: the model's copy of what
``magnetar_core.adapters.aws`` sends, method by method (tests/integration/
test_scale_model_mapping.py runs the AWS adapters on the emulator and checks every call's
request count against this table, so a change of the adapters that is not made here too
fails there).

A call's requests are listed in order; the first one carries the call's effect (the
memory adapter runs at its midpoint), the rest follow it (further pages, the read that
checks a lost conditional write, ...). Units are DynamoDB's: a write unit per 1 KB of the
item written (rounded up), a read unit per 4 KB read strongly consistently (half that
eventually consistent), summed over a query's items then rounded up.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from magnetar_core.adapters.aws.cursors import cursor_to_item
from magnetar_core.adapters.aws.grants import queue_json
from magnetar_core.domain.cursor.grants import Grant, grant_key
from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.log import IndexEntry, item_size

WRITE_UNIT_BYTES = 1024
READ_UNIT_BYTES = 4096
QUERY_PAGE_BYTES = 1024 * 1024
BATCH_GET_KEYS = 100
SMALL_ITEM_BYTES = 200
"""What the model takes an item of the topics/policies/tenancy tables to weigh (one unit)."""

TABLE_OF = {
    "log": "log",
    "cursors": "cursors",
    "producer_state": "cursors",
    "buffers": "cursors",
    "compaction": "cursors",
    "topics": "topics",
    "policies": "topics",
    "tenants": "topics",
    "permissions": "topics",
    "namespaces": "topics",
    "schemas": "topics",
    "triggers": "topics",
    "functions": "topics",
    "function_state": "topics",
    "watches": "notify",
}
"""The table each store lives in (``engine.aws.aws_stores``): stores of one table share
its per-key capacity."""


@dataclass(frozen=True)
class Request:
    """One AWS request: botocore's ``service.Operation``, the capacity key it is charged
    to (``table|partition key``, ``s3|prefix``; None: no per-key limit modelled) and its
    units."""

    operation: str
    key: str | None
    write_units: float = 0.0
    read_units: float = 0.0


def write_units(size_bytes: int) -> float:
    return max(1, math.ceil(size_bytes / WRITE_UNIT_BYTES))


def read_units(size_bytes: int, consistent: bool = True) -> float:
    units = max(1, math.ceil(size_bytes / READ_UNIT_BYTES))
    return units if consistent else units / 2


def _entry_bytes(pk: str, entries: Iterable[IndexEntry]) -> int:
    return sum(item_size(e.to_item(pk)) for e in entries)


def _query(key: str, size_bytes: int, consistent: bool = True) -> list[Request]:
    pages = 1 + size_bytes // QUERY_PAGE_BYTES
    per_page = size_bytes / pages
    return [Request("dynamodb.Query", key, read_units=read_units(int(per_page), consistent))
            for _ in range(pages)]  # fmt: skip


SEQUENCED_READS = {"last", "head", "read_from", "exists", "range_counts", "producer_tail"}
"""Log reads that read the ledger's sequencer first (``adapters.aws.log_sequence``): one
GetItem of ``(ledger, "$seq")``. Not charged here: the walk a reader makes past ids
committed since the resolved head it knows (a Query of up to 100 items), the resolved
bound it stores again every 64 ids or at the top (an UpdateItem), holes (a PutItem each);
``last``/``head`` skip their Query when the walk saw the head item."""


def _sequencer(method: str, pk: str, result: Any, error: BaseException | None) -> list[Request]:
    """``LogStore.allocate``: one UpdateItem of the sequencer; a refusal (fenced, epoch) is
    read back with a GetItem; a ledger's first allocation (id 0) first fails on the missing
    item, reads it (GetItem) and the ledger's last item (Query), creates it (PutItem) and
    allocates again."""
    key = f"cursors|{pk}"
    update = Request("dynamodb.UpdateItem", key, write_units=1)
    read = Request("dynamodb.GetItem", key, read_units=1)
    if error is not None:
        return [update, read]
    if result is not None and result.first_id == 0:
        created = Request("dynamodb.PutItem", key, write_units=1)
        last = Request("dynamodb.Query", f"log|{pk}", read_units=1)
        return [update, read, last, created, update]
    return [update]


def _log(method: str, a: Sequence[Any], result: Any, error: BaseException | None) -> list[Request]:
    pk = a[0]
    if method == "allocate":
        return _sequencer(method, pk, result, error)
    made = _log_base(method, a, result, error)
    if method in SEQUENCED_READS:
        made.insert(0, Request("dynamodb.GetItem", f"cursors|{pk}", read_units=1))
    return made


def _log_base(
    method: str, a: Sequence[Any], result: Any, error: BaseException | None
) -> list[Request]:
    pk = a[0]
    key = f"log|{pk}"
    if method == "exists":
        return []  # the sequencer's GetItem answers it
    if method == "append":
        return [Request("dynamodb.PutItem", key, write_units(item_size(a[1].to_item(pk))))]
    if method == "append_once":
        units = 2 * (write_units(item_size(a[1].to_item(pk))) + 1)
        return [Request("dynamodb.TransactWriteItems", key, write_units=units)]
    if method in ("last", "head", "last_with_messages"):
        size = _entry_bytes(pk, [result]) if isinstance(result, IndexEntry) else 0
        return [Request("dynamodb.Query", key, read_units=read_units(size))]
    if method == "read_from":
        if not result:  # the resolved head is below the start: the adapter queries nothing
            return []
        return [Request("dynamodb.Query", key, read_units=read_units(_entry_bytes(pk, result)))]
    if method == "range_counts":
        return _query(key, 40 * len(result or []), consistent=False)
    if method == "producer_tail":
        return _query(key, 40 * len(result or []))
    if method == "get_many":
        wanted = len(set(a[1]))
        size = _entry_bytes(pk, (result or {}).values())
        if wanted == 1:  # one id: a GetItem
            return [Request("dynamodb.GetItem", key, read_units=read_units(size))]
        batches = max(1, math.ceil(wanted / BATCH_GET_KEYS)) if wanted else 0
        return [Request("dynamodb.BatchGetItem", key, read_units=read_units(size) / max(batches, 1))
                for _ in range(batches)]  # fmt: skip
    raise NotImplementedError(f"the model maps no AWS requests for LogStore.{method}")


def _conditional_put(key: str, size_bytes: int, error: BaseException | None) -> list[Request]:
    """``clients.put_conditional``: a PutItem; a lost condition is checked by a GetItem."""
    put = Request("dynamodb.PutItem", key, write_units(size_bytes))
    if isinstance(error, ConditionFailed):
        return [put, Request("dynamodb.GetItem", key, read_units=read_units(size_bytes))]
    return [put]


def _cursors(
    method: str, a: Sequence[Any], result: Any, error: BaseException | None
) -> list[Request]:
    pk = a[0]
    key = f"cursors|{pk}"
    if method == "get":
        size = item_size(cursor_to_item(pk, result)) if result is not None else 0
        return [Request("dynamodb.GetItem", key, read_units=read_units(size))]
    if method == "put":
        return _conditional_put(key, item_size(cursor_to_item(pk, a[1])), error)
    if method == "delete":
        return [Request("dynamodb.DeleteItem", key, write_units=1)]
    if method == "list":
        return _query(key, sum(item_size(cursor_to_item(pk, s)) for s in result or []))
    if method in GRANT_METHODS:
        return _grants(method, a, result)
    raise NotImplementedError(f"the model maps no AWS requests for CursorStore.{method}")


GRANT_METHODS = {
    "grant", "hand_out", "put_grant", "ack_granted", "revoke_grant", "grants_of", "void_slot",
}  # fmt: skip


def _grant_bytes(grant: Grant | None) -> int:
    """About what a grant item weighs (``adapters.aws.grants``): keys, the queue's JSON,
    its counters, its number sets."""
    if grant is None:
        return 100
    numbers = len(grant.leased) + len(grant.acked)
    return 100 + len(queue_json(grant.queue)) + 8 * numbers


def _grants(method: str, a: Sequence[Any], result: Any) -> list[Request]:
    """Grant items (``adapters.aws.grants``): each call one request on the consumer's own
    key; a changing call is one UpdateItem, conditional or not, that still spends its
    write units when its condition fails (charged on the item as returned, or as read)."""
    if method == "grants_of":  # one BatchGetItem per 100 keys, each item read consistently
        ids, found = list(a[2]), result or {}
        units = [read_units(_grant_bytes(found.get(c))) for c in ids]
        return [Request("dynamodb.BatchGetItem", None, read_units=sum(units[i : i + BATCH_GET_KEYS]))
                for i in range(0, len(ids), BATCH_GET_KEYS)]  # fmt: skip
    key = f"cursors|{grant_key(a[0], a[1], a[2])}"
    if method == "grant":
        return [Request("dynamodb.GetItem", key, read_units=read_units(_grant_bytes(result)))]
    if method == "void_slot":
        return [Request("dynamodb.UpdateItem", key, write_units(_grant_bytes(None)))]
    if method == "put_grant":
        change = a[3]
        size = 100 + len(queue_json(change.queue)) + 8 * (len(change.leased) + len(change.folded))
        return [Request("dynamodb.UpdateItem", key, write_units(size))]
    size = _grant_bytes(result if isinstance(result, Grant) else None)
    return [Request("dynamodb.UpdateItem", key, write_units(size))]


def _entries(
    method: str, a: Sequence[Any], result: Any, error: BaseException | None
) -> list[Request]:
    key = "s3|" + str(a[0]).rsplit("/", 1)[0]
    if method in ("put", "put_new"):
        return [Request("s3.PutObject", key, write_units=1)]
    if method in ("get", "find"):
        return [Request("s3.GetObject", key, read_units=1)]
    if method == "delete":
        return [Request("s3.DeleteObject", key, write_units=1)]
    if method in ("upload_url", "download_url"):
        return []  # presigned locally: no request
    raise NotImplementedError(f"the model maps no AWS requests for EntryStore.{method}")


_GETS = {
    ("producer_state", "lease"), ("producer_state", "snapshot"),
    ("producer_state", "expired_totals"), ("topics", "get"), ("policies", "get"),
    ("tenants", "get"), ("namespaces", "exists"), ("permissions", "get"),
}  # fmt: skip
_CONDITIONAL_PUTS = {("producer_state", "put_lease"), ("topics", "put")}
_PLAIN_PUTS = {
    ("producer_state", "put_snapshot"), ("producer_state", "put_expired_totals"),
    ("policies", "put"), ("tenants", "put"),
}  # fmt: skip


def _small(store: str, method: str, a: Sequence[Any], error: BaseException | None) -> list[Request]:
    if store not in TABLE_OF:
        raise NotImplementedError(
            f"the model knows no table of the {store} store; add it to TABLE_OF"
        )
    key = f"{TABLE_OF[store]}|{a[0] if a else ''}"
    if (store, method) in _GETS:
        return [Request("dynamodb.GetItem", key, read_units=1)]
    if (store, method) in _CONDITIONAL_PUTS:
        return _conditional_put(key, SMALL_ITEM_BYTES, error)
    if (store, method) in _PLAIN_PUTS:
        return [Request("dynamodb.PutItem", key, write_units=1)]
    raise NotImplementedError(f"the model maps no AWS requests for {store}.{method}")


MAPPERS: dict[str, Callable[[str, Sequence[Any], Any, BaseException | None], list[Request]]] = {
    "log": _log,
    "cursors": _cursors,
    "entries": _entries,
}


def aws_requests(
    store: str, method: str, args: Sequence[Any], result: Any = None,
    error: BaseException | None = None,
) -> list[Request]:  # fmt: skip
    """The AWS requests ``Stores.<store>.<method>(*args)`` makes when it answered ``result``
    or raised ``error``. Raises NotImplementedError for a call the model does not know."""
    mapper = MAPPERS.get(store)
    if mapper is not None:
        return mapper(method, args, result, error)
    return _small(store, method, args, error)
