"""Trigger wakes: work due without a commit (a retry after its backoff, a batching window's
end, a new trigger's backlog) is woken by the wake workflow. The pure rules, the fan-out
scheduling wakes on the memory engine with a fake clock, the wake event the workflow sends
the fan-out function, and the Step Functions adapter (botocore Stubber)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import boto3
import pytest
from botocore.stub import Stubber
from fake_clock import Clock

from magnetar_core.adapters.aws.wakes import TriggerWakes as AwsTriggerWakes
from magnetar_core.adapters.memory import memory_stores
from magnetar_core.adapters.memory.timers import TimerStarter
from magnetar_core.adapters.memory.wakes import TriggerWakes
from magnetar_core.api import fanout as fanout_api
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.triggers.records import TargetAnswer
from magnetar_core.domain.triggers.spec import Target
from magnetar_core.domain.triggers.stream import Commits
from magnetar_core.domain.triggers.wakes import (
    RECHECK_MS,
    WAKE_MARGIN_MS,
    soonest_wake_ms,
    wake_at_ms,
    wake_execution_input,
    wake_execution_name,
    woken_topics,
)
from magnetar_core.engine import Engine
from magnetar_local.events import LambdaContext
from magnetar_local.memory_service import memory_settings
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.names import TopicName

TOPIC = "persistent://public/default/woken"
START_MS = 1_000_000_000_500
ARN = "arn:aws:states:us-east-1:123456789012:stateMachine:magnetar-trigger-wake"


# -- the rules ----------------------------------------------------------------------------


def test_a_wake_comes_a_margin_after_the_due_work_on_a_whole_second():
    assert wake_at_ms(START_MS + 3_200, False, START_MS) == START_MS - 500 + 5_000
    assert (START_MS + 3_200 + WAKE_MARGIN_MS) <= START_MS - 500 + 5_000


def test_work_already_due_or_an_undated_retry_is_woken_again_after_the_recheck():
    recheck = START_MS - 500 + 3_000
    assert wake_at_ms(START_MS - 10, False, START_MS) == recheck
    assert wake_at_ms(None, True, START_MS) == recheck
    assert recheck >= START_MS + RECHECK_MS


def test_nothing_due_and_nothing_retried_wakes_nothing():
    assert wake_at_ms(None, False, START_MS) is None


def test_the_soonest_wake_is_the_next_whole_second():
    assert soonest_wake_ms(START_MS) == START_MS + 500
    assert soonest_wake_ms(START_MS + 500) == START_MS + 1_500


def test_a_wakes_execution_name_is_the_same_for_its_topic_and_second_only():
    name = wake_execution_name(TOPIC, 5_000)
    assert name == wake_execution_name(TOPIC, 5_000)
    assert name != wake_execution_name(TOPIC, 6_000)
    assert name != wake_execution_name(TOPIC + "-2", 5_000)
    assert len(name) <= 80 and name.replace("-", "").isalnum()
    assert json.loads(wake_execution_input(TOPIC, 5_000)) == {
        "topics": [TOPIC],
        "dueAt": "1970-01-01T00:00:05Z",
    }


def test_a_wake_event_names_base_topics_and_a_stream_batch_is_no_wake():
    event = {"wake": {"topics": [TOPIC + "-partition-1", TOPIC, "other"]}}
    assert woken_topics(event) == [TOPIC, "persistent://public/default/other"]
    assert woken_topics({"Records": []}) is None
    for bad in ({"wake": {}}, {"wake": {"topics": [1]}}, {"wake": {"topics": ["a/b"]}}):
        with pytest.raises(ValueError, match="wake event"):
            woken_topics(bad)


# -- the fan-out on the memory engine -----------------------------------------------------


@dataclass
class Target500UntilHealed:
    """Fails every batch (500) until ``healed``; records the keys sent."""

    healed: bool = False
    sent: list = field(default_factory=list)

    def invoke(self, target: Target, body: bytes, timestamp_ms: int) -> TargetAnswer:
        self.sent += [r["key"] for r in json.loads(body)["records"]]
        return TargetAnswer(200 if self.healed else 500)


@pytest.fixture
def clock() -> Clock:
    return Clock(START_MS)


@pytest.fixture
def target() -> Target500UntilHealed:
    return Target500UntilHealed()


@pytest.fixture
def wakes() -> TriggerWakes:
    return TriggerWakes()


@pytest.fixture
def engine_and_timers(clock, target, wakes) -> tuple[Engine, TimerStarter]:
    stores = memory_stores()
    timers = TimerStarter(stores.cursors, clock)  # type: ignore[arg-type]
    engine = Engine.assemble(
        memory_settings(), stores, Runtime(now_ms=clock), timers, targets=target, wakes=wakes
    )
    engine.tenants.initialize_cluster()
    engine.admin.create_topic(TopicName.parse(TOPIC), None)
    return engine, timers


def put(engine: Engine, **body: object) -> None:
    spec = {"target": {"type": "lambda", "function": "fn"}, "initialPosition": "Earliest"}
    engine.triggers.put(TopicName.parse(TOPIC), "push", {**spec, **body})


def produce(engine: Engine, clock: Clock, key: str) -> None:
    message = EntryMessage(payload=b"x", sequence_id=0, publish_time_ms=clock.now_ms, key=key)
    engine.producer.publish(TopicName.parse(TOPIC), encode_entry([message], producer_name="p"))


def commit_of_topic() -> Commits:
    return Commits(topics={TOPIC: ["1"]})


def test_a_new_trigger_wakes_its_topic_at_the_next_second(engine_and_timers, wakes, clock):
    engine, _ = engine_and_timers
    put(engine)
    assert wakes.pending() == [(soonest_wake_ms(clock.now_ms), TOPIC)]


def test_a_failed_batch_schedules_the_wake_of_its_retry_and_the_wake_delivers_it(
    engine_and_timers, wakes, clock, target
):
    engine, timers = engine_and_timers
    put(engine, retry={"minDelayMs": 4000, "maxDelayMs": 4000, "multiplier": 1})
    wakes.due(clock.now_ms + 1_000)  # the PUT's wake, taken
    produce(engine, clock, "k1")
    result = engine.fanout.run(commit_of_topic(), lambda: 900_000)
    assert target.sent == ["k1"] and result.failed == []
    due = wake_at_ms(clock.now_ms + 4000, False, clock.now_ms)
    assert result.woken_at == {TOPIC: due} and wakes.pending() == [(due, TOPIC)]

    target.healed = True
    clock.now_ms = due
    timers.release_due()  # the retry's delay timer ran before its wake
    topics = wakes.due(clock.now_ms)
    handle = fanout_api.lambda_handler(lambda: engine)
    answer = handle({"wake": {"topics": topics}}, LambdaContext("trigger-fanout", 256, 180))
    assert answer == {"woken": [TOPIC]}
    assert target.sent == ["k1", "k1"] and wakes.pending() == []


def test_a_batching_window_schedules_a_wake_at_its_end(engine_and_timers, wakes, clock, target):
    engine, _ = engine_and_timers
    target.healed = True
    put(engine, batchSize=10, maximumBatchingWindowMs=5000)
    wakes.due(clock.now_ms + 1_000)
    produce(engine, clock, "k1")
    result = engine.fanout.run(commit_of_topic(), lambda: 900_000)
    assert target.sent == []
    assert result.woken_at == {TOPIC: wake_at_ms(clock.now_ms + 5000, False, clock.now_ms)}


def test_a_topic_with_nothing_due_schedules_no_wake(engine_and_timers, wakes, clock, target):
    engine, _ = engine_and_timers
    target.healed = True
    put(engine)
    wakes.due(clock.now_ms + 1_000)
    produce(engine, clock, "k1")
    result = engine.fanout.run(commit_of_topic(), lambda: 900_000)
    assert target.sent == ["k1"] and result.woken_at == {} and wakes.pending() == []


class FailingWakes:
    def wake_at(self, topic: str, at_ms: int) -> None:
        from magnetar_core.domain.errors import TooManyRequests

        raise TooManyRequests("Step Functions is throttling")


def test_a_wake_that_cannot_be_scheduled_fails_the_topics_records(clock, target):
    stores = memory_stores()
    timers = TimerStarter(stores.cursors, clock)  # type: ignore[arg-type]
    engine = Engine.assemble(
        memory_settings(), stores, Runtime(now_ms=clock), timers, targets=target,
        wakes=FailingWakes(),
    )  # fmt: skip
    engine.tenants.initialize_cluster()
    engine.admin.create_topic(TopicName.parse(TOPIC), None)
    put(engine)  # its own wake fails: logged, the trigger is stored
    assert engine.triggers.names(TopicName.parse(TOPIC)) == ["push"]
    produce(engine, clock, "k1")
    result = engine.fanout.run(Commits(topics={TOPIC: ["7"]}), lambda: 900_000)
    assert result.failed == ["7"] and result.failed_topics == [TOPIC]


def test_a_wake_whose_topic_fails_raises_for_the_workflow_to_retry(engine_and_timers):
    engine, _ = engine_and_timers
    put(engine)
    handle = fanout_api.lambda_handler(lambda: engine)
    out_of_time = LambdaContext("trigger-fanout", 256, 1)  # under the step reserve
    with pytest.raises(fanout_api.WakeFailed, match="not run"):
        handle({"wake": {"topics": [TOPIC]}}, out_of_time)
    with pytest.raises(ValueError, match="wake event"):
        handle({"wake": "now"}, out_of_time)


# -- the Step Functions adapter -----------------------------------------------------------


def test_the_aws_adapter_starts_one_execution_per_topic_and_second():
    sfn = boto3.client("stepfunctions", region_name="us-east-1", aws_access_key_id="x",
                       aws_secret_access_key="x")  # fmt: skip

    def params(at_ms: int) -> dict:
        name, body = wake_execution_name(TOPIC, at_ms), wake_execution_input(TOPIC, at_ms)
        return {"stateMachineArn": ARN, "name": name, "input": body}

    with Stubber(sfn) as stub:
        stub.add_response("start_execution", {"executionArn": ARN + ":x", "startDate": 0}, params(5_000))  # fmt: skip
        stub.add_client_error("start_execution", "ExecutionAlreadyExists", expected_params=params(6_000))  # fmt: skip
        wakes = AwsTriggerWakes(sfn, ARN)
        wakes.wake_at(TOPIC, 5_000)
        wakes.wake_at(TOPIC, 5_000)  # remembered: no second request
        wakes.wake_at(TOPIC, 6_000)  # a finished wake of that second: done, not an error
        wakes.wake_at(TOPIC, 6_000)
        stub.assert_no_pending_responses()
