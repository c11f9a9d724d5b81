"""DynamoDB adapter for triggers, in the topics table beside the topic they belong to.

A trigger is ``pk = <namespace name>`` (the topic's, ``persistent://t/ns``), ``name =
$trigger/<topic local name>/<trigger name>`` (``$``: never a topic name, so topic listings
and the maintenance jobs pass over it); ``spec`` (JSON: the trigger body, webhook secret
included), ``ver``. A topic's triggers are one Query on the name prefix. Writes are
conditional on the version read (callers retry through ``services.optimistic``). Raises
ConditionFailed, TooManyRequests, StorageFault.
"""

from __future__ import annotations

import json

from magnetar_core.adapters.aws.clients import (
    BotoClient,
    Item,
    put_conditional,
    translated,
    version_condition,
)
from magnetar_core.domain.triggers.spec import Trigger, TriggerSpec
from magnetar_wire.names import TopicName

PREFIX = "$trigger/"


def trigger_sort_key(topic: TopicName, name: str) -> str:
    """The ``name`` attribute of a trigger item (a topic's prefix ends with ``/``)."""
    return f"{PREFIX}{topic.local}/{name}"


class TriggerStore:
    """Reads and conditionally writes triggers."""

    def __init__(self, dynamodb: BotoClient, table: str) -> None:
        self._ddb = dynamodb
        self._table = table

    @staticmethod
    def _key(topic: TopicName, name: str) -> Item:
        return {"pk": {"S": topic.namespace_name}, "name": {"S": trigger_sort_key(topic, name)}}

    def get(self, topic: TopicName, name: str) -> Trigger | None:
        """The trigger, strongly consistent; None when there is none."""
        with translated(f"reading trigger {name} of {topic}"):
            item = self._ddb.get_item(
                TableName=self._table, Key=self._key(topic, name), ConsistentRead=True
            ).get("Item")
        return _to_trigger(topic, item) if item else None

    def list(self, topic: TopicName) -> list[Trigger]:
        """The topic's triggers by name (one Query, paged)."""
        paginator = self._ddb.get_paginator("query")
        pages = paginator.paginate(
            TableName=self._table,
            KeyConditionExpression="pk = :pk AND begins_with(#n, :prefix)",
            ExpressionAttributeNames={"#n": "name"},
            ExpressionAttributeValues={
                ":pk": {"S": topic.namespace_name},
                ":prefix": {"S": trigger_sort_key(topic, "")},
            },
            ConsistentRead=True,
        )
        with translated(f"listing triggers of {topic}"):
            items = [item for page in pages for item in page["Items"]]
        return sorted((_to_trigger(topic, i) for i in items), key=lambda t: t.name)

    def put(self, trigger: Trigger) -> Trigger:
        """Write ``trigger`` if still at ``trigger.version`` (0: only a new one); returns
        what was stored (version + 1). Raises ConditionFailed."""
        topic = TopicName.parse(trigger.topic)
        stored = trigger.with_version(trigger.version + 1)
        key = self._key(topic, trigger.name)
        item: Item = {
            **key,
            "spec": {"S": json.dumps(trigger.spec.to_body(with_secret=True), sort_keys=True)},
            "ver": {"N": str(stored.version)},
        }
        condition = version_condition(trigger.version, "ver")
        put_conditional(self._ddb, self._table, item, key, condition,
                        f"writing trigger {trigger.name} of {topic}")  # fmt: skip
        return stored

    def delete(self, trigger: Trigger) -> None:
        """Delete the trigger if still at ``trigger.version``; raises ConditionFailed."""
        topic = TopicName.parse(trigger.topic)
        with translated(f"deleting trigger {trigger.name} of {topic}"):
            self._ddb.delete_item(
                TableName=self._table,
                Key=self._key(topic, trigger.name),
                **version_condition(trigger.version, "ver"),
            )


def _to_trigger(topic: TopicName, item: dict) -> Trigger:
    name = item["name"]["S"][len(trigger_sort_key(topic, "")) :]
    spec = TriggerSpec.parse(json.loads(item["spec"]["S"]))
    return Trigger(str(topic), name, spec, int(item["ver"]["N"]))
