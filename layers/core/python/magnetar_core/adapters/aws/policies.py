"""DynamoDB adapter for namespace policies: one item per namespace in the topics table,
under the reserved name ``$policies`` (``$`` never occurs in topic names)."""

from __future__ import annotations

from magnetar_core.adapters.aws.clients import (
    BotoClient,
    put_conditional,
    translated,
    version_condition,
)
from magnetar_core.domain.policies import (
    DelayedDeliveryPolicies,
    NamespacePolicies,
    RetentionPolicies,
)
from magnetar_core.domain.quotas import QuotaPolicies

POLICIES = "$policies"


def _number(item: dict, name: str) -> int | None:
    return int(item[name]["N"]) if name in item else None


def retention_of(item: dict) -> RetentionPolicies | None:
    """The retention attributes of a namespace or topic item (``ret_min``, ``ret_mb``)."""
    if "ret_min" not in item:
        return None
    return RetentionPolicies(int(item["ret_min"]["N"]), int(item["ret_mb"]["N"]))


def retention_attributes(retention: RetentionPolicies | None) -> dict:
    """The item attributes holding ``retention`` (none when unset)."""
    if retention is None:
        return {}
    return {
        "ret_min": {"N": str(retention.retention_time_minutes)},
        "ret_mb": {"N": str(retention.retention_size_mb)},
    }


def quotas_of(item: dict) -> QuotaPolicies | None:
    """The backlog quotas and rates of a namespace or topic item (``quota``: one JSON
    document, issue 14)."""
    return QuotaPolicies.from_json(item["quota"]["S"]) if "quota" in item else None


def quota_attributes(quotas: QuotaPolicies | None) -> dict:
    """The item attribute holding ``quotas`` (none when unset or empty)."""
    if quotas is None or quotas.is_empty():
        return {}
    return {"quota": {"S": quotas.to_json()}}


def _to_policies(item: dict) -> NamespacePolicies:
    delayed = None
    if "dd_on" in item:
        delayed = DelayedDeliveryPolicies(
            active=item["dd_on"]["BOOL"],
            tick_time_ms=int(item["dd_tick_ms"]["N"]),
            max_delivery_delay_ms=int(item["dd_max_ms"]["N"]),
        )
    return NamespacePolicies(
        deduplication=item["dedup"]["BOOL"] if "dedup" in item else None,
        max_message_size_bytes=_number(item, "maxsize"),
        delayed_delivery=delayed,
        retention=retention_of(item),
        message_ttl_seconds=_number(item, "msg_ttl_s"),
        schema_compatibility_strategy=item["schema_cs"]["S"] if "schema_cs" in item else None,
        allow_auto_update_schema=item["schema_auto"]["BOOL"] if "schema_auto" in item else None,
        schema_validation_enforced=item["schema_enf"]["BOOL"] if "schema_enf" in item else None,
        quotas=quotas_of(item),
        version=_number(item, "ver") or 0,
    )


def _schema_attributes(policies: NamespacePolicies) -> dict:
    """The schema policies' attributes (issue 15): those that are set."""
    attributes: dict = {}
    if policies.schema_compatibility_strategy is not None:
        attributes["schema_cs"] = {"S": policies.schema_compatibility_strategy}
    if policies.allow_auto_update_schema is not None:
        attributes["schema_auto"] = {"BOOL": policies.allow_auto_update_schema}
    if policies.schema_validation_enforced is not None:
        attributes["schema_enf"] = {"BOOL": policies.schema_validation_enforced}
    return attributes


class PolicyStore:
    """Reads and conditionally writes namespace policies (``tenant/namespace``)."""

    def __init__(self, dynamodb: BotoClient, table: str) -> None:
        self._ddb = dynamodb
        self._table = table

    @staticmethod
    def _key(namespace: str) -> dict:
        return {"pk": {"S": f"persistent://{namespace}"}, "name": {"S": POLICIES}}

    def get(self, namespace: str) -> NamespacePolicies:
        """The namespace's policies (all unset, version 0, when none were written)."""
        with translated(f"reading policies of {namespace}"):
            item = self._ddb.get_item(
                TableName=self._table, Key=self._key(namespace), ConsistentRead=True
            ).get("Item")
        return _to_policies(item) if item else NamespacePolicies()

    def put(self, namespace: str, policies: NamespacePolicies) -> NamespacePolicies:
        """Replace the namespace's policies if they are still at ``policies.version``; returns
        what was stored (version + 1). Raises ConditionFailed when someone wrote first."""
        stored = policies.with_changes(version=policies.version + 1)
        item = dict(self._key(namespace))
        item["ver"] = {"N": str(stored.version)}
        if policies.deduplication is not None:
            item["dedup"] = {"BOOL": policies.deduplication}
        if policies.max_message_size_bytes is not None:
            item["maxsize"] = {"N": str(policies.max_message_size_bytes)}
        if policies.delayed_delivery is not None:
            item["dd_on"] = {"BOOL": policies.delayed_delivery.active}
            item["dd_tick_ms"] = {"N": str(policies.delayed_delivery.tick_time_ms)}
            item["dd_max_ms"] = {"N": str(policies.delayed_delivery.max_delivery_delay_ms)}
        item.update(retention_attributes(policies.retention))
        if policies.message_ttl_seconds is not None:
            item["msg_ttl_s"] = {"N": str(policies.message_ttl_seconds)}
        item.update(_schema_attributes(policies))
        item.update(quota_attributes(policies.quotas))
        # version 0: no item yet, or one written before versions existed
        condition = version_condition(policies.version, "ver")
        put_conditional(self._ddb, self._table, item, self._key(namespace), condition,
                        f"writing policies of {namespace}")  # fmt: skip
        return stored
