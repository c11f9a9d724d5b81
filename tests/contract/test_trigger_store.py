"""Contract of the trigger store: absent triggers, versioned create/replace/delete, a
topic's triggers listed by name (the webhook secret kept), apart from topic listings."""

from __future__ import annotations

import pytest

from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.triggers.spec import Trigger, TriggerSpec
from magnetar_wire.names import TopicName

SPEC = TriggerSpec.parse(
    {
        "target": {"type": "webhook", "url": "https://example.com/h", "secret": "k"},
        "subscriptionType": "Key_Shared",
        "filter": {"properties": {"kind": [{"anything-but": "test"}]}},
        "deadLetterPolicy": {"maxRedeliverCount": 2},
    }
)


def test_triggers_are_versioned_listed_by_topic_and_never_listed_as_topics(stores, uid):
    topic = TopicName.parse(f"persistent://c/ns-{uid}/orders")
    other = TopicName.parse(f"persistent://c/ns-{uid}/orders-2")
    triggers = stores.triggers
    assert triggers.get(topic, "b") is None and triggers.list(topic) == []

    b = triggers.put(Trigger(str(topic), "b", SPEC))
    a = triggers.put(Trigger(str(topic), "a", TriggerSpec.parse({"target": {"type": "lambda", "function": "f"}})))  # fmt: skip
    triggers.put(Trigger(str(other), "a", SPEC))
    assert b.version == 1 and triggers.get(topic, "b") == b
    assert triggers.get(topic, "b").spec.target.secret == "k"
    assert [t.name for t in triggers.list(topic)] == ["a", "b"]
    assert triggers.list(topic) == [a, b]
    assert stores.topics.list(f"persistent://c/ns-{uid}") == []

    with pytest.raises(ConditionFailed):
        triggers.put(Trigger(str(topic), "b", SPEC))  # version 0: it exists
    replaced = triggers.put(Trigger(str(topic), "b", TriggerSpec.parse({"target": {"type": "lambda", "function": "g"}}), 1))  # fmt: skip
    assert replaced.version == 2 and triggers.get(topic, "b") == replaced

    with pytest.raises(ConditionFailed):
        triggers.delete(b)  # stale version
    triggers.delete(replaced)
    assert triggers.get(topic, "b") is None
    assert [t.name for t in triggers.list(topic)] == ["a"]
