"""DynamoDB adapter for per-partition producer state in the cursors table, under reserved
subscription names: ``$producers`` (the exclusive lease and access epoch), ``$dedup``
(a snapshot of the deduplication state) and ``$expired`` (totals of the entries the expire
job deleted: ``thr`` through, ``n`` messages, ``b`` bytes, ``e`` entries). ``$`` never
occurs in subscription names."""

from __future__ import annotations

import json

from magnetar_core.adapters.aws.clients import (
    BotoClient,
    Item,
    put_conditional,
    translated,
    version_condition,
)
from magnetar_core.domain.counters import ExpiredTotals
from magnetar_core.domain.producers import DedupSnapshot, ProducerLease

LEASE = "$producers"
SNAPSHOT = "$dedup"
EXPIRED = "$expired"


class ProducerStateStore:
    """Reads and conditionally writes the lease and the dedup snapshot."""

    def __init__(self, dynamodb: BotoClient, table: str) -> None:
        self._ddb = dynamodb
        self._table = table

    def _get(self, pk: str, name: str) -> dict | None:
        with translated(f"reading {name} of {pk}"):
            return self._ddb.get_item(
                TableName=self._table,
                Key={"pk": {"S": pk}, "sub": {"S": name}},
                ConsistentRead=True,
            ).get("Item")

    def lease(self, pk: str) -> ProducerLease:
        item = self._get(pk, LEASE)
        if not item:
            return ProducerLease()
        return ProducerLease(
            epoch=int(item["ep"]["N"]),
            holder=item["holder"]["S"] if "holder" in item else None,
            mode=item["mode"]["S"] if "mode" in item else None,
            role=item["role"]["S"] if "role" in item else None,
            seen_ms=int(item["seen"]["N"]),
            version=int(item["ver"]["N"]),
        )

    def put_lease(self, pk: str, lease: ProducerLease) -> None:
        """Write ``lease`` if unchanged since read (version); raises ConditionFailed."""
        item: Item = {
            "pk": {"S": pk},
            "sub": {"S": LEASE},
            "ep": {"N": str(lease.epoch)},
            "seen": {"N": str(lease.seen_ms)},
            "ver": {"N": str(lease.version + 1)},
        }
        if lease.holder is not None:
            item["holder"] = {"S": lease.holder}
            item["mode"] = {"S": lease.mode or "Exclusive"}
            if lease.role is not None:
                item["role"] = {"S": lease.role}
        put_conditional(
            self._ddb, self._table, item, {"pk": {"S": pk}, "sub": {"S": LEASE}},
            version_condition(lease.version), f"writing the producer lease of {pk}",
        )  # fmt: skip
        lease.version += 1

    def snapshot(self, pk: str) -> DedupSnapshot:
        item = self._get(pk, SNAPSHOT)
        if not item:
            return DedupSnapshot()
        return DedupSnapshot(int(item["upto"]["N"]), json.loads(item["st"]["S"]))

    def put_snapshot(self, pk: str, snapshot: DedupSnapshot) -> None:
        """Write a snapshot unless a newer one is stored; raises ConditionFailed."""
        with translated(f"writing the dedup snapshot of {pk}"):
            self._ddb.put_item(
                TableName=self._table,
                Item={
                    "pk": {"S": pk},
                    "sub": {"S": SNAPSHOT},
                    "upto": {"N": str(snapshot.upto)},
                    "st": {"S": json.dumps(snapshot.last, separators=(",", ":"))},
                },
                ConditionExpression="attribute_not_exists(pk) OR upto < :u",
                ExpressionAttributeValues={":u": {"N": str(snapshot.upto)}},
            )

    def expired_totals(self, pk: str) -> ExpiredTotals:
        """The totals the expire job folded (``through`` -1, zeros, when none)."""
        item = self._get(pk, EXPIRED)
        if not item:
            return ExpiredTotals()
        n = {k: int(v["N"]) for k, v in item.items() if "N" in v}
        return ExpiredTotals(n["thr"], n["n"], n["b"], n["e"])

    def put_expired_totals(self, pk: str, totals: ExpiredTotals) -> None:
        """Store ``totals`` unless some at or beyond its ``through`` are stored; raises
        ConditionFailed."""
        with translated(f"writing the expired totals of {pk}"):
            self._ddb.put_item(
                TableName=self._table,
                Item={
                    "pk": {"S": pk},
                    "sub": {"S": EXPIRED},
                    "thr": {"N": str(totals.through)},
                    "n": {"N": str(totals.messages)},
                    "b": {"N": str(totals.size_bytes)},
                    "e": {"N": str(totals.entries)},
                },
                ConditionExpression="attribute_not_exists(pk) OR thr < :t",
                ExpressionAttributeValues={":t": {"N": str(totals.through)}},
            )
