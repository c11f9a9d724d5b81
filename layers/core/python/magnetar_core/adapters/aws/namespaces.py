"""DynamoDB adapter for the namespaces that exist, in the topics table.

One item per namespace: ``pk = $namespaces/<tenant>``, ``name = $namespace/<namespace>``
(names that start with ``$`` are never topics: topic listings and the maintenance jobs'
scans pass over them). Listing a tenant's namespaces is one Query. Creation is conditional
(``attribute_not_exists``) and exactly once when an answer is lost
(``clients.put_conditional``). Raises ConditionFailed, TooManyRequests, StorageFault.
"""

from __future__ import annotations

from magnetar_core.adapters.aws.clients import (
    BotoClient,
    Item,
    put_conditional,
    translated,
)

NAMESPACES_PK = "$namespaces/"
NAMESPACE_PREFIX = "$namespace/"


def namespace_key(namespace: str) -> Item:
    """The key of ``tenant/namespace``'s item."""
    tenant, _, local = namespace.partition("/")
    return {"pk": {"S": NAMESPACES_PK + tenant}, "name": {"S": NAMESPACE_PREFIX + local}}


class NamespaceStore:
    """Records, lists and removes namespaces."""

    def __init__(self, dynamodb: BotoClient, table: str) -> None:
        self._ddb = dynamodb
        self._table = table

    def exists(self, namespace: str) -> bool:
        """Whether the namespace exists (one strongly consistent GetItem)."""
        with translated(f"reading namespace {namespace}"):
            item = self._ddb.get_item(
                TableName=self._table,
                Key=namespace_key(namespace),
                ConsistentRead=True,
                ProjectionExpression="pk",
            ).get("Item")
        return item is not None

    def list(self, tenant: str) -> list[str]:
        """The tenant's namespaces as ``tenant/namespace``, sorted (one Query, paged)."""
        kwargs: dict = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND begins_with(#n, :prefix)",
            "ExpressionAttributeNames": {"#n": "name"},
            "ExpressionAttributeValues": {
                ":pk": {"S": NAMESPACES_PK + tenant},
                ":prefix": {"S": NAMESPACE_PREFIX},
            },
            "ProjectionExpression": "#n",
            "ConsistentRead": True,
        }
        names: list[str] = []
        while True:
            with translated(f"listing the namespaces of {tenant}"):
                page = self._ddb.query(**kwargs)
            names.extend(
                f"{tenant}/{i['name']['S'][len(NAMESPACE_PREFIX) :]}" for i in page["Items"]
            )
            if "LastEvaluatedKey" not in page:
                return sorted(names)
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def create(self, namespace: str) -> None:
        """Record the namespace; raises ConditionFailed when it exists."""
        key = namespace_key(namespace)
        put_conditional(
            self._ddb,
            self._table,
            {**key, "ver": {"N": "1"}},
            key,
            {"ConditionExpression": "attribute_not_exists(pk)"},
            f"creating namespace {namespace}",
        )

    def delete(self, namespace: str) -> None:
        """Remove the namespace's item; raises ConditionFailed when there is none."""
        with translated(f"deleting namespace {namespace}"):
            self._ddb.delete_item(
                TableName=self._table,
                Key=namespace_key(namespace),
                ConditionExpression="attribute_exists(pk)",
            )
