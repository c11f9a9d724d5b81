"""A namespace's schema policies on Pulsar's namespace paths: ``schemaCompatibilityStrategy``
(stored as set; UNDEFINED when unset, which applies FULL), ``isAllowAutoUpdateSchema``
(default true: producers may register new schemas) and ``schemaValidationEnforced``
(default false: producers without a schema may publish to a topic that has one)."""

from __future__ import annotations

from dataclasses import dataclass

from magnetar_core.domain.errors import InvalidMessage
from magnetar_core.domain.schemas.compatibility import applied, parse_strategy
from magnetar_core.services.namespaces import Namespaces
from magnetar_wire.names import TopicName


@dataclass(frozen=True)
class AppliedSchemaPolicies:
    """The schema policies that apply to a topic, read at once: the strategy (UNDEFINED
    resolved), whether producers may add versions, whether they must declare a schema."""

    strategy: str
    auto_update: bool
    validation_enforced: bool


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise InvalidMessage("The body must be true or false")
    return value


class SchemaPolicies:
    """Reads and sets the schema policies; every method raises NotFound (404) for a
    namespace that does not exist, InvalidTopicName for a bad name."""

    def __init__(self, namespaces: Namespaces) -> None:
        self._namespaces = namespaces

    def strategy(self, tenant: str, namespace: str) -> str:
        """The namespace's own strategy, UNDEFINED when unset."""
        stored = self._namespaces.get(tenant, namespace).schema_compatibility_strategy
        return stored or "UNDEFINED"

    def set_strategy(self, tenant: str, namespace: str, value: object) -> None:
        """Set the strategy (a JSON string body); raises InvalidMessage."""
        strategy = parse_strategy(value)
        self._namespaces.update(tenant, namespace, schema_compatibility_strategy=strategy)

    def auto_update(self, tenant: str, namespace: str) -> bool:
        """Whether producers may register new schema versions (default true)."""
        stored = self._namespaces.get(tenant, namespace).allow_auto_update_schema
        return True if stored is None else stored

    def set_auto_update(self, tenant: str, namespace: str, value: object) -> None:
        """Set ``isAllowAutoUpdateSchema``; raises InvalidMessage (not a boolean)."""
        self._namespaces.update(tenant, namespace, allow_auto_update_schema=_flag(value))

    def validation_enforced(self, tenant: str, namespace: str) -> bool:
        """Whether producers without a schema are refused on topics that have one."""
        return bool(self._namespaces.get(tenant, namespace).schema_validation_enforced)

    def set_validation_enforced(self, tenant: str, namespace: str, value: object) -> None:
        """Set ``schemaValidationEnforced``; raises InvalidMessage (not a boolean)."""
        self._namespaces.update(tenant, namespace, schema_validation_enforced=_flag(value))

    def applied_strategy(self, topic: TopicName) -> str:
        """The strategy that applies to ``topic`` (UNDEFINED: FULL)."""
        return applied(self.strategy(topic.tenant, topic.namespace))

    def applied(self, topic: TopicName) -> AppliedSchemaPolicies:
        """Every schema policy that applies to ``topic``, from one read."""
        stored = self._namespaces.get(topic.tenant, topic.namespace)
        auto = stored.allow_auto_update_schema
        return AppliedSchemaPolicies(applied(stored.schema_compatibility_strategy),
                                     True if auto is None else auto,
                                     bool(stored.schema_validation_enforced))  # fmt: skip
