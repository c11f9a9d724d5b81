"""DynamoDB adapter for topic metadata: one item per topic, keyed by namespace and name.

A deleted topic keeps a tombstone (``state = deleted``) holding its last ledger id, so a
re-created topic gets a new ledger and never sees the old one's entries or cursors.
"""

from __future__ import annotations

from magnetar_core.adapters.aws.clients import BotoClient, Item, put_conditional, translated
from magnetar_core.adapters.aws.policies import (
    quota_attributes,
    quotas_of,
    retention_attributes,
    retention_of,
)
from magnetar_core.domain.topic import TopicMeta
from magnetar_wire.names import TopicName


def _to_meta(item: dict) -> TopicMeta:
    ns = item["pk"]["S"]
    return TopicMeta(
        name=TopicName.parse(f"{ns}/{item['name']['S']}"),
        ledger_id=int(item["ledger"]["N"]),
        partitions=int(item["parts"]["N"]),
        state=item["state"]["S"],
        version=int(item["ver"]["N"]),
        created_ms=int(item["created"]["N"]),
        deduplication=item["dedup"]["BOOL"] if "dedup" in item else None,
        retention=retention_of(item),
        message_ttl_seconds=int(item["msg_ttl_s"]["N"]) if "msg_ttl_s" in item else None,
        terminated=frozenset(int(n) for n in item.get("term", {}).get("NS", ())),
        quotas=quotas_of(item),
    )


class TopicStore:
    """Reads and conditionally writes topic metadata."""

    def __init__(self, dynamodb: BotoClient, table: str) -> None:
        self._ddb = dynamodb
        self._table = table

    def get(self, name: TopicName) -> TopicMeta | None:
        """The topic's metadata (a tombstone too), strongly consistent, or None."""
        with translated(f"reading topic {name}"):
            item = self._ddb.get_item(
                TableName=self._table,
                Key={"pk": {"S": name.namespace_name}, "name": {"S": name.local}},
                ConsistentRead=True,
            ).get("Item")
        return _to_meta(item) if item else None

    def put(self, meta: TopicMeta, previous: TopicMeta | None) -> None:
        """Write ``meta`` if the stored item is still ``previous`` (None: no item).

        Raises ConditionFailed when someone else created or changed the topic first.
        """
        item: Item = {
            "pk": {"S": meta.name.namespace_name},
            "name": {"S": meta.name.local},
            "ledger": {"N": str(meta.ledger_id)},
            "parts": {"N": str(meta.partitions)},
            "state": {"S": meta.state},
            "ver": {"N": str(meta.version)},
            "created": {"N": str(meta.created_ms)},
        }
        if meta.deduplication is not None:
            item["dedup"] = {"BOOL": meta.deduplication}
        item.update(retention_attributes(meta.retention))
        if meta.message_ttl_seconds is not None:
            item["msg_ttl_s"] = {"N": str(meta.message_ttl_seconds)}
        item.update(quota_attributes(meta.quotas))
        if meta.terminated:  # a number set (never empty in DynamoDB): the closed partitions
            item["term"] = {"NS": [str(n) for n in sorted(meta.terminated)]}
        condition: dict[str, object]
        if previous is None:
            condition = {
                "ConditionExpression": "attribute_not_exists(#n)",
                "ExpressionAttributeNames": {"#n": "name"},
            }
        else:
            condition = {
                "ConditionExpression": "ver = :v",
                "ExpressionAttributeValues": {":v": {"N": str(previous.version)}},
            }
        key = {"pk": item["pk"], "name": item["name"]}
        put_conditional(self._ddb, self._table, item, key, condition, f"writing topic {meta.name}")

    def list(self, namespace_name: str) -> list[TopicMeta]:
        """Active topics of a namespace (``domain://tenant/namespace``), by name."""
        kwargs = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": namespace_name}},
        }
        out: list[TopicMeta] = []
        while True:
            with translated(f"listing topics of {namespace_name}"):
                page = self._ddb.query(**kwargs)
            out.extend(
                m
                for m in map(
                    _to_meta, (i for i in page["Items"] if not i["name"]["S"].startswith("$"))
                )
                if m.active
            )
            if "LastEvaluatedKey" not in page:
                return sorted(out, key=lambda m: m.name.local)
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
