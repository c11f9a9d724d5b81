"""DynamoDB and API Gateway adapters of the notification channel (``domain.notify``).

``WatchStore`` keeps connections and watches in the notify table (``NOTIFY_TABLE``: ``pk``,
``sk`` strings, TTL on ``expiresAt`` in epoch seconds): a watch under its partition's full
name, listed again under ``$conn/<connection id>`` beside the connection's own record
(``sk`` ``$``, the role it proved). ``ManagementConnections`` posts through API Gateway's
management API (``NOTIFY_ENDPOINT``, the WebSocket stage's https URL).
"""

from __future__ import annotations

from collections.abc import Callable

from botocore.exceptions import ClientError

from magnetar_core.adapters.aws.clients import BotoClient, error_code, translated
from magnetar_core.domain.notify import (
    CONNECTION_PREFIX,
    CONNECTION_SK,
    Watch,
    listing_key,
    watch_key,
)

BATCH = 25
"""Most items of one BatchWriteItem."""


def _watch_item(pk: str, sk: str, w: Watch, expires_s: int) -> dict:
    return {
        "pk": {"S": pk},
        "sk": {"S": sk},
        "topic": {"S": w.topic},
        "sub": {"S": w.subscription},
        "consumer": {"S": w.consumer_id},
        "conn": {"S": w.connection_id},
        "expiresAt": {"N": str(expires_s)},
    }


def _watch_of(item: dict) -> Watch:
    return Watch(item["topic"]["S"], item["sub"]["S"], item["consumer"]["S"], item["conn"]["S"])


class WatchStore:
    """The notify table's connections and watches (see the module)."""

    def __init__(self, dynamodb: BotoClient, table: str) -> None:
        self._db = dynamodb
        self._table = table

    def connect(self, connection_id: str, role: str | None, expires_ms: int) -> None:
        item = {
            "pk": {"S": CONNECTION_PREFIX + connection_id},
            "sk": {"S": CONNECTION_SK},
            "expiresAt": {"N": str(expires_ms // 1000)},
        }
        if role is not None:
            item["role"] = {"S": role}
        with translated(f"recording connection {connection_id}"):
            self._db.put_item(TableName=self._table, Item=item)

    def connection(self, connection_id: str) -> tuple[bool, str | None]:
        key = {"pk": {"S": CONNECTION_PREFIX + connection_id}, "sk": {"S": CONNECTION_SK}}
        with translated(f"reading connection {connection_id}"):
            item = self._db.get_item(TableName=self._table, Key=key, ConsistentRead=True).get(
                "Item"
            )
        if item is None:
            return False, None
        return True, item["role"]["S"] if "role" in item else None

    def put(self, watches: list[Watch], expires_ms: int) -> None:
        items = []
        for w in watches:
            items.append(_watch_item(*watch_key(w), w, expires_ms // 1000))
            items.append(_watch_item(*listing_key(w), w, expires_ms // 1000))
        self._write([{"PutRequest": {"Item": item}} for item in items], "storing watches")

    def of_topic(self, topic: str) -> list[Watch]:
        watches: list[Watch] = []
        kwargs: dict = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": topic}},
        }
        with translated(f"listing the watches of {topic}"):
            while True:
                page = self._db.query(**kwargs)
                watches.extend(_watch_of(item) for item in page.get("Items", []))
                if "LastEvaluatedKey" not in page:
                    return watches
                kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def consume(self, watch: Watch) -> bool:
        pk, sk = watch_key(watch)
        with translated(f"consuming a watch of {watch.topic}"):
            try:
                self._db.delete_item(
                    TableName=self._table,
                    Key={"pk": {"S": pk}, "sk": {"S": sk}},
                    ConditionExpression="attribute_exists(pk)",
                )
            except ClientError as exc:
                if error_code(exc) == "ConditionalCheckFailedException":
                    return False
                raise
        return True

    def disconnect(self, connection_id: str) -> list[Watch]:
        pk = CONNECTION_PREFIX + connection_id
        with translated(f"listing connection {connection_id}"):
            items = self._db.query(
                TableName=self._table,
                KeyConditionExpression="pk = :pk",
                ExpressionAttributeValues={":pk": {"S": pk}},
                ConsistentRead=True,
            ).get("Items", [])
        had = [_watch_of(item) for item in items if item["sk"]["S"] != CONNECTION_SK]
        keys = [(pk, item["sk"]["S"]) for item in items] + [watch_key(w) for w in had]
        requests = [{"DeleteRequest": {"Key": {"pk": {"S": p}, "sk": {"S": s}}}} for p, s in keys]
        self._write(requests, f"forgetting connection {connection_id}")
        return had

    def _write(self, requests: list[dict], action: str) -> None:
        """BatchWriteItem ``requests`` (in batches of 25), resending what is unprocessed."""
        with translated(action):
            for start in range(0, len(requests), BATCH):
                pending = {self._table: requests[start : start + BATCH]}
                while pending:
                    pending = (
                        self._db.batch_write_item(RequestItems=pending).get("UnprocessedItems")
                        or {}
                    )


class ManagementConnections:
    """Posts to WebSocket connections through API Gateway's management API client
    (``apigatewaymanagementapi`` on the stage's https endpoint), made by ``management()`` on
    the first post (most containers never post: no client at their cold start)."""

    def __init__(self, management: Callable[[], BotoClient]) -> None:
        self._make = management
        self._api: BotoClient | None = None

    def post(self, connection_id: str, data: bytes) -> bool:
        if self._api is None:
            self._api = self._make()
        with translated(f"posting to connection {connection_id}"):
            try:
                self._api.post_to_connection(ConnectionId=connection_id, Data=data)
            except ClientError as exc:
                if error_code(exc) in ("GoneException", "410"):
                    return False
                raise
        return True
