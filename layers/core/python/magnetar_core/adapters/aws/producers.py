"""DynamoDB adapter for per-partition producer state in the cursors table, under reserved
subscription names: ``$producers`` (the exclusive lease and access epoch) and ``$dedup``
(a snapshot of the deduplication state). ``$`` never occurs in subscription names."""

from __future__ import annotations

import json

from magnetar_core.adapters.aws.clients import (
    BotoClient,
    Item,
    put_conditional,
    translated,
    version_condition,
)
from magnetar_core.domain.producers import DedupSnapshot, ProducerLease

LEASE = "$producers"
SNAPSHOT = "$dedup"


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
