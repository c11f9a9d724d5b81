"""DynamoDB adapter for topics' schemas, in the topics table beside the topic.

A schema version is ``pk = <namespace name>`` (``persistent://t/ns``), ``name =
$schema/<topic local name>/<version, 10 digits>`` (``$``: never a topic name, so listings
and the jobs pass over it), ``spec`` (JSON: ``SchemaData.to_json``). A topic's versions are
one Query on the prefix, in version order. Each is written once, conditional on the key
being new. Raises ConditionFailed, TooManyRequests, StorageFault.
"""

from __future__ import annotations

from magnetar_core.adapters.aws.clients import (
    BotoClient,
    Item,
    put_conditional,
    translated,
    version_condition,
)
from magnetar_core.domain.schemas.data import SchemaData, SchemaVersion
from magnetar_wire.names import TopicName

PREFIX = "$schema/"


def schema_sort_key(topic: TopicName, version: int | None) -> str:
    """The ``name`` attribute of a version's item (None: the topic's prefix)."""
    return f"{PREFIX}{topic.local}/" + ("" if version is None else f"{version:010d}")


class SchemaStore:
    """Reads a topic's schema versions and adds new ones."""

    def __init__(self, dynamodb: BotoClient, table: str) -> None:
        self._ddb = dynamodb
        self._table = table

    def versions(self, topic: TopicName) -> list[SchemaVersion]:
        """Every stored version by version (one Query, paged)."""
        prefix = schema_sort_key(topic, None)
        pages = self._ddb.get_paginator("query").paginate(
            TableName=self._table,
            KeyConditionExpression="pk = :pk AND begins_with(#n, :prefix)",
            ExpressionAttributeNames={"#n": "name"},
            ExpressionAttributeValues={
                ":pk": {"S": topic.namespace_name},
                ":prefix": {"S": prefix},
            },
            ConsistentRead=True,
        )
        with translated(f"reading the schemas of {topic}"):
            items = [item for page in pages for item in page["Items"]]
        return [
            SchemaVersion(int(i["name"]["S"][len(prefix) :]), SchemaData.from_json(i["spec"]["S"]))
            for i in items
        ]

    def add(self, topic: TopicName, version: SchemaVersion) -> None:
        """Write ``version`` if its number is new; raises ConditionFailed."""
        key: Item = {
            "pk": {"S": topic.namespace_name},
            "name": {"S": schema_sort_key(topic, version.version)},
        }
        item: Item = {**key, "spec": {"S": version.schema.to_json()}}
        condition = version_condition(0)  # the version's item is new
        put_conditional(self._ddb, self._table, item, key, condition,
                        f"writing schema version {version.version} of {topic}")  # fmt: skip
