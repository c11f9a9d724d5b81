"""A produce gives up before its commit point when its Lambda invocation is nearly out of time
(services.deadline): nothing is stored after API Gateway may have answered its client 503.
Memory engine; the HTTP edge's deadline from a Lambda context."""

from __future__ import annotations

import pytest

from magnetar_core.adapters.memory import memory_stores
from magnetar_core.api import http
from magnetar_core.domain.errors import ServiceUnitNotReady
from magnetar_core.engine import Engine
from magnetar_core.services.deadline import COMMIT_RESERVE_MS, Deadline, within
from magnetar_local.events import LambdaContext
from magnetar_local.memory_service import memory_settings
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.names import TopicName

TOPIC = TopicName.parse("persistent://public/default/deadline")


class Clock:
    """A monotonic clock (ms) the test moves."""

    def __init__(self) -> None:
        self.now_ms = 1_000.0

    def __call__(self) -> float:
        return self.now_ms


@pytest.fixture
def stores():
    return memory_stores()


@pytest.fixture
def engine(stores) -> Engine:
    engine = Engine.assemble(memory_settings(), stores)
    engine.tenants.initialize_cluster()
    return engine


def entry(payload: bytes) -> bytes:
    return encode_entry([EntryMessage(payload=payload, sequence_id=0)], producer_name="p")


def committed(engine: Engine, stores) -> int:
    """How many entries with messages the topic's log holds (an id taken by a commit that
    gave up is a hole, no entry: readers skip it)."""
    key = engine.topics.resolve(TOPIC, create=True).key
    return sum(1 for item in stores.log.read_from(key, 0, 1_000) if not item.hole and item.count)


def test_a_produce_whose_time_ran_out_commits_nothing_and_asks_for_a_retry(engine, stores):
    clock = Clock()
    limit = Deadline.after(25_000, clock)
    clock.now_ms += 25_000 - COMMIT_RESERVE_MS  # the reserve is all that is left
    with within(limit), pytest.raises(ServiceUnitNotReady, match="nothing was stored, retry"):
        engine.producer.publish(TOPIC, entry(b"late"))
    assert committed(engine, stores) == 0
    result = engine.producer.publish(TOPIC, entry(b"retried"))  # no request deadline: commits
    assert result.entry_id == 1 and committed(engine, stores) == 1  # id 0: the refused one's hole


def test_a_produce_with_more_than_the_reserve_left_commits(engine):
    clock = Clock()
    limit = Deadline.after(25_000, clock)
    clock.now_ms += 25_000 - COMMIT_RESERVE_MS - 1
    with within(limit):
        first = engine.producer.publish(TOPIC, entry(b"a"))
        second = engine.producer.publish(TOPIC, entry(b"b"))
    assert (first.entry_id, second.entry_id) == (0, 1)


def test_the_deadline_holds_only_within_its_block(engine):
    expired = Deadline(at_ms=0, clock_ms=lambda: 1.0)
    with within(expired), pytest.raises(ServiceUnitNotReady):
        engine.producer.publish(TOPIC, entry(b"a"))
    assert engine.producer.publish(TOPIC, entry(b"b")).entry_id == 1  # 0: the refused id, a hole


def test_a_multi_entry_produce_reports_the_entries_after_the_deadline_as_not_stored(engine, stores):
    from magnetar_wire.frames import encode_frames

    clock = Clock()
    limit = Deadline.after(COMMIT_RESERVE_MS + 10, clock)
    commits = engine.producer.publish

    def slow_publish(*args, **kwargs):
        result = commits(*args, **kwargs)
        clock.now_ms += 10  # the first commit uses up the time above the reserve
        return result

    engine.producer.publish = slow_publish  # type: ignore[method-assign]
    with within(limit):
        many = engine.produce_many.publish(TOPIC, encode_frames([entry(b"a"), entry(b"b")]))
    assert many.committed == 1
    assert many.results[1].code == "ServiceUnitNotReady"  # type: ignore[union-attr]
    assert committed(engine, stores) == 1


def test_the_http_edge_takes_the_deadline_from_the_lambda_context():
    plenty = http._deadline(LambdaContext("produce", 256, 25))
    nearly_out = http._deadline(LambdaContext("produce", 256, 1))
    assert plenty is not None and not plenty.passed()
    assert nearly_out is not None and nearly_out.passed()  # 1 s left < the 2 s reserve
    assert http._deadline(None) is None
    assert http._deadline(object()) is None
