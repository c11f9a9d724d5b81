"""Triggering topic compaction (services.compaction) on the in-memory engine: a run with
nothing new past the horizon succeeds without starting a job; new entries start one."""

from __future__ import annotations

from collections.abc import Mapping

from magnetar_core.adapters.memory import memory_stores
from magnetar_core.domain.runtime import Runtime
from magnetar_core.engine import Engine
from magnetar_local.memory_service import memory_settings
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.names import TopicName

TOPIC = TopicName.parse("persistent://public/default/compacted")


class RecordingLauncher:
    """A job launcher (the Glue / spark-submit port) that records the runs it was asked for."""

    def __init__(self) -> None:
        self.started: list[tuple[str, dict[str, str]]] = []

    def start(self, job: str, args: Mapping[str, str]) -> str:
        self.started.append((job, dict(args)))
        return f"run-{len(self.started)}"


def engine_with(launcher: RecordingLauncher) -> Engine:
    engine = Engine.assemble(memory_settings(), memory_stores(), Runtime(), launcher=launcher)
    engine.tenants.initialize_cluster()
    return engine


def produce(engine: Engine, payload: bytes) -> None:
    message = EntryMessage(payload=payload, sequence_id=0, publish_time_ms=1, key="k")
    engine.producer.publish(TOPIC, encode_entry([message], producer_name="p"))


def test_compacting_an_empty_topic_succeeds_at_once_without_starting_a_job():
    launcher = RecordingLauncher()
    engine = engine_with(launcher)
    engine.topics.resolve(TOPIC, create=True)

    engine.compaction.trigger(TOPIC)

    assert launcher.started == []
    assert engine.compaction.status(TOPIC) == {"status": "SUCCESS", "lastError": ""}


def test_a_topic_with_entries_past_the_horizon_starts_the_job_and_shows_running():
    launcher = RecordingLauncher()
    engine = engine_with(launcher)
    produce(engine, b"v1")

    run_id = engine.compaction.trigger(TOPIC)

    assert launcher.started == [("compact-topic", {"topic": str(TOPIC), "run-id": run_id})]
    assert engine.compaction.status(TOPIC)["status"] == "RUNNING"
