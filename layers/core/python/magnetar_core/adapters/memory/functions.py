"""In-memory functions and function state, in the topics table under the keys of
``adapters.aws.functions`` (``persistent://<tenant>/<namespace>`` / ``$function/<name>``,
``$fcounter/<name>/<key>``, ``$fstate/<name>/<key>``), with the same conditional writes."""

from __future__ import annotations

from collections.abc import Mapping

from magnetar_core.adapters.memory.tables import MemoryTables
from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.functions.config import FunctionConfig

FUNCTION_PREFIX = "$function/"
COUNTER_PREFIX = "$fcounter/"
STATE_PREFIX = "$fstate/"


def _pk(tenant: str, namespace: str) -> str:
    return f"persistent://{tenant}/{namespace}"


def _split(fqfn: str) -> tuple[str, str]:
    tenant, namespace, name = fqfn.split("/")
    return _pk(tenant, namespace), name


class FunctionStore:
    """Reads and conditionally writes functions."""

    def __init__(self, tables: MemoryTables) -> None:
        self._tables = tables
        self._table = tables.topics

    def get(self, tenant: str, namespace: str, name: str) -> FunctionConfig | None:
        with self._tables.lock:
            return self._table.get(_pk(tenant, namespace), FUNCTION_PREFIX + name)

    def list(self, tenant: str, namespace: str) -> list[FunctionConfig]:
        with self._tables.lock:
            items = list(self._table.query(_pk(tenant, namespace)))
        return [c for key, c in items if isinstance(key, str) and key.startswith(FUNCTION_PREFIX)]

    def put(self, config: FunctionConfig) -> FunctionConfig:
        """Write ``config`` if still at ``config.version``; raises ConditionFailed."""
        pk, sk = _pk(config.tenant, config.namespace), FUNCTION_PREFIX + config.name
        stored = config.with_version(config.version + 1)
        with self._tables.lock:
            current = self._table.get(pk, sk)
            if (current.version if current else 0) != config.version:
                raise ConditionFailed(f"writing function {config.fqfn}")
            self._table.put(pk, sk, stored)
        return stored

    def delete(self, config: FunctionConfig) -> None:
        """Delete the function if still at ``config.version``; raises ConditionFailed."""
        pk, sk = _pk(config.tenant, config.namespace), FUNCTION_PREFIX + config.name
        with self._tables.lock:
            current = self._table.get(pk, sk)
            if current is None or current.version != config.version:
                raise ConditionFailed(f"deleting function {config.fqfn}")
            self._table.delete(pk, sk)


class FunctionStateStore:
    """Counters and state values of functions."""

    def __init__(self, tables: MemoryTables) -> None:
        self._tables = tables
        self._table = tables.topics

    def incr_counter(self, fqfn: str, key: str, amount: int) -> int:
        pk, name = _split(fqfn)
        with self._tables.lock:
            value = (self._table.get(pk, f"{COUNTER_PREFIX}{name}/{key}") or 0) + amount
            self._table.put(pk, f"{COUNTER_PREFIX}{name}/{key}", value)
        return value

    def get_counter(self, fqfn: str, key: str) -> int:
        pk, name = _split(fqfn)
        with self._tables.lock:
            return self._table.get(pk, f"{COUNTER_PREFIX}{name}/{key}") or 0

    def del_counter(self, fqfn: str, key: str) -> None:
        pk, name = _split(fqfn)
        with self._tables.lock:
            self._table.delete(pk, f"{COUNTER_PREFIX}{name}/{key}")

    def put_state(self, fqfn: str, key: str, value: bytes) -> None:
        pk, name = _split(fqfn)
        with self._tables.lock:
            self._table.put(pk, f"{STATE_PREFIX}{name}/{key}", bytes(value))

    def get_state(self, fqfn: str, key: str) -> bytes | None:
        pk, name = _split(fqfn)
        with self._tables.lock:
            return self._table.get(pk, f"{STATE_PREFIX}{name}/{key}")

    def add_counts(
        self, fqfn: str, key: str, counts: Mapping[str, int], latest: Mapping[str, int]
    ) -> None:
        pk, name = _split(fqfn)
        with self._tables.lock:
            current = dict(self._table.get(pk, f"{COUNTER_PREFIX}{name}/{key}") or {})
            for count, amount in counts.items():
                current[count] = current.get(count, 0) + amount
            current.update(latest)
            self._table.put(pk, f"{COUNTER_PREFIX}{name}/{key}", current)

    def get_counts(self, fqfn: str, key: str) -> dict[str, int]:
        pk, name = _split(fqfn)
        with self._tables.lock:
            return dict(self._table.get(pk, f"{COUNTER_PREFIX}{name}/{key}") or {})

    def delete_all(self, fqfn: str) -> int:
        pk, name = _split(fqfn)
        prefixes = (f"{COUNTER_PREFIX}{name}/", f"{STATE_PREFIX}{name}/")
        with self._tables.lock:
            keys = [
                k for k, _ in self._table.query(pk) if isinstance(k, str) and k.startswith(prefixes)
            ]
            for key in keys:
                self._table.delete(pk, key)
        return len(keys)
