"""DynamoDB adapters for tenants and namespace permissions, in the topics table.

Both live beside the namespace policies, under names that start with ``$`` (never a topic
name, so topic listings and the maintenance jobs' scans pass over them):

* a tenant: ``pk = $tenants``, ``name = $tenant/<tenant>``; ``admins`` and ``clusters``
  (string lists), ``ver``. All tenants share one partition key: listing them is one Query.
* a namespace's permissions: ``pk = persistent://<tenant>/<namespace>`` (the policies'
  key), ``name = $permissions``; ``auth`` (JSON: ``namespace`` role -> actions, ``topics``
  topic -> role -> actions, ``subscriptions`` subscription -> roles), ``ver``.

Writes are conditional on the version read (``clients.version_condition``); callers retry
through ``services.optimistic``. Raises ConditionFailed, TooManyRequests, StorageFault.
"""

from __future__ import annotations

import json

from magnetar_core.adapters.aws.clients import BotoClient, Item, translated, version_condition
from magnetar_core.domain.security.model import (
    AuthAction,
    NamespacePermissions,
    Role,
    TenantInfo,
    actions_body,
)

TENANTS_PK = "$tenants"
TENANT_PREFIX = "$tenant/"
PERMISSIONS = "$permissions"


def _strings(item: dict, name: str) -> list[str]:
    return [v["S"] for v in item.get(name, {}).get("L", [])]


def _string_list(values: list[str]) -> dict:
    return {"L": [{"S": v} for v in sorted(values)]}


class TenantStore:
    """Reads and conditionally writes tenants."""

    def __init__(self, dynamodb: BotoClient, table: str) -> None:
        self._ddb = dynamodb
        self._table = table

    @staticmethod
    def _key(tenant: str) -> Item:
        return {"pk": {"S": TENANTS_PK}, "name": {"S": TENANT_PREFIX + tenant}}

    def get(self, tenant: str) -> TenantInfo | None:
        """The tenant's info, strongly consistent; None when there is none."""
        with translated(f"reading tenant {tenant}"):
            item = self._ddb.get_item(
                TableName=self._table, Key=self._key(tenant), ConsistentRead=True
            ).get("Item")
        return _to_tenant(item) if item else None

    def list(self) -> list[str]:
        """Every tenant's name, sorted (one Query, paged)."""
        kwargs: dict = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND begins_with(#n, :prefix)",
            "ExpressionAttributeNames": {"#n": "name"},
            "ExpressionAttributeValues": {
                ":pk": {"S": TENANTS_PK},
                ":prefix": {"S": TENANT_PREFIX},
            },
            "ProjectionExpression": "#n",
            "ConsistentRead": True,
        }
        names: list[str] = []
        while True:
            with translated("listing tenants"):
                page = self._ddb.query(**kwargs)
            names.extend(i["name"]["S"][len(TENANT_PREFIX) :] for i in page["Items"])
            if "LastEvaluatedKey" not in page:
                return sorted(names)
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def put(self, tenant: str, info: TenantInfo) -> TenantInfo:
        """Write ``info`` if still at ``info.version`` (0: only a new tenant); returns the
        stored info (version + 1). Raises ConditionFailed."""
        stored = info.with_version(info.version + 1)
        item = {
            **self._key(tenant),
            "admins": _string_list([r.name for r in info.admin_roles]),
            "clusters": _string_list(list(info.allowed_clusters)),
            "ver": {"N": str(stored.version)},
        }
        with translated(f"writing tenant {tenant}"):
            self._ddb.put_item(TableName=self._table, Item=item, **version_condition(info.version))
        return stored

    def delete(self, tenant: str, info: TenantInfo) -> None:
        """Delete the tenant if still at ``info.version``; raises ConditionFailed."""
        with translated(f"deleting tenant {tenant}"):
            self._ddb.delete_item(
                TableName=self._table, Key=self._key(tenant), **version_condition(info.version)
            )


def _to_tenant(item: dict) -> TenantInfo:
    return TenantInfo(
        admin_roles=frozenset(Role(r) for r in _strings(item, "admins")),
        allowed_clusters=frozenset(_strings(item, "clusters")),
        version=int(item["ver"]["N"]),
    )


def _actions_of(document: dict[str, list[str]]) -> dict[Role, frozenset[AuthAction]]:
    return {Role(r): frozenset(AuthAction(a) for a in actions) for r, actions in document.items()}


def permissions_json(permissions: NamespacePermissions) -> str:
    """The ``auth`` attribute of a permissions item (sorted keys: equal grants, equal text)."""
    return json.dumps(
        {
            "namespace": actions_body(permissions.roles),
            "topics": {t: actions_body(g) for t, g in permissions.topics.items()},
            "subscriptions": {
                s: sorted(r.name for r in roles) for s, roles in permissions.subscriptions.items()
            },
        },
        sort_keys=True,
        separators=(",", ":"),
    )


def permissions_of(text: str, version: int) -> NamespacePermissions:
    """The permissions an ``auth`` attribute holds, at ``version``."""
    document = json.loads(text)
    return NamespacePermissions(
        roles=_actions_of(document.get("namespace", {})),
        topics={t: _actions_of(g) for t, g in document.get("topics", {}).items()},
        subscriptions={
            s: frozenset(Role(r) for r in roles)
            for s, roles in document.get("subscriptions", {}).items()
        },
        version=version,
    )


class PermissionStore:
    """Reads and conditionally writes namespace permissions (``tenant/namespace``)."""

    def __init__(self, dynamodb: BotoClient, table: str) -> None:
        self._ddb = dynamodb
        self._table = table

    @staticmethod
    def _key(namespace: str) -> Item:
        return {"pk": {"S": f"persistent://{namespace}"}, "name": {"S": PERMISSIONS}}

    def get(self, namespace: str) -> NamespacePermissions:
        """The namespace's permissions (none, version 0, when never written)."""
        with translated(f"reading permissions of {namespace}"):
            item = self._ddb.get_item(
                TableName=self._table, Key=self._key(namespace), ConsistentRead=True
            ).get("Item")
        if not item:
            return NamespacePermissions()
        return permissions_of(item["auth"]["S"], int(item["ver"]["N"]))

    def put(self, namespace: str, permissions: NamespacePermissions) -> NamespacePermissions:
        """Replace the permissions if still at ``permissions.version``; returns what was
        stored (version + 1). Raises ConditionFailed."""
        stored = permissions.with_version(permissions.version + 1)
        item = {
            **self._key(namespace),
            "auth": {"S": permissions_json(permissions)},
            "ver": {"N": str(stored.version)},
        }
        with translated(f"writing permissions of {namespace}"):
            self._ddb.put_item(
                TableName=self._table, Item=item, **version_condition(permissions.version)
            )
        return stored

    def delete(self, namespace: str, permissions: NamespacePermissions) -> None:
        """Delete the permissions if still at ``permissions.version``; raises
        ConditionFailed."""
        with translated(f"deleting permissions of {namespace}"):
            self._ddb.delete_item(
                TableName=self._table,
                Key=self._key(namespace),
                **version_condition(permissions.version),
            )
