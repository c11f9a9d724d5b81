"""Triggers on the memory service: the resource with its subscription, and deliver_once
(filters, acks, batchItemFailures nacked with count + 1, whole-batch retries, dead letters).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

from magnetar_core.adapters.memory import memory_stores
from magnetar_core.adapters.targets import LocalFunctions, Targets
from magnetar_core.domain.errors import (
    Conflict,
    InvalidMessage,
    NotFound,
    ServiceUnitNotReady,
    TopicNotFound,
)
from magnetar_core.domain.triggers.records import TargetAnswer, TargetFailed
from magnetar_core.domain.triggers.spec import Target
from magnetar_core.engine import Engine
from magnetar_local.memory_service import memory_settings
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.names import TopicName

TOPIC = TopicName.parse("persistent://public/default/orders")
LAMBDA = {"type": "lambda", "function": "fn"}


@dataclass
class FakeTarget:
    """Answers each batch with the next of ``answers`` (an answer or an exception; then
    200 with no report) and records the batches it got."""

    answers: list = field(default_factory=list)
    batches: list = field(default_factory=list)

    def invoke(self, target: Target, body: bytes, timestamp_ms: int) -> TargetAnswer:
        self.batches.append(json.loads(body)["records"])
        answer = self.answers.pop(0) if self.answers else TargetAnswer(200)
        if isinstance(answer, Exception):
            raise answer
        return answer


@pytest.fixture
def target() -> FakeTarget:
    return FakeTarget()


@pytest.fixture
def engine(target) -> Engine:
    engine = Engine.assemble(memory_settings(), memory_stores(), targets=target)
    engine.tenants.initialize_cluster()
    engine.admin.create_topic(TOPIC, None)
    return engine


def produce(engine: Engine, *messages: tuple[str | None, dict[str, str]]) -> list[str]:
    ids = []
    for i, (key, properties) in enumerate(messages):
        entry = encode_entry(
            [
                EntryMessage(
                    payload=f"m{i}".encode(),
                    sequence_id=i,
                    publish_time_ms=1,
                    key=key,
                    properties=properties,
                )
            ],  # fmt: skip
            producer_name="p",
        )
        ids += engine.producer.publish(TOPIC, entry).message_ids
    return ids


def failures(*ids: str) -> TargetAnswer:
    body = {"batchItemFailures": [{"itemIdentifier": i} for i in ids]}
    return TargetAnswer(200, json.dumps(body).encode())


def test_a_trigger_is_created_with_its_subscription_and_deleted_with_it(engine):
    trigger, created = engine.triggers.put(TOPIC, "t1", {"target": LAMBDA})
    assert created and trigger.version == 1
    assert engine.triggers.names(TOPIC) == ["t1"]
    assert engine.admin.subscriptions(TOPIC) == ["t1"]
    replaced, created = engine.triggers.put(TOPIC, "t1", {"target": LAMBDA, "batchSize": 5})
    assert not created and replaced.version == 2 and engine.triggers.get(TOPIC, "t1").spec.batch_size == 5  # fmt: skip
    engine.triggers.delete(TOPIC, "t1")
    assert engine.triggers.names(TOPIC) == [] and engine.admin.subscriptions(TOPIC) == []
    with pytest.raises(NotFound):
        engine.triggers.get(TOPIC, "t1")


def test_a_bad_body_stores_nothing_and_creates_no_subscription(engine):
    with pytest.raises(InvalidMessage, match="'batchSize'"):
        engine.triggers.put(TOPIC, "t1", {"target": LAMBDA, "batchSize": 0})
    assert engine.triggers.names(TOPIC) == [] and engine.admin.subscriptions(TOPIC) == []


def test_a_trigger_auto_creates_its_topic_as_subscribing_does_but_needs_its_namespace(engine):
    fresh = TopicName.parse("persistent://public/default/fresh")
    _, created = engine.triggers.put(fresh, "t", {"target": LAMBDA})
    assert created and engine.admin.subscriptions(fresh) == ["t"]
    with pytest.raises(TopicNotFound):
        engine.triggers.put(TopicName.parse("persistent://public/nowhere/t"), "t", {"target": LAMBDA})  # fmt: skip


def test_a_trigger_needs_its_own_subscription_name(engine):
    engine.subscriptions.subscribe(TOPIC, "mine", None, "Shared", True)
    with pytest.raises(Conflict):
        engine.triggers.put(TOPIC, "mine", {"target": LAMBDA})


def test_deliver_once_sends_matching_messages_and_acks_the_filtered_ones(engine, target):
    body = {"target": LAMBDA, "initialPosition": "Earliest", "filter": {"key": [{"prefix": "o-"}]}}  # fmt: skip
    trigger, _ = engine.triggers.put(TOPIC, "t", body)
    ids = produce(engine, ("o-1", {"a": "1"}), ("x-2", {}), ("o-3", {}))
    outcome = engine.delivery.deliver_once(trigger)
    assert (outcome.delivered, outcome.acknowledged, outcome.filtered) == (2, 2, 1)
    (batch,) = target.batches
    assert [r["messageId"] for r in batch] == [ids[0], ids[2]]
    assert batch[0]["key"] == "o-1" and batch[0]["properties"] == {"a": "1"}
    assert batch[0]["redeliveryCount"] == 0 and batch[0]["topic"] == str(TOPIC)
    assert engine.delivery.deliver_once(trigger).delivered == 0
    assert len(target.batches) == 1


def test_batch_item_failures_come_back_with_count_1_and_the_rest_never_again(engine, target):
    trigger, _ = engine.triggers.put(TOPIC, "t", {"target": LAMBDA, "initialPosition": "Earliest"})
    ids = produce(engine, ("a", {}), ("b", {}), ("c", {}))
    target.answers = [failures(ids[1])]
    outcome = engine.delivery.deliver_once(trigger)
    assert (outcome.acknowledged, outcome.retried) == (2, 1)
    engine.delivery.deliver_once(trigger)
    assert [(r["messageId"], r["redeliveryCount"]) for r in target.batches[1]] == [(ids[1], 1)]
    assert engine.delivery.deliver_once(trigger).delivered == 0


@pytest.mark.parametrize("answer", [TargetAnswer(500), TargetFailed("timed out")])
def test_an_error_or_non_2xx_retries_the_whole_batch(engine, target, answer):
    trigger, _ = engine.triggers.put(TOPIC, "t", {"target": LAMBDA, "initialPosition": "Earliest"})
    ids = produce(engine, ("a", {}), ("b", {}))
    target.answers = [answer]
    assert engine.delivery.deliver_once(trigger).retried == 2
    engine.delivery.deliver_once(trigger)
    assert sorted((r["messageId"], r["redeliveryCount"]) for r in target.batches[1]) == [(ids[0], 1), (ids[1], 1)]  # fmt: skip


def test_batches_hold_at_most_batch_size_messages(engine, target):
    trigger, _ = engine.triggers.put(TOPIC, "t", {"target": LAMBDA, "initialPosition": "Earliest", "batchSize": 2})  # fmt: skip
    produce(engine, *[(str(i), {}) for i in range(5)])
    sizes = [engine.delivery.deliver_once(trigger).delivered for _ in range(4)]
    assert sizes == [3, 2, 0, 0]  # a step takes a batch and one message more
    assert [len(batch) for batch in target.batches] == [2, 1, 2]


def test_past_max_redeliver_count_a_message_goes_to_the_dead_letter_topic(engine, target):
    body = {"target": LAMBDA, "initialPosition": "Earliest", "deadLetterPolicy": {"maxRedeliverCount": 1}}  # fmt: skip
    trigger, _ = engine.triggers.put(TOPIC, "t", body)
    produce(engine, ("a", {}))
    target.answers = [TargetAnswer(500), TargetAnswer(500)]
    engine.delivery.deliver_once(trigger)
    engine.delivery.deliver_once(trigger)
    assert engine.delivery.deliver_once(trigger).delivered == 0
    assert len(target.batches) == 2
    dlq = TopicName.parse("persistent://public/default/orders-t-DLQ")
    assert engine.subscriptions.last_message_id(dlq) is not None


def test_a_trigger_on_a_partitioned_topic_delivers_from_every_partition(engine, target):
    topic = TopicName.parse("persistent://public/default/parted")
    engine.admin.create_topic(topic, 2)
    trigger, _ = engine.triggers.put(topic, "t", {"target": LAMBDA, "initialPosition": "Earliest"})
    assert engine.admin.subscriptions(topic) == ["t"]
    for i in range(6):
        entry = encode_entry([EntryMessage(payload=b"x", sequence_id=i, publish_time_ms=1, key=f"k{i}")], producer_name="p")  # fmt: skip
        engine.producer.publish(topic, entry)
    assert engine.delivery.deliver_once(trigger).delivered == 6
    partitions = {r["topic"] for batch in target.batches for r in batch}
    assert partitions == {f"{topic}-partition-0", f"{topic}-partition-1"}
    with pytest.raises(InvalidMessage, match="not to a partition"):
        engine.triggers.put(topic.partition(0), "t2", {"target": LAMBDA})


def test_a_new_trigger_whose_subscription_fails_is_not_kept(engine, monkeypatch):
    def refuse(*args, **kwargs):
        raise ServiceUnitNotReady("busy")

    monkeypatch.setattr(engine.subscriptions, "subscribe", refuse)
    with pytest.raises(ServiceUnitNotReady):
        engine.triggers.put(TOPIC, "t", {"target": LAMBDA})
    assert engine.triggers.names(TOPIC) == []


def test_a_trigger_whose_subscription_is_missing_gets_it_from_its_first_step(engine, target):
    trigger, _ = engine.triggers.put(TOPIC, "t", {"target": LAMBDA, "initialPosition": "Earliest"})
    engine.subscriptions.delete_subscription(TOPIC, "t", force=True)  # as after a crash
    produce(engine, ("a", {}))
    assert engine.delivery.deliver_once(trigger).delivered == 1
    assert engine.admin.subscriptions(TOPIC) == ["t"]
    engine.triggers.put(TOPIC, "t", {"target": LAMBDA})  # and a PUT is no Conflict


def test_deleting_the_topic_deletes_its_triggers(engine):
    engine.triggers.put(TOPIC, "t", {"target": LAMBDA})
    engine.admin.delete_topic(TOPIC, False, False)
    engine.admin.create_topic(TOPIC, None)
    assert engine.triggers.names(TOPIC) == [] and engine.admin.subscriptions(TOPIC) == []


def test_a_trigger_on_a_lambda_function_that_does_not_exist_is_refused_and_nothing_is_made(caplog):
    engine = Engine.assemble(
        memory_settings(), memory_stores(), targets=Targets(functions=LocalFunctions({"fn": lambda e, c: None}))
    )  # fmt: skip
    engine.tenants.initialize_cluster()
    fresh = TopicName.parse("persistent://public/default/nowhere")
    with pytest.raises(NotFound, match="Function missing does not exist"):
        engine.triggers.put(fresh, "push", {"target": {"type": "lambda", "function": "missing"}})
    with pytest.raises(TopicNotFound):  # the refused PUT did not auto-create the topic
        engine.triggers.names(fresh)
    trigger, created = engine.triggers.put(fresh, "push", {"target": LAMBDA})
    assert created and trigger.spec.target.function == "fn"


def test_a_target_that_fails_is_logged_each_time_its_batch_is_retried(engine, target, caplog):
    engine.triggers.put(TOPIC, "push", {"target": LAMBDA, "initialPosition": "Earliest"})
    produce(engine, ("k", {}))
    target.answers = [TargetFailed("Invoking fn failed: ResourceNotFoundException")]
    engine.delivery.deliver_once(engine.triggers.get(TOPIC, "push"))
    assert "Trigger batch of 1 messages failed, retried: Invoking fn failed" in caplog.text
