"""In-memory triggers, in the topics table under the keys of ``adapters.aws.triggers``
(``<namespace name>`` / ``$trigger/<topic>/<name>``), with the same conditional writes."""

from __future__ import annotations

from magnetar_core.adapters.memory.tables import MemoryTables
from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.triggers.spec import Trigger
from magnetar_wire.names import TopicName

PREFIX = "$trigger/"


def _sort_key(topic: TopicName, name: str) -> str:
    return f"{PREFIX}{topic.local}/{name}"


class TriggerStore:
    """Reads and conditionally writes triggers."""

    def __init__(self, tables: MemoryTables) -> None:
        self._tables = tables
        self._table = tables.topics

    def get(self, topic: TopicName, name: str) -> Trigger | None:
        """The trigger; None when there is none."""
        with self._tables.lock:
            return self._table.get(topic.namespace_name, _sort_key(topic, name))

    def list(self, topic: TopicName) -> list[Trigger]:
        """The topic's triggers by name."""
        prefix = _sort_key(topic, "")
        with self._tables.lock:
            items = list(self._table.query(topic.namespace_name))
        return [t for key, t in items if isinstance(key, str) and key.startswith(prefix)]

    def put(self, trigger: Trigger) -> Trigger:
        """Write ``trigger`` if still at ``trigger.version`` (0: only a new one); returns
        what was stored (version + 1). Raises ConditionFailed."""
        topic = TopicName.parse(trigger.topic)
        stored = trigger.with_version(trigger.version + 1)
        with self._tables.lock:
            current = self._table.get(topic.namespace_name, _sort_key(topic, trigger.name))
            if (current.version if current else 0) != trigger.version:
                raise ConditionFailed(f"writing trigger {trigger.name} of {topic}")
            self._table.put(topic.namespace_name, _sort_key(topic, trigger.name), stored)
        return stored

    def delete(self, trigger: Trigger) -> None:
        """Delete the trigger if still at ``trigger.version``; raises ConditionFailed."""
        topic = TopicName.parse(trigger.topic)
        with self._tables.lock:
            current = self._table.get(topic.namespace_name, _sort_key(topic, trigger.name))
            if (current.version if current else 0) != trigger.version:
                raise ConditionFailed(f"deleting trigger {trigger.name} of {topic}")
            self._table.delete(topic.namespace_name, _sort_key(topic, trigger.name))
