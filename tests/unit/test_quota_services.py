"""Backlog quotas and rate limits on the in-memory engine (issue 14): their administration
with Pulsar's errors, and their enforcement on produce, subscribe and receive, on a fake
clock."""

from __future__ import annotations

import pytest

from magnetar_core.adapters.memory import memory_stores
from magnetar_core.domain.errors import (
    InvalidMessage,
    NotFound,
    PreconditionFailed,
    ProducerBlockedQuotaExceededError,
    ProducerBlockedQuotaExceededException,
    Throttled,
    TopicNotFound,
)
from magnetar_core.domain.runtime import Runtime
from magnetar_core.engine import Engine
from magnetar_local.memory_service import memory_settings
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.names import TopicName

TOPIC = TopicName.parse("persistent://public/default/quota")
HOLD = {"limitSize": 100, "policy": "producer_request_hold"}


class Clock:
    """Epoch ms and monotonic ms in one, moved by the test (and by the engine's sleeps)."""

    def __init__(self) -> None:
        self.ms = 1_700_000_000_000

    def now(self) -> int:
        return self.ms

    def sleep(self, ms: float) -> None:
        self.ms += int(ms)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def engine(clock) -> Engine:
    runtime = Runtime(now_ms=clock.now, monotonic_ms=clock.now, sleep_ms=clock.sleep)
    engine = Engine.assemble(memory_settings(), memory_stores(), runtime)
    engine.tenants.initialize_cluster()
    return engine


def entry(size: int = 10, count: int = 1) -> bytes:
    messages = [
        EntryMessage(payload=b"x" * size, sequence_id=i, publish_time_ms=1) for i in range(count)
    ]
    return encode_entry(messages, producer_name="p")


def stored(engine: Engine) -> int:
    return engine.stats.topic_stats(engine.topics.get(TOPIC))["msgInCounter"]


# ------------------------------------------------------------------ administration
def test_backlog_quotas_are_set_read_and_removed_per_type_on_a_namespace(engine):
    quotas = engine.quotas
    quotas.set_namespace_backlog_quota("public", "default", None, HOLD)
    age = {"limitTime": 60, "policy": "producer_exception"}
    quotas.set_namespace_backlog_quota("public", "default", "message_age", age)
    assert quotas.namespace("public", "default").backlog_map() == {
        "destination_storage": {
            "limitSize": 100,
            "limitTime": -1,
            "policy": "producer_request_hold",
        },
        "message_age": {"limitSize": -1, "limitTime": 60, "policy": "producer_exception"},
    }
    quotas.remove_namespace_backlog_quota("public", "default", "destination_storage")
    assert list(quotas.namespace("public", "default").backlog_map()) == ["message_age"]


def test_a_backlog_quota_beyond_the_retention_is_412_and_changes_nothing(engine):
    retention = {"retentionTimeInMinutes": -1, "retentionSizeInMB": 1}
    engine.namespaces.set_retention("public", "default", retention)
    big = {"limitSize": 1024 * 1024, "policy": "producer_request_hold"}
    with pytest.raises(
        PreconditionFailed, match="Backlog Quota exceeds configured retention quota"
    ):
        engine.quotas.set_namespace_backlog_quota("public", "default", None, big)
    assert engine.quotas.namespace("public", "default").backlog_map() == {}
    age = {"limitTime": 120, "policy": "producer_request_hold"}
    engine.quotas.set_namespace_backlog_quota("public", "default", "message_age", age)
    with pytest.raises(PreconditionFailed, match="Retention Quota must exceed"):
        engine.namespaces.set_retention(
            "public", "default", {"retentionTimeInMinutes": 1, "retentionSizeInMB": -1}
        )
    assert engine.namespaces.retention("public", "default").to_body() == retention


def test_a_topic_quota_is_checked_against_the_retention_that_applies_to_it(engine):
    engine.admin.create_topic(TOPIC, None)
    engine.namespaces.set_retention(
        "public", "default", {"retentionTimeInMinutes": 1, "retentionSizeInMB": -1}
    )
    with pytest.raises(PreconditionFailed, match="for topic"):
        engine.quotas.set_topic_backlog_quota(
            TOPIC, "message_age", {"limitTime": 60, "policy": "producer_exception"}
        )
    engine.quotas.set_topic_backlog_quota(TOPIC, None, HOLD)
    assert engine.quotas.topic(TOPIC).backlog_map() == {
        "destination_storage": HOLD | {"limitTime": -1}
    }


def test_unknown_namespaces_and_topics_are_404_and_bad_bodies_400(engine):
    with pytest.raises(NotFound):
        engine.quotas.set_namespace_rate("public", "nope", "publish_rate", {})
    with pytest.raises(TopicNotFound):
        engine.quotas.set_topic_rate(TOPIC, "dispatch_rate", {})
    with pytest.raises(TopicNotFound):
        engine.quotas.topic(TOPIC)
    with pytest.raises(InvalidMessage):
        engine.quotas.set_namespace_rate("public", "default", "subscribe_rate", {"x": 1})
    assert engine.quotas.namespace_rate("public", "default", "subscribe_rate") is None


def test_a_topic_rate_overrides_its_namespaces_and_applied_falls_back_to_it(engine):
    engine.admin.create_topic(TOPIC, None)
    engine.quotas.set_namespace_rate(
        "public", "default", "publish_rate", {"publishThrottlingRateInMsg": 10}
    )
    assert engine.quotas.topic_rate(TOPIC, "publish_rate") is None
    assert engine.quotas.topic_rate(TOPIC, "publish_rate", applied=True).msgs_per_s == 10
    engine.quotas.set_topic_rate(TOPIC, "publish_rate", {"publishThrottlingRateInMsg": 3})
    assert engine.quotas.applied(TOPIC, fresh=True).publish_rate.msgs_per_s == 3
    engine.quotas.remove_topic_rate(TOPIC, "publish_rate")
    assert engine.quotas.applied(TOPIC, fresh=True).publish_rate.msgs_per_s == 10


# ------------------------------------------------------------------ enforcement
def test_a_publish_rate_admits_its_rate_and_answers_429_with_a_retry_time_beyond_it(engine, clock):
    engine.admin.create_topic(TOPIC, None)
    engine.quotas.set_topic_rate(TOPIC, "publish_rate", {"publishThrottlingRateInMsg": 5})
    for _ in range(5):
        engine.producer.publish(TOPIC, entry())
    with pytest.raises(Throttled) as refused:
        engine.producer.publish(TOPIC, entry())
    assert 0 < refused.value.retry_after_ms <= 201
    assert stored(engine) == 5  # the refused entry stored nothing
    clock.sleep(refused.value.retry_after_ms)
    engine.producer.publish(TOPIC, entry())
    assert stored(engine) == 6


def test_a_producer_exception_quota_refuses_produce_at_once_and_stores_nothing(engine):
    engine.admin.create_topic(TOPIC, None)
    engine.subscriptions.subscribe(TOPIC, "s", "c", "Shared", earliest=True)
    quota = {"limitSize": len(entry()) + 1, "policy": "producer_exception"}
    engine.quotas.set_topic_backlog_quota(TOPIC, None, quota)
    engine.producer.publish(TOPIC, entry())
    engine.producer.publish(TOPIC, entry())  # the backlog reaches the quota only now
    with pytest.raises(ProducerBlockedQuotaExceededException):
        engine.producer.publish(TOPIC, entry())
    assert stored(engine) == 2


def test_a_held_producer_goes_again_once_consumers_catch_up(engine, clock):
    engine.admin.create_topic(TOPIC, None)
    consumer = engine.subscriptions.subscribe(TOPIC, "s", "c", "Shared", earliest=True)
    engine.quotas.set_topic_backlog_quota(
        TOPIC, None, {"limitSize": 1, "policy": "producer_request_hold"}
    )
    engine.producer.publish(TOPIC, entry())
    with pytest.raises(ProducerBlockedQuotaExceededError):
        engine.producer.publish(TOPIC, entry())
    got = engine.subscriptions.receive(TOPIC, "s", consumer.consumer_id, 10, 0)
    ids = [f"{d.ledger_id}:{d.entry_id}:-1:-1" for d in got]
    engine.subscriptions.acknowledge(TOPIC, "s", consumer.consumer_id, ids, cumulative=False)
    with pytest.raises(ProducerBlockedQuotaExceededError):  # the measure is cached a while
        engine.producer.publish(TOPIC, entry())
    clock.sleep(5_000)  # BACKLOG_CHECK_MS later it is measured again: empty
    engine.producer.publish(TOPIC, entry())
    assert stored(engine) == 2


def test_consumer_backlog_eviction_moves_the_cursors_past_the_oldest_backlog(engine, clock):
    engine.admin.create_topic(TOPIC, None)
    engine.subscriptions.subscribe(TOPIC, "s", "c", "Shared", earliest=True)
    quota = {"limitSize": 2 * len(entry()), "policy": "consumer_backlog_eviction"}
    engine.quotas.set_topic_backlog_quota(TOPIC, None, quota)
    for _ in range(5):
        engine.producer.publish(TOPIC, entry())
        clock.sleep(5_000)  # each produce measures the backlog again
    backlog = engine.stats.topic_stats(engine.topics.get(TOPIC))["subscriptions"]["s"]["msgBacklog"]
    assert backlog <= 3  # evicted down to the quota, plus what came after the last check


def test_a_dispatch_rate_makes_receive_return_fewer_messages(engine, clock):
    engine.admin.create_topic(TOPIC, None)
    consumer = engine.subscriptions.subscribe(TOPIC, "s", "c", "Shared", earliest=True)
    for _ in range(10):
        engine.producer.publish(TOPIC, entry())
    rate = {"dispatchThrottlingRateInMsg": 3, "ratePeriodInSecond": 1}
    engine.quotas.set_topic_rate(TOPIC, "subscription_dispatch_rate", rate)
    first = engine.subscriptions.receive(TOPIC, "s", consumer.consumer_id, 10, 0)
    assert len(first) == 3
    assert engine.subscriptions.receive(TOPIC, "s", consumer.consumer_id, 10, 0) == []
    clock.sleep(1_000)
    assert len(engine.subscriptions.receive(TOPIC, "s", consumer.consumer_id, 10, 0)) == 3


def test_a_subscribe_rate_answers_429_to_a_consumer_subscribing_too_often(engine, clock):
    engine.admin.create_topic(TOPIC, None)
    rate = {"subscribeThrottlingRatePerConsumer": 2, "ratePeriodInSecond": 10}
    engine.quotas.set_topic_rate(TOPIC, "subscribe_rate", rate)
    for _ in range(2):
        engine.subscriptions.subscribe(TOPIC, "s", "c", "Shared", earliest=True)
    with pytest.raises(Throttled):
        engine.subscriptions.subscribe(TOPIC, "s", "c", "Shared", earliest=True)
    engine.subscriptions.subscribe(TOPIC, "s", "other", "Shared", earliest=True)
    clock.sleep(5_000)
    engine.subscriptions.subscribe(TOPIC, "s", "c", "Shared", earliest=True)
