"""DynamoDB adapters of topic compaction: the ``$compaction`` pointer and compacted ledgers.

- The pointer is one item of the cursors table per partition ledger (``pk`` = the log key,
  ``sub`` = ``$compaction``), versioned (``ver``): status, last error, horizon, the serving
  compacted ledger, the current run and the retired ledgers (JSON ``ret``).
- A compacted ledger lives in the log table under ``<log key>|compacted|<run id>``: one
  item per entry the compacted view keeps, keyed by the ORIGINAL entry id, with the log
  item's attributes (count, publish times, key hashes, ...) except that ``obj`` / ``off`` /
  ``len`` address a copy of the entry's bytes in a compacted segment object
  (``compacted/<topic path>/<ledger>/<run id>/<first>-<last>``), and ``kb``, the kept batch
  indexes (a number set; absent when every message of the entry is kept). Copies, not
  references: retention may delete the original entries.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from magnetar_core.adapters.aws.clients import (
    BotoClient,
    put_conditional,
    translated,
    version_condition,
)
from magnetar_core.domain.compaction import (
    CompactedEntry,
    CompactionState,
    Retired,
)
from magnetar_core.domain.log import IndexEntry

POINTER = "$compaction"


def compacted_item(
    source: dict, pk: str, obj: str, offset: int, length: int, kept: Iterable[int] | None
) -> dict:
    """The compacted ledger item of a kept entry, from its log (or earlier compacted) item.

    ``kept`` are the kept batch indexes (None or all of them: the whole entry)."""
    item = {k: v for k, v in source.items() if k not in ("kb", "d")}  # d: now in obj
    item.update(
        {"pk": {"S": pk}, "obj": {"S": obj}, "off": {"N": str(offset)}, "len": {"N": str(length)}}
    )
    count = int(source.get("n", {"N": "1"})["N"])
    indexes = sorted(set(kept)) if kept is not None else []
    if kept is not None and len(indexes) < count:
        item["kb"] = {"NS": [str(i) for i in indexes]}
    return item


def kept_of(item: dict) -> tuple[int, ...] | None:
    """The kept batch indexes of a compacted item (None: every message)."""
    if "kb" not in item:
        return None
    return tuple(sorted(int(v) for v in item["kb"]["NS"]))


def _entry(item: dict) -> CompactedEntry:
    return CompactedEntry(IndexEntry.from_item(item), kept_of(item))


def pointer_to_item(pk: str, state: CompactionState) -> dict:
    """The pointer item for ``state`` at its next version."""
    item = {
        "pk": {"S": pk},
        "sub": {"S": POINTER},
        "ver": {"N": str(state.version + 1)},
        "st": {"S": state.status},
        "hz": {"N": str(state.horizon)},
        "t0": {"N": str(state.started_ms)},
        "t1": {"N": str(state.finished_ms)},
        "ret": {"S": json.dumps([[r.ledger, r.at_ms, r.trashed] for r in state.retired])},
    }
    for name, value in (
        ("err", state.last_error),
        ("cl", state.ledger),
        ("run", state.run_id),
        ("rl", state.run_ledger),
    ):
        if value:
            item[name] = {"S": value}
    return item


def pointer_from_item(item: dict) -> CompactionState:
    """Rebuild the compaction state from its pointer item."""

    def text(name: str) -> str:
        return item[name]["S"] if name in item else ""

    return CompactionState(
        status=text("st"),
        last_error=text("err"),
        horizon=int(item["hz"]["N"]),
        ledger=text("cl"),
        run_id=text("run"),
        run_ledger=text("rl"),
        started_ms=int(item["t0"]["N"]),
        finished_ms=int(item["t1"]["N"]),
        retired=[Retired(n, int(at), bool(tr)) for n, at, tr in json.loads(item["ret"]["S"])],
        version=int(item["ver"]["N"]),
    )


class CompactionStore:
    """The pointer (cursors table) and compacted ledger items (log table)."""

    def __init__(self, dynamodb: BotoClient, cursors_table: str, log_table: str) -> None:
        self._ddb = dynamodb
        self._cursors = cursors_table
        self._log = log_table

    # -- pointer ---------------------------------------------------------------------------

    def get(self, pk: str) -> CompactionState:
        """The partition's compaction state (NOT_RUN, version 0, when never compacted);
        one strongly consistent read."""
        with translated(f"reading the compaction state of {pk}"):
            item = self._ddb.get_item(
                TableName=self._cursors,
                Key={"pk": {"S": pk}, "sub": {"S": POINTER}},
                ConsistentRead=True,
            ).get("Item")
        return pointer_from_item(item) if item else CompactionState()

    def put(self, pk: str, state: CompactionState) -> None:
        """Write ``state`` if unchanged since read (version; 0: only if absent). On success
        ``state.version`` is the new version. Raises ConditionFailed."""
        put_conditional(
            self._ddb, self._cursors, pointer_to_item(pk, state),
            {"pk": {"S": pk}, "sub": {"S": POINTER}}, version_condition(state.version),
            f"writing the compaction state of {pk}",
        )  # fmt: skip
        state.version += 1

    # -- compacted ledgers -----------------------------------------------------------------

    def read_from(self, ledger: str, start: int, limit: int) -> list[CompactedEntry]:
        """Up to ``limit`` kept entries with ids at or after ``start``, ascending; one query."""
        with translated(f"reading compacted entries of {ledger} from {start}"):
            items = self._ddb.query(
                TableName=self._log,
                KeyConditionExpression="pk = :pk AND eid >= :start",
                ExpressionAttributeValues={":pk": {"S": ledger}, ":start": {"N": str(start)}},
                Limit=limit,
                ConsistentRead=True,
            )["Items"]
        return [_entry(item) for item in items]

    def get_many(self, ledger: str, entry_ids: Iterable[int]) -> dict[int, CompactedEntry]:
        """Kept entries by id (BatchGetItem, 100 keys a request); ids not kept are absent."""
        wanted = sorted(set(entry_ids))
        found: dict[int, CompactedEntry] = {}
        for i in range(0, len(wanted), 100):
            keys = [{"pk": {"S": ledger}, "eid": {"N": str(e)}} for e in wanted[i : i + 100]]
            request: dict[str, object] | None = {self._log: {"Keys": keys, "ConsistentRead": True}}
            while request:
                with translated(f"reading compacted entries of {ledger}"):
                    page = self._ddb.batch_get_item(RequestItems=request)
                for item in page["Responses"].get(self._log, []):
                    entry = _entry(item)
                    found[entry.entry_id] = entry
                request = page.get("UnprocessedKeys") or None
        return found
