"""The trigger fan-out on the memory engine: a log-stream batch (events/stream/) wakes the
triggers of the topics it committed to, with one trigger lookup per topic; a topic that
fails or runs out of time answers only its own records as batchItemFailures."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from magnetar_core.adapters.memory import memory_stores
from magnetar_core.adapters.memory.wakes import TriggerWakes
from magnetar_core.adapters.targets import LocalFunctions, Targets
from magnetar_core.api import fanout as fanout_api
from magnetar_core.domain.triggers.stream import committed_topics
from magnetar_core.domain.triggers.wakes import soonest_wake_ms
from magnetar_core.engine import Engine
from magnetar_core.services.triggers.fanout import FanOut
from magnetar_local.events import LambdaContext
from magnetar_local.memory_service import memory_settings
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.names import TopicName

SAMPLE = Path(__file__).resolve().parents[2] / "events" / "stream" / "log_inserts.json"
ORDERS = "persistent://public/default/fanout-orders"
AUDIT = "persistent://public/default/fanout-audit"
PLENTY_MS = 900_000


def sample() -> dict:
    return json.loads(SAMPLE.read_text())


class CountingTriggerStore:
    """The memory trigger store, counting ``list`` calls (each one Query on AWS)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.lists: list[str] = []

    def list(self, topic: TopicName) -> Any:
        self.lists.append(str(topic))
        return self.inner.list(topic)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@pytest.fixture
def calls() -> list:
    return []


@pytest.fixture
def store() -> CountingTriggerStore:
    return CountingTriggerStore(None)


@pytest.fixture
def engine(calls, store) -> Engine:
    def handler(event, context):
        calls.append([r["key"] for r in event["records"]])
        return {}

    stores = memory_stores()
    store.inner = stores.triggers
    stores = dataclasses.replace(stores, triggers=store)
    targets = Targets(functions=LocalFunctions({"fn": handler}))
    engine = Engine.assemble(memory_settings(), stores, targets=targets)
    engine.tenants.initialize_cluster()
    engine.admin.create_topic(TopicName.parse(ORDERS), None)
    engine.admin.create_topic(TopicName.parse(AUDIT), 2)
    engine.triggers.put(TopicName.parse(ORDERS), "push", {"target": {"type": "lambda", "function": "fn"}})  # fmt: skip
    store.lists.clear()
    return engine


def produce(engine: Engine, topic: str, key: str) -> None:
    entry = encode_entry([EntryMessage(payload=b"x", sequence_id=0, publish_time_ms=1, key=key)], producer_name="p")  # fmt: skip
    engine.producer.publish(TopicName.parse(topic), entry)


def test_the_sample_batch_reads_as_two_base_topics_with_their_sequence_numbers():
    commits = committed_topics(sample())
    assert commits.topics == {
        ORDERS: ["111100000000000000000001", "111100000000000000000003"],
        AUDIT: ["111100000000000000000002"],
    }
    assert commits.skipped == []


def test_records_that_are_no_inserts_or_no_log_keys_are_skipped_with_the_reason():
    records = sample()["Records"]
    modify = {**records[0], "eventName": "MODIFY"}
    foreign = json.loads(json.dumps(records[1]))
    foreign["dynamodb"]["Keys"]["pk"]["S"] = "persistent://public/default/x|once|abc"
    commits = committed_topics({"Records": [modify, foreign, "junk", records[2]]})
    assert commits.topics == {ORDERS: ["111100000000000000000003"]}
    reasons = [why for _, why in commits.skipped]
    assert "not an INSERT" in reasons[0] and "no log key" in reasons[1]
    assert reasons[2] == "not a DynamoDB stream record"
    assert committed_topics({"nothing": 1}).topics == {}


def test_the_handler_delivers_the_committed_topic_and_looks_up_the_other_topic_once(
    engine, calls, store
):
    produce(engine, ORDERS, "a")
    produce(engine, ORDERS, "b")
    produce(engine, AUDIT + "-partition-1", "c")
    handle = fanout_api.lambda_handler(lambda: engine)
    assert handle(sample(), LambdaContext("trigger-fanout", 256, 180)) == {"batchItemFailures": []}
    assert [k for batch in calls for k in batch] == ["a", "b"]
    assert sorted(store.lists) == sorted([ORDERS, AUDIT])  # one lookup per topic, no more


class FailingOn:
    """A delivery that raises for the triggers of one topic and delegates the rest."""

    def __init__(self, inner: Any, topic: str) -> None:
        self.inner, self.topic = inner, topic

    def deliver_once(self, trigger):
        if trigger.topic == self.topic:
            raise RuntimeError("the cursors table is throttling")
        return self.inner.deliver_once(trigger)


def test_a_failing_topic_answers_only_its_own_records_and_the_others_are_delivered(engine, calls):
    engine.triggers.put(TopicName.parse(AUDIT), "push", {"target": {"type": "lambda", "function": "fn"}})  # fmt: skip
    produce(engine, ORDERS, "a")
    fan = FanOut(engine.triggers, FailingOn(engine.delivery, AUDIT), engine.runtime)  # type: ignore[arg-type]
    result = fan.run(committed_topics(sample()), lambda: PLENTY_MS)
    assert result.failed == ["111100000000000000000002"]
    assert calls == [["a"]] and result.outcomes[ORDERS].acknowledged == 1


def test_no_step_starts_under_the_time_reserve_and_only_topics_with_triggers_are_retried(
    engine, calls
):
    produce(engine, ORDERS, "a")
    fan = FanOut(engine.triggers, engine.delivery, engine.runtime, step_reserve_ms=10_000)
    result = fan.run(committed_topics(sample()), lambda: 9_999)
    assert result.failed == ["111100000000000000000001", "111100000000000000000003"]
    assert calls == []
    assert fan.run(committed_topics(sample()), lambda: 10_000).failed == []
    assert calls == [["a"]]


def test_the_sample_wake_runs_the_triggers_of_its_topic_without_a_stream_record(
    engine, calls, store
):
    produce(engine, ORDERS, "a")
    wake = json.loads((SAMPLE.parent / "wake.json").read_text())
    handle = fanout_api.lambda_handler(lambda: engine)
    assert handle(wake, LambdaContext("trigger-fanout", 256, 180)) == {"woken": [ORDERS]}
    assert calls == [["a"]] and store.lists == [ORDERS]


def test_without_wakes_a_topic_still_progressing_after_the_step_bound_has_its_records_retried(
    engine, calls, monkeypatch
):
    monkeypatch.setattr("magnetar_core.services.triggers.fanout.MAX_STEPS", 2)
    engine.triggers.put(TopicName.parse(ORDERS), "push", {"target": {"type": "lambda", "function": "fn"}, "batchSize": 1})  # fmt: skip
    for key in "abcde":  # five entries; a step takes a batch of 1 and one more
        produce(engine, ORDERS, key)
    fan = FanOut(engine.triggers, engine.delivery, engine.runtime)
    result = fan.run(committed_topics(sample()), lambda: PLENTY_MS)
    assert result.failed == ["111100000000000000000001", "111100000000000000000003"]
    assert calls == [["a"], ["b"], ["c"], ["d"]]  # the mapping's retry wakes it again
    assert fan.run(committed_topics(sample()), lambda: PLENTY_MS).failed == []
    assert calls == [["a"], ["b"], ["c"], ["d"], ["e"]]


def test_with_wakes_a_topic_still_progressing_after_the_step_bound_is_woken_again_at_once(
    engine, calls, monkeypatch
):
    monkeypatch.setattr("magnetar_core.services.triggers.fanout.MAX_STEPS", 2)
    engine.triggers.put(TopicName.parse(ORDERS), "push", {"target": {"type": "lambda", "function": "fn"}, "batchSize": 1})  # fmt: skip
    for key in "abcde":
        produce(engine, ORDERS, key)
    wakes = TriggerWakes()
    fan = FanOut(engine.triggers, engine.delivery, engine.runtime, wakes)
    earliest = soonest_wake_ms(engine.runtime.now_ms())
    result = fan.run(committed_topics(sample()), lambda: PLENTY_MS)
    latest = soonest_wake_ms(engine.runtime.now_ms())  # the wall clock may cross a second
    assert result.failed == [] and calls == [["a"], ["b"], ["c"], ["d"]]
    ((at_ms, topic),) = wakes.pending()
    assert topic == ORDERS and earliest <= at_ms <= latest


class CountingDelivery:
    """The engine's delivery, counting steps."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.steps = inner, 0

    def deliver_once(self, trigger):
        self.steps += 1
        return self.inner.deliver_once(trigger)


def test_a_step_that_took_less_than_it_could_ends_the_wake_without_a_step_that_finds_nothing(
    engine, calls
):
    produce(engine, ORDERS, "a")
    delivery = CountingDelivery(engine.delivery)
    fan = FanOut(engine.triggers, delivery, engine.runtime)  # type: ignore[arg-type]
    assert fan.run(committed_topics(sample()), lambda: PLENTY_MS).failed == []
    assert calls == [["a"]] and delivery.steps == 1


def test_a_step_that_filled_its_receive_is_followed_by_another(engine, calls):
    engine.triggers.put(TopicName.parse(ORDERS), "push", {"target": {"type": "lambda", "function": "fn"}, "batchSize": 1})  # fmt: skip
    for key in "abc":
        produce(engine, ORDERS, key)
    delivery = CountingDelivery(engine.delivery)
    fan = FanOut(engine.triggers, delivery, engine.runtime)  # type: ignore[arg-type]
    fan.run(committed_topics(sample()), lambda: PLENTY_MS)
    # a step takes a batch and one more (a, b), so it is full; the next takes c, short
    assert calls == [["a"], ["b"], ["c"]] and delivery.steps == 2
