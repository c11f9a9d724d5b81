"""DynamoDB adapters for Pulsar Functions, in the topics table beside their namespace.

Under ``pk = persistent://<tenant>/<namespace>`` (the namespace's own partition):
``name = $function/<name>`` holds a function (``spec``: its stored body as JSON, code
included; ``ver``), ``$fcounter/<name>/<key>`` a counter (``cnt``, N, changed with an
atomic ADD) and ``$fstate/<name>/<key>`` a state value (``val``, B). ``$``: never a topic
name, so topic listings and the maintenance jobs pass over them. A function's items are one
Query on a name prefix. Raises ConditionFailed, TooManyRequests, StorageFault.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from magnetar_core.adapters.aws.clients import (
    BotoClient,
    Item,
    put_conditional,
    translated,
    version_condition,
)
from magnetar_core.domain.functions.config import FunctionConfig

FUNCTION_PREFIX = "$function/"
COUNTER_PREFIX = "$fcounter/"
STATE_PREFIX = "$fstate/"


def namespace_pk(tenant: str, namespace: str) -> str:
    """The partition of a namespace's functions (its topics' ``pk``)."""
    return f"persistent://{tenant}/{namespace}"


def _split(fqfn: str) -> tuple[str, str]:
    """``(pk, function name)`` of ``tenant/namespace/name``."""
    tenant, namespace, name = fqfn.split("/")
    return namespace_pk(tenant, namespace), name


def _query(ddb: BotoClient, table: str, pk: str, prefix: str, action: str) -> list[Item]:
    pages = ddb.get_paginator("query").paginate(
        TableName=table,
        KeyConditionExpression="pk = :pk AND begins_with(#n, :prefix)",
        ExpressionAttributeNames={"#n": "name"},
        ExpressionAttributeValues={":pk": {"S": pk}, ":prefix": {"S": prefix}},
        ConsistentRead=True,
    )
    with translated(action):
        return [item for page in pages for item in page["Items"]]


class FunctionStore:
    """Reads and conditionally writes functions."""

    def __init__(self, dynamodb: BotoClient, table: str) -> None:
        self._ddb = dynamodb
        self._table = table

    @staticmethod
    def _key(tenant: str, namespace: str, name: str) -> Item:
        return {"pk": {"S": namespace_pk(tenant, namespace)}, "name": {"S": FUNCTION_PREFIX + name}}

    def get(self, tenant: str, namespace: str, name: str) -> FunctionConfig | None:
        """The function, strongly consistent; None when there is none."""
        with translated(f"reading function {tenant}/{namespace}/{name}"):
            item = self._ddb.get_item(
                TableName=self._table, Key=self._key(tenant, namespace, name), ConsistentRead=True
            ).get("Item")
        return _to_config(tenant, namespace, item) if item else None

    def list(self, tenant: str, namespace: str) -> list[FunctionConfig]:
        """The namespace's functions by name (one Query, paged)."""
        pk = namespace_pk(tenant, namespace)
        items = _query(self._ddb, self._table, pk, FUNCTION_PREFIX, f"listing functions of {pk}")
        return sorted((_to_config(tenant, namespace, i) for i in items), key=lambda c: c.name)

    def put(self, config: FunctionConfig) -> FunctionConfig:
        """Write ``config`` if still at ``config.version`` (0: only a new one); returns what
        was stored (version + 1). Raises ConditionFailed."""
        stored = config.with_version(config.version + 1)
        key = self._key(config.tenant, config.namespace, config.name)
        item: Item = {
            **key,
            "spec": {"S": json.dumps(config.stored_body(), sort_keys=True)},
            "ver": {"N": str(stored.version)},
            **({"role": {"S": config.role}} if config.role is not None else {}),
        }
        condition = version_condition(config.version, "ver")
        put_conditional(self._ddb, self._table, item, key, condition,
                        f"writing function {config.fqfn}")  # fmt: skip
        return stored

    def delete(self, config: FunctionConfig) -> None:
        """Delete the function if still at ``config.version``; raises ConditionFailed."""
        with translated(f"deleting function {config.fqfn}"):
            self._ddb.delete_item(
                TableName=self._table,
                Key=self._key(config.tenant, config.namespace, config.name),
                **version_condition(config.version, "ver"),
            )


def _to_config(tenant: str, namespace: str, item: dict) -> FunctionConfig:
    name = item["name"]["S"][len(FUNCTION_PREFIX) :]
    config = FunctionConfig.parse(tenant, namespace, name, json.loads(item["spec"]["S"]))
    role = item.get("role", {}).get("S")
    return config.with_version(int(item["ver"]["N"])).with_role(role)


class FunctionStateStore:
    """Counters (atomic ADD) and state values of functions."""

    def __init__(self, dynamodb: BotoClient, table: str) -> None:
        self._ddb = dynamodb
        self._table = table

    @staticmethod
    def _key(fqfn: str, prefix: str, key: str) -> Item:
        pk, name = _split(fqfn)
        return {"pk": {"S": pk}, "name": {"S": f"{prefix}{name}/{key}"}}

    def incr_counter(self, fqfn: str, key: str, amount: int) -> int:
        """Add ``amount`` to the counter atomically (one UpdateItem); its new value."""
        with translated(f"incrementing counter {key} of {fqfn}"):
            answer = self._ddb.update_item(
                TableName=self._table,
                Key=self._key(fqfn, COUNTER_PREFIX, key),
                UpdateExpression="ADD cnt :n",
                ExpressionAttributeValues={":n": {"N": str(amount)}},
                # ALL_NEW, not UPDATED_NEW: an ADD of 0 changes nothing, and the emulator
                # then returns no attribute (a 500 the fuzzer found)
                ReturnValues="ALL_NEW",
            )
        return int(answer["Attributes"]["cnt"]["N"])

    def get_counter(self, fqfn: str, key: str) -> int:
        """The counter's value (0: never incremented)."""
        item = self._get(self._key(fqfn, COUNTER_PREFIX, key), f"reading counter {key} of {fqfn}")
        return int(item["cnt"]["N"]) if item else 0

    def del_counter(self, fqfn: str, key: str) -> None:
        with translated(f"deleting counter {key} of {fqfn}"):
            self._ddb.delete_item(TableName=self._table, Key=self._key(fqfn, COUNTER_PREFIX, key))

    def put_state(self, fqfn: str, key: str, value: bytes) -> None:
        with translated(f"writing state {key} of {fqfn}"):
            self._ddb.put_item(
                TableName=self._table,
                Item={**self._key(fqfn, STATE_PREFIX, key), "val": {"B": value}},
            )

    def get_state(self, fqfn: str, key: str) -> bytes | None:
        item = self._get(self._key(fqfn, STATE_PREFIX, key), f"reading state {key} of {fqfn}")
        return bytes(item["val"]["B"]) if item else None

    def _get(self, key: Item, action: str) -> dict | None:
        with translated(action):
            return self._ddb.get_item(TableName=self._table, Key=key, ConsistentRead=True).get(
                "Item"
            )

    def add_counts(
        self, fqfn: str, key: str, counts: Mapping[str, int], latest: Mapping[str, int]
    ) -> None:
        """One UpdateItem: ``ADD`` each count, ``SET`` each latest value."""
        names: dict[str, str] = {}
        values: dict[str, dict[str, str]] = {}
        clauses = []
        for kind, verb, items in (("c", "ADD", counts.items()), ("l", "SET", latest.items())):
            parts = []
            for i, (attribute, value) in enumerate(items):
                names[f"#{kind}{i}"] = attribute
                values[f":{kind}{i}"] = {"N": str(int(value))}
                parts.append(f"#{kind}{i} :{kind}{i}" if verb == "ADD" else f"#{kind}{i} = :{kind}{i}")  # fmt: skip
            if parts:
                clauses.append(f"{verb} {', '.join(parts)}")
        if not clauses:
            return
        with translated(f"adding counts {key} of {fqfn}"):
            self._ddb.update_item(
                TableName=self._table,
                Key=self._key(fqfn, COUNTER_PREFIX, key),
                UpdateExpression=" ".join(clauses),
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
            )

    def get_counts(self, fqfn: str, key: str) -> dict[str, int]:
        item = self._get(self._key(fqfn, COUNTER_PREFIX, key), f"reading counts {key} of {fqfn}")
        return {k: int(v["N"]) for k, v in (item or {}).items() if "N" in v}

    def delete_all(self, fqfn: str) -> int:
        """Delete every counter and state item of the function (a Query per prefix, then
        one DeleteItem each)."""
        pk, name = _split(fqfn)
        deleted = 0
        for prefix in (COUNTER_PREFIX, STATE_PREFIX):
            items = _query(
                self._ddb, self._table, pk, f"{prefix}{name}/", f"listing state of {fqfn}"
            )
            for item in items:
                with translated(f"deleting state of {fqfn}"):
                    self._ddb.delete_item(
                        TableName=self._table, Key={"pk": item["pk"], "name": item["name"]}
                    )
                deleted += 1
        return deleted
