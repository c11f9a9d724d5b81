"""DynamoDB adapter for non-persistent topics: per-subscription buffers of entries, kept in
the cursors table beside the cursors (``pk`` = ``<partition>|np|<subscription>``, ``sub`` = a
time-ordered unique key). Items expire by TTL; nothing is ever written to S3."""

from __future__ import annotations

from magnetar_core.adapters.aws.clients import BotoClient, translated
from magnetar_core.domain.buffers import BufferedEntry
from magnetar_core.domain.errors import ConditionFailed


class BufferStore:
    """Appends to and takes from subscription buffers."""

    def __init__(self, dynamodb: BotoClient, table: str) -> None:
        self._ddb = dynamodb
        self._table = table

    def append(self, pk: str, key: str, entry_id: int, data: bytes, expires_s: int) -> None:
        """Buffer one entry for one subscription; one PutItem."""
        with translated(f"buffering a non-persistent entry for {pk}"):
            self._ddb.put_item(
                TableName=self._table,
                Item={
                    "pk": {"S": pk},
                    "sub": {"S": key},
                    "eid": {"N": str(entry_id)},
                    "data": {"B": data},
                    "ttl": {"N": str(expires_s)},
                },
            )

    def peek(self, pk: str, limit: int, now_s: int) -> list[str]:
        """Sort keys of up to ``limit`` unexpired buffered entries, oldest first."""
        with translated(f"reading the buffer of {pk}"):
            items = self._ddb.query(
                TableName=self._table,
                KeyConditionExpression="pk = :pk",
                FilterExpression="#t > :now",
                ExpressionAttributeNames={"#t": "ttl", "#s": "sub"},
                ExpressionAttributeValues={":pk": {"S": pk}, ":now": {"N": str(now_s)}},
                ProjectionExpression="#s",
                Limit=limit,
                ConsistentRead=True,
            )["Items"]
        return [item["sub"]["S"] for item in items]

    def take(self, pk: str, key: str) -> BufferedEntry | None:
        """Remove one buffered entry and return it, or None when another consumer won it:
        a conditional DeleteItem hands each entry to exactly one consumer."""
        try:
            with translated(f"taking {key} from {pk}"):
                old = self._ddb.delete_item(
                    TableName=self._table,
                    Key={"pk": {"S": pk}, "sub": {"S": key}},
                    ConditionExpression="attribute_exists(pk)",
                    ReturnValues="ALL_OLD",
                )["Attributes"]
        except ConditionFailed:
            return None
        return BufferedEntry(key, int(old["eid"]["N"]), bytes(old["data"]["B"]))
