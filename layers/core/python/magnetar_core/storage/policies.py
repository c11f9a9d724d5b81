"""DynamoDB adapter for namespace policies: one item per namespace in the topics table,
under the reserved name ``$policies`` (``$`` never occurs in topic names)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from .aws import translated

POLICIES = "$policies"


@dataclass(frozen=True)
class NamespacePolicies:
    """A namespace's policies; None means "not set, use the service default"."""

    deduplication: bool | None = None
    max_message_size_bytes: int | None = None

    def with_changes(self, **changes) -> NamespacePolicies:
        return replace(self, **changes)


class PolicyStore:
    """Reads and writes namespace policies (``tenant/namespace``)."""

    def __init__(self, dynamodb, table: str) -> None:
        self._ddb = dynamodb
        self._table = table

    @staticmethod
    def _key(namespace: str) -> dict:
        return {"pk": {"S": f"persistent://{namespace}"}, "name": {"S": POLICIES}}

    def get(self, namespace: str) -> NamespacePolicies:
        """The namespace's policies (all unset when none were written)."""
        with translated(f"reading policies of {namespace}"):
            item = self._ddb.get_item(
                TableName=self._table, Key=self._key(namespace), ConsistentRead=True
            ).get("Item")
        if not item:
            return NamespacePolicies()
        return NamespacePolicies(
            deduplication=item["dedup"]["BOOL"] if "dedup" in item else None,
            max_message_size_bytes=int(item["maxsize"]["N"]) if "maxsize" in item else None,
        )

    def put(self, namespace: str, policies: NamespacePolicies) -> None:
        """Replace the namespace's policies (last writer wins, as Pulsar's admin does)."""
        item = dict(self._key(namespace))
        if policies.deduplication is not None:
            item["dedup"] = {"BOOL": policies.deduplication}
        if policies.max_message_size_bytes is not None:
            item["maxsize"] = {"N": str(policies.max_message_size_bytes)}
        with translated(f"writing policies of {namespace}"):
            self._ddb.put_item(TableName=self._table, Item=item)
