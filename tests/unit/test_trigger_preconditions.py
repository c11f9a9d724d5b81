"""Conditional trigger writes (``If-None-Match: *`` / ``If-Match: *``): a create that finds
the name taken, or a replace that finds it missing, changes nothing; the check is made in
the conditional write itself, so a create racing another create of the same name loses."""

from __future__ import annotations

import pytest

from magnetar_core.adapters.memory import memory_stores
from magnetar_core.domain.errors import InvalidMessage, PreconditionFailed
from magnetar_core.domain.preconditions import Precondition
from magnetar_core.domain.triggers.spec import Trigger, TriggerSpec
from magnetar_core.engine import Engine
from magnetar_local.memory_service import memory_settings
from magnetar_wire.names import TopicName

TOPIC = TopicName.parse("persistent://public/default/orders")
LAMBDA = {"type": "lambda", "function": "fn"}


class Recorded:
    def invoke(self, target, body, timestamp_ms):  # pragma: no cover - never delivered here
        raise AssertionError("no delivery in these tests")


@pytest.fixture
def stores():
    return memory_stores()


@pytest.fixture
def engine(stores) -> Engine:
    engine = Engine.assemble(memory_settings(), stores, targets=Recorded())
    engine.tenants.initialize_cluster()
    engine.admin.create_topic(TOPIC, None)
    return engine


@pytest.mark.parametrize(
    ("if_none_match", "if_match", "expected"),
    [
        (None, None, Precondition.ANY),
        ("*", None, Precondition.ABSENT),
        (None, " * ", Precondition.PRESENT),
    ],  # fmt: skip
)
def test_the_headers_name_the_precondition(if_none_match, if_match, expected):
    assert Precondition.of_headers(if_none_match, if_match) is expected


@pytest.mark.parametrize(("if_none_match", "if_match"), [("*", "*"), ('"v1"', None), (None, "W/x")])
def test_both_headers_or_an_entity_tag_are_refused_with_what_to_send(if_none_match, if_match):
    with pytest.raises(InvalidMessage, match="If-"):
        Precondition.of_headers(if_none_match, if_match)


def test_a_create_only_put_of_a_taken_name_fails_and_leaves_the_trigger_as_it_was(engine):
    engine.triggers.put(TOPIC, "t", {"target": LAMBDA, "batchSize": 3})
    with pytest.raises(PreconditionFailed, match="already exists"):
        engine.triggers.put(TOPIC, "t", {"target": LAMBDA, "batchSize": 9}, Precondition.ABSENT)
    kept = engine.triggers.get(TOPIC, "t")
    assert (kept.version, kept.spec.batch_size) == (1, 3)


def test_a_replace_only_put_of_a_missing_name_creates_nothing_not_even_its_topic(engine):
    fresh = TopicName.parse("persistent://public/default/fresh")
    with pytest.raises(PreconditionFailed, match="does not exist"):
        engine.triggers.put(fresh, "t", {"target": LAMBDA}, Precondition.PRESENT)
    assert engine.triggers.names(TOPIC) == []
    assert str(fresh) not in engine.namespace_admin.topics("public", "default")


def test_a_replace_only_put_replaces_and_a_create_only_put_creates(engine):
    _, created = engine.triggers.put(TOPIC, "t", {"target": LAMBDA}, Precondition.ABSENT)
    replaced, again = engine.triggers.put(
        TOPIC, "t", {"target": LAMBDA, "batchSize": 7}, Precondition.PRESENT
    )
    assert created and not again and (replaced.version, replaced.spec.batch_size) == (2, 7)


def test_a_create_that_read_before_another_create_landed_loses_in_its_write(engine, stores, monkeypatch):  # fmt: skip
    """The other create's record lands between this one's read and its conditional write."""
    store = stores.triggers
    other = Trigger(str(TOPIC), "t", TriggerSpec.parse({"target": LAMBDA, "batchSize": 4}), 0)
    read = store.get

    def stale_then_landed(topic, name):
        monkeypatch.setattr(store, "get", read)
        store.put(other)  # the racing create, written after this read
        return None

    monkeypatch.setattr(store, "get", stale_then_landed)
    with pytest.raises(PreconditionFailed, match="already exists"):
        engine.triggers.put(TOPIC, "t", {"target": LAMBDA, "batchSize": 8}, Precondition.ABSENT)
    kept = engine.triggers.get(TOPIC, "t")
    assert (kept.version, kept.spec.batch_size) == (1, 4)
