"""The notification channel on the memory engine (issue 16, ``domain.notify``): watches
are read and refused as Pulsar errors, a commit posts one notice per watch and consumes
it, a gone connection is dropped, and a watch holds its consumer's lease until its
connection ends, so Exclusive stays exclusive while a consumer sleeps and frees up when its
client goes. Time is a fake clock."""

from __future__ import annotations

import json

import pytest
from fake_clock import Clock

from magnetar_core.adapters.memory import RecordingConnections, memory_stores
from magnetar_core.adapters.memory.timers import TimerStarter
from magnetar_core.domain import notify
from magnetar_core.domain.cursor.records import ConsumerInfo
from magnetar_core.domain.errors import ConsumerBusy, InvalidMessage, NotAllowedError
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.security.policy import AuthorizationError
from magnetar_core.engine import Engine
from magnetar_local.memory_service import memory_settings
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.errors import InvalidTopicName
from magnetar_wire.names import TopicName

TOPIC = TopicName.parse("persistent://public/default/idle")
START_MS = 1_000_000
LEASE_MS = 60_000


def make_engine(clock: Clock) -> tuple[Engine, RecordingConnections]:
    connections = RecordingConnections()
    stores = memory_stores()
    timers = TimerStarter(stores.cursors, clock)  # type: ignore[arg-type]
    engine = Engine.assemble(memory_settings(), stores, runtime=Runtime(now_ms=clock),
                             starter=timers, connections=connections)  # fmt: skip
    engine.tenants.initialize_cluster()
    return engine, connections


def watch_body(consumer_id: str, subscription: str = "s", topic: str = str(TOPIC)) -> dict:
    return {"action": "watch",
            "watches": [{"topic": topic, "subscription": subscription, "consumerId": consumer_id}]}  # fmt: skip


def subscribe(engine: Engine, role: str | None = None, sub_type: str = "Exclusive") -> str:
    handle = engine.subscriptions.subscribe(TOPIC, "s", None, sub_type, earliest=True, role=role)
    return handle.consumer_id


@pytest.mark.parametrize(
    ("body", "names"),
    [
        ([], "JSON object"),
        ({"watches": []}, "'watches'"),
        ({"watches": ["x"]}, "watches[0]"),
        ({"watches": [{"topic": "t", "subscription": "s"}]}, "watches[0].consumerId"),
        ({"watches": [{"topic": "t", "subscription": 3, "consumerId": "c"}]}, "subscription"),
    ],
)
def test_a_bad_watch_body_is_refused_as_invalid_message_naming_the_field(body, names) -> None:
    with pytest.raises(InvalidMessage, match=names.replace("[", r"\[").replace("]", r"\]")):
        notify.parse_watches(body, "conn")


def test_a_watch_of_a_bad_topic_name_is_refused_as_invalid_topic_name() -> None:
    with pytest.raises(InvalidTopicName):
        notify.parse_watches(watch_body("c", topic="persistent://a"), "conn")


def test_the_stream_commits_are_read_as_partitions_skipping_what_is_no_log_insert() -> None:
    def record(name: str, pk: str) -> dict:
        return {"eventName": name, "dynamodb": {"Keys": {"pk": {"S": pk}}}}

    partition = "persistent://public/default/t-partition-1"
    event = {"Records": [record("INSERT", f"{partition}|3"), record("MODIFY", f"{TOPIC}|1"),
                         record("INSERT", "no-log-key"), record("INSERT", f"{partition}|4"),
                         record("INSERT", f"{TOPIC}|1")]}  # fmt: skip
    assert notify.committed_partitions(event) == [partition, str(TOPIC)]


def test_a_hold_survives_the_cursor_item_codec_and_keeps_the_consumer_from_lapsing() -> None:
    info = ConsumerInfo("c", "n", START_MS, START_MS)
    assert notify.hold(info, "conn-1", START_MS)
    loaded = ConsumerInfo.from_dict("c", info.to_dict())
    assert (loaded.held_by, loaded.held_until_ms) == ("conn-1", START_MS + notify.HOLD_MS)
    assert not loaded.lapsed(START_MS + notify.HOLD_MS, LEASE_MS)
    assert loaded.lapsed(START_MS + notify.HOLD_MS + 1, LEASE_MS)


def test_only_the_holding_connection_releases_a_hold_and_the_lease_runs_from_then() -> None:
    info = ConsumerInfo("c", "n", START_MS, START_MS)
    notify.hold(info, "new", START_MS)
    assert not notify.release(info, "old", START_MS + 5_000)
    assert info.held_by == "new"
    assert notify.release(info, "new", START_MS + 600_000)
    assert not info.lapsed(START_MS + 600_000 + LEASE_MS, LEASE_MS)
    assert info.lapsed(START_MS + 600_001 + LEASE_MS, LEASE_MS)


def test_a_renewed_hold_of_the_same_connection_is_not_rewritten_within_a_tenth() -> None:
    info = ConsumerInfo("c", "n", START_MS, START_MS)
    assert notify.hold(info, "conn", START_MS)
    assert not notify.hold(info, "conn", START_MS + notify.HOLD_MS // 20)
    assert notify.hold(info, "conn", START_MS + notify.HOLD_MS // 5)


def test_a_watching_exclusive_consumer_stays_exclusive_while_silent_past_its_lease() -> None:
    clock = Clock(START_MS)
    engine, _ = make_engine(clock)
    consumer = subscribe(engine)
    engine.notify.connect("conn", None)
    assert engine.notify.watch("conn", watch_body(consumer)) == (1, None)
    clock.now_ms += 30 * 60_000  # half an hour of silence
    with pytest.raises(ConsumerBusy):
        subscribe(engine)


def test_a_disconnect_frees_an_exclusive_subscription_one_lease_later() -> None:
    clock = Clock(START_MS)
    engine, _ = make_engine(clock)
    consumer = subscribe(engine)
    engine.notify.connect("conn", None)
    engine.notify.watch("conn", watch_body(consumer))
    clock.now_ms += 30 * 60_000
    assert engine.notify.disconnect("conn") == 1
    with pytest.raises(ConsumerBusy):
        subscribe(engine)
    clock.now_ms += LEASE_MS + 1
    assert subscribe(engine) != consumer


def test_a_hold_ends_by_itself_when_the_disconnect_never_comes() -> None:
    clock = Clock(START_MS)
    engine, _ = make_engine(clock)
    consumer = subscribe(engine)
    engine.notify.connect("conn", None)
    engine.notify.watch("conn", watch_body(consumer))
    clock.now_ms += notify.HOLD_MS + 1
    assert subscribe(engine) != consumer


def test_a_commit_posts_one_notice_per_watch_and_consumes_it() -> None:
    clock = Clock(START_MS)
    engine, connections = make_engine(clock)
    consumer = subscribe(engine, sub_type="Shared")
    engine.notify.connect("a", None)
    engine.notify.connect("b", None)
    engine.notify.watch("a", watch_body(consumer))
    engine.notify.watch("b", watch_body(consumer))
    assert engine.notify.notify([str(TOPIC), "persistent://public/default/other"]).posted == 2
    assert sorted(connections.sent) == [(c, json.dumps({"notice": str(TOPIC)}, separators=(",", ":")).encode()) for c in "ab"]  # fmt: skip
    assert engine.notify.notify([str(TOPIC)]).posted == 0  # consumed: a busy topic costs none


def test_a_gone_connection_is_dropped_and_its_hold_released() -> None:
    clock = Clock(START_MS)
    engine, connections = make_engine(clock)
    consumer = subscribe(engine)
    engine.notify.connect("gone", None)
    engine.notify.watch("gone", watch_body(consumer))
    connections.gone.add("gone")
    assert engine.notify.notify([str(TOPIC)]).gone == ["gone"]
    assert engine.notify.disconnect("gone") == 0  # already forgotten
    clock.now_ms += LEASE_MS + 1
    assert subscribe(engine) != consumer


def test_a_watch_on_an_unknown_connection_is_refused_and_holds_nothing() -> None:
    clock = Clock(START_MS)
    engine, _ = make_engine(clock)
    consumer = subscribe(engine)
    with pytest.raises(NotAllowedError, match="connect again"):
        engine.notify.watch("never", watch_body(consumer))
    clock.now_ms += LEASE_MS + 1
    assert subscribe(engine) != consumer


def test_a_watch_of_another_roles_consumer_is_refused() -> None:
    clock = Clock(START_MS)
    engine, _ = make_engine(clock)
    consumer = subscribe(engine, role="alice")
    engine.notify.connect("conn", "mallory")
    with pytest.raises(AuthorizationError):
        engine.notify.watch("conn", watch_body(consumer))
    assert engine.notify.notify([str(TOPIC)]).posted == 0


def produce(engine: Engine, clock: Clock, deliver_at_ms: int = 0) -> None:
    message = EntryMessage(payload=b"m", sequence_id=0, publish_time_ms=clock.now_ms,
                           deliver_at_ms=deliver_at_ms)  # fmt: skip
    engine.producer.publish(TOPIC, encode_entry([message], producer_name="p"))


def test_a_watch_says_when_another_consumers_lease_ends_with_entries_it_holds() -> None:
    clock = Clock(START_MS)
    engine, _ = make_engine(clock)
    holder, sleeper = subscribe(engine, sub_type="Shared"), subscribe(engine, sub_type="Shared")
    produce(engine, clock)
    assert engine.subscriptions.receive(TOPIC, "s", holder, 10, 0)
    clock.now_ms += 10_000
    engine.notify.connect("conn", None)
    assert engine.notify.watch("conn", watch_body(sleeper)) == (1, LEASE_MS - 10_000 + 1)


def test_a_watch_says_when_a_delayed_message_comes_due() -> None:
    clock = Clock(START_MS)
    engine, _ = make_engine(clock)
    sleeper = subscribe(engine, sub_type="Shared")
    produce(engine, clock, deliver_at_ms=START_MS + 90_000)
    assert engine.subscriptions.receive(TOPIC, "s", sleeper, 10, 0) == []  # now delayed
    engine.notify.connect("conn", None)
    count, recheck_ms = engine.notify.watch("conn", watch_body(sleeper))
    assert count == 1 and recheck_ms is not None and 0 < recheck_ms <= 90_000
