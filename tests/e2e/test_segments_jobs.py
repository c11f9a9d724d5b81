"""Running compact-segments on the embedded stack as the local JobLauncher's command from
inside the stack's process (as the admin handlers and the ticker make it); consumers read
the same messages afterwards. `magnetar jobs run` in a terminal (a subprocess with its own
JVM) is run by the Spark blocks of docs/guide/spark.md (``tests/e2e/test_readme.py``)."""

from __future__ import annotations

import io
import json
import os
import sys
import uuid
from contextlib import redirect_stdout
from pathlib import Path

import pytest

import magnetar as pulsar
from magnetar_core.engine import launcher_from_settings
from magnetar_core.settings import Settings
from magnetar_local.launcher import LocalJobLauncher

pytestmark = pytest.mark.emulator

ROOT = Path(__file__).resolve().parents[2]
SMALL = {"target-segment-bytes": "4096", "min-tail-bytes": "1", "inline-min-age-ms": "0"}


def _produce(client, topic: str, count: int) -> list[str]:
    producer = client.create_producer(topic, batching_enabled=False)
    sent = [f"message-{i}" for i in range(count)]
    for text in sent:
        producer.send(text.encode())
    producer.close()
    return sent


def _consume(client, topic: str, count: int) -> list[str]:
    consumer = client.subscribe(
        topic, f"s-{uuid.uuid4().hex[:6]}", initial_position=pulsar.InitialPosition.Earliest
    )
    got = []
    for _ in range(count):
        msg = consumer.receive(10_000)
        got.append(msg.data().decode())
        consumer.acknowledge(msg)
    consumer.close()
    return got


def _summary(output: str) -> dict:
    line = next(x for x in output.splitlines() if x.startswith("SUMMARY_JSON "))
    return json.loads(line.removeprefix("SUMMARY_JSON "))


@pytest.mark.usefixtures("spark")
def test_the_local_launchers_command_from_the_stacks_own_process_compacts_the_topic(
    local_stack, client, tmp_path
):
    """The launcher the stack's handlers make, and the run its command line describes; the
    run is in this process (the test run's Spark)."""
    import compact_segments

    topic = f"persistent://public/default/seglaunch-{uuid.uuid4().hex[:8]}"
    sent = _produce(client, topic, 12)
    settings = Settings.from_env({**os.environ, "JOB_LOG_DIR": str(tmp_path)})
    launcher = launcher_from_settings(settings)
    assert isinstance(launcher, LocalJobLauncher)  # JOB_LAUNCHER=local in the stack

    command = launcher.command("compact-segments", {"topic": topic, **SMALL})
    assert command[:2] == [sys.executable, str(ROOT / "spark_glue" / "compact_segments.py")]
    with redirect_stdout(io.StringIO()) as output:
        compact_segments.main(command[2:])
    assert _summary(output.getvalue())["entries_compacted"] == 12
    assert _consume(client, topic, 12) == sent
