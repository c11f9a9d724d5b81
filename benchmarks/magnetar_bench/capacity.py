"""DynamoDB capacity units from item sizes, as AWS bills on-demand tables.

``item_size_bytes`` follows DynamoDB's item size rules (attribute names plus values: strings
and binaries by their bytes, numbers ~1 byte per two significant digits plus 1, lists and
maps 3 bytes plus 1 per element). On-demand billing: a write costs one write request unit
(WRU) per started 1 KB of the item (the larger of before and after for updates and
deletes; twice in a transaction); a strongly consistent read one read request unit (RRU) per
started 4 KB of the items read (a Query or batch sums its items first), half for an eventually
consistent read; a read that finds nothing still costs the minimum.

``CapacityMeter`` counts them for every DynamoDB request of clients made while it is
installed (botocore events on ``magnetar_core.adapters.aws.clients.new_session``'s sessions);
the sizes of updated and deleted items, which no request carries, are read from the emulator
with an uncounted client.
"""

from __future__ import annotations

import base64
import json
import math
import threading
from collections import Counter
from typing import Any

WRITE_UNIT_BYTES = 1024
READ_UNIT_BYTES = 4096


def value_size_bytes(value: dict[str, Any]) -> int:
    """Bytes of one attribute value in DynamoDB's wire format (``{"S": "x"}``, ...)."""
    (kind, data), = value.items()  # fmt: skip
    if kind == "S":
        return len(data.encode())
    if kind == "N":
        digits = data.lstrip("-").replace(".", "").lstrip("0") or "0"
        return (len(digits.rstrip("0") or "0") + 1) // 2 + 1
    if kind == "B":
        return len(base64.b64decode(data)) if isinstance(data, str) else len(data)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(s.encode()) for s in data)
    if kind == "NS":
        return sum(value_size_bytes({"N": n}) for n in data)
    if kind == "BS":
        return sum(value_size_bytes({"B": b}) for b in data)
    if kind == "L":
        return 3 + sum(1 + value_size_bytes(v) for v in data)
    if kind == "M":
        return 3 + sum(1 + len(k.encode()) + value_size_bytes(v) for k, v in data.items())
    raise ValueError(f"unknown DynamoDB attribute type {kind!r}")


def item_size_bytes(item: dict[str, dict[str, Any]] | None) -> int:
    """Bytes of an item in DynamoDB's wire format (0 for None: nothing there)."""
    return sum(len(name.encode()) + value_size_bytes(v) for name, v in (item or {}).items())


def write_units(size_bytes: int) -> int:
    """WRUs of writing an item of ``size_bytes`` (at least 1)."""
    return max(1, math.ceil(size_bytes / WRITE_UNIT_BYTES))


def read_units(size_bytes: int, consistent: bool) -> float:
    """RRUs of reading ``size_bytes`` of items in one request (at least one unit's worth)."""
    units = max(1, math.ceil(size_bytes / READ_UNIT_BYTES))
    return float(units) if consistent else units / 2


class CapacityMeter:
    """WRUs and RRUs by table of every DynamoDB request made by clients of sessions created
    while installed (``install``/``uninstall``); ``lookup`` is an uncounted DynamoDB client on
    the same endpoint (item sizes of updates and deletes)."""

    def __init__(self, lookup: Any) -> None:
        self._lookup = lookup
        self._lock = threading.Lock()
        self.write_units: Counter[str] = Counter()
        self.read_units: Counter[str] = Counter()
        self._original: Any = None

    def install(self) -> None:
        from magnetar_core.adapters.aws import clients

        self._original = original = clients.new_session

        def metered_session(region: str) -> Any:
            session = original(region)
            session.events.register("before-call.dynamodb.*", self._before)
            session.events.register("after-call.dynamodb.*", self._after)
            return session

        clients.new_session = metered_session

    def uninstall(self) -> None:
        from magnetar_core.adapters.aws import clients

        if self._original is not None:
            clients.new_session, self._original = self._original, None

    def snapshot(self) -> tuple[float, float]:
        """``(write units, read units)`` so far, all tables."""
        with self._lock:
            return sum(self.write_units.values()), sum(self.read_units.values())

    def by_table(self) -> Counter[str]:
        """Units so far by ``"<table> WRU"`` / ``"<table> RRU"``."""
        with self._lock:
            units: Counter[str] = Counter({f"{k} WRU": v for k, v in self.write_units.items()})
            units.update({f"{k} RRU": v for k, v in self.read_units.items()})
            return units

    def _before(self, model: Any, params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:  # fmt: skip
        body = params.get("body") or b"{}"
        request = json.loads(body.decode() if isinstance(body, bytes) else body)
        context["magnetar_request"] = request
        if model.name == "DeleteItem":  # the deleted item's size: only the table has it
            context["magnetar_before"] = self._size_of(request)

    def _after(self, model: Any, parsed: dict[str, Any], context: dict[str, Any], **_: Any) -> None:  # fmt: skip
        request = context.get("magnetar_request") or {}
        if parsed.get("Error") or parsed.get("ResponseMetadata", {}).get("HTTPStatusCode", 200) >= 400:  # fmt: skip
            if model.name in ("PutItem", "UpdateItem", "DeleteItem"):  # a failed condition
                self._add(self.write_units, request.get("TableName", "?"), 1)  # still bills
            return
        table, name = request.get("TableName", "?"), model.name
        consistent = bool(request.get("ConsistentRead"))
        if name == "PutItem":
            self._add(self.write_units, table, write_units(item_size_bytes(request["Item"])))
        elif name == "UpdateItem":
            self._add(self.write_units, table, write_units(self._size_of(request)))
        elif name == "DeleteItem":
            self._add(self.write_units, table, write_units(context.get("magnetar_before", 0)))
        elif name == "GetItem":
            size = item_size_bytes(parsed.get("Item"))
            self._add(self.read_units, table, read_units(size, consistent))
        elif name in ("Query", "Scan"):
            size = sum(item_size_bytes(i) for i in parsed.get("Items", []))
            self._add(self.read_units, table, read_units(size, consistent))
        elif name == "BatchGetItem":
            for table_name, items in (parsed.get("Responses") or {}).items():
                keys = request.get("RequestItems", {}).get(table_name, {})
                strong = bool(keys.get("ConsistentRead"))
                for item in items:
                    self._add(
                        self.read_units, table_name, read_units(item_size_bytes(item), strong)
                    )
        elif name == "BatchWriteItem":
            for table_name, writes in (request.get("RequestItems") or {}).items():
                for write in writes:
                    item = (write.get("PutRequest") or {}).get("Item")
                    self._add(self.write_units, table_name, write_units(item_size_bytes(item)))
        elif name == "TransactWriteItems":
            for action in request.get("TransactItems", []):
                (kind, body), = action.items()  # fmt: skip
                item = body.get("Item")
                size = item_size_bytes(item) if item is not None else self._size_of(body)
                self._add(self.write_units, body.get("TableName", "?"), 2 * write_units(size))

    def _size_of(self, request: dict[str, Any]) -> int:
        """The stored size of the item ``request`` names by ``Key`` (0: none)."""
        if "Key" not in request:
            return 0
        found = self._lookup.get_item(
            TableName=request["TableName"], Key=request["Key"], ConsistentRead=True
        )
        return item_size_bytes(found.get("Item"))

    def _add(self, counter: Counter[str], table: str, units: float) -> None:
        with self._lock:
            counter[table] += units  # type: ignore[assignment]
