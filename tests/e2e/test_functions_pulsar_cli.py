"""Pulsar Functions written as Pulsar's docs write them, on the embedded stack with
pulsar-admin's verbs: ``magnetar functions create`` of ``examples/functions/``'s unchanged
Pulsar code (``from pulsar import Function``; a native ``def process(input)``), then
``status``, ``stats``, ``trigger``, ``stop`` (the input keeps its backlog) and ``start``;
a function whose class has an unknown base shows its load error in ``status``."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import magnetar as pulsar
from magnetar.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "functions"


def functions(capsys, url: str, *args: str) -> tuple[int, str, str]:
    status = main(["functions", "--service-url", url, *args])
    out, err = capsys.readouterr()
    return status, out, err


def status_of(capsys, url: str, name: str) -> dict:
    code, out, err = functions(capsys, url, "status", "--name", name)
    assert (code, err) == (0, ""), err
    return json.loads(out)


def awaited(check, what: str, timeout_s: float = 15.0):
    """``check()``'s first truthy answer, polled until ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not (answer := check()):
        assert time.monotonic() < deadline, f"never {what}"
        time.sleep(0.05)
    return answer


def read(client: pulsar.Client, topic: str, count: int) -> list[str]:
    reader = client.create_reader(topic, pulsar.MessageId.earliest)
    got: list[str] = []
    deadline = time.monotonic() + 15
    while len(got) < count:
        assert time.monotonic() < deadline, f"{topic} holds only {got}"
        try:
            got.append(reader.read_next(200).data().decode())
        except pulsar.Timeout:
            continue
    reader.close()
    return got


def test_pulsar_docs_functions_run_unchanged_with_status_stats_trigger_stop_and_start(local_stack, capsys):  # fmt: skip
    url, uid = local_stack.url, uuid.uuid4().hex[:8]
    name, words, loud = f"exclamation-{uid}", f"words-{uid}", f"loud-{uid}"
    create = ("create", "--py", str(EXAMPLES / "pulsar_exclamation_function.py"),
              "--classname", "pulsar_exclamation_function.ExclamationFunction",
              "--inputs", words, "--output", loud, "--name", name)  # fmt: skip
    assert functions(capsys, url, *create)[0] == 0
    client = pulsar.Client(url)
    try:
        client.create_producer(words).send(b"hello")
        assert read(client, loud, 1) == ["hello!"]
        counted = awaited(lambda: (s := status_of(capsys, url, name))["instances"][0]["status"]["numSuccessfullyProcessed"] and s, "counted")  # fmt: skip
        assert counted["numRunning"] == 1 and counted["instances"][0]["status"]["running"]

        code, out, err = functions(capsys, url, "trigger", "--name", name, "--trigger-value", "world")  # fmt: skip
        assert (code, out, err) == (0, "world!\n", "")

        assert functions(capsys, url, "stop", "--name", name)[0] == 0
        assert status_of(capsys, url, name)["numRunning"] == 0
        code, _, err = functions(capsys, url, "trigger", "--name", name, "--trigger-value", "x")
        assert code == 1 and "ServiceUnitNotReady" in err and "is stopped" in err
        client.create_producer(words).send(b"later")  # kept in the input while stopped
        assert functions(capsys, url, "start", "--name", name)[0] == 0
        assert read(client, loud, 3) == ["hello!", "world!", "later!"]
    finally:
        client.close()

    stats = awaited(lambda: (s := json.loads(functions(capsys, url, "stats", "--name", name)[1]))["processedSuccessfullyTotal"] >= 3 and s, "3 processed")  # fmt: skip
    assert stats["receivedTotal"] == 3 and stats["userExceptionsTotal"] == 0
    assert stats["avgProcessLatency"] > 0 and stats["lastInvocation"] > 0
    assert functions(capsys, url, "delete", "--name", name)[0] == 0


def test_a_native_function_is_triggered_and_a_foreign_base_class_shows_its_load_error(local_stack, capsys, tmp_path):  # fmt: skip
    url, uid = local_stack.url, uuid.uuid4().hex[:8]
    native = ("create", "--py", str(EXAMPLES / "pulsar_native_function.py"), "--classname",
              "pulsar_native_function", "--inputs", f"in-{uid}", "--name", f"myfunc-{uid}")  # fmt: skip
    assert functions(capsys, url, *native)[0] == 0
    code, out, _ = functions(capsys, url, "trigger", "--name", f"myfunc-{uid}", "--trigger-value", "hello world")  # fmt: skip
    assert (code, out) == (0, "This function has been triggered with a value of hello world\n")

    broken = tmp_path / "broken.py"
    broken.write_text("import json\n\nclass Broken(json.JSONEncoder):\n    def process(self, input, context):\n        return input\n")  # fmt: skip
    create = ("create", "--py", str(broken), "--classname", "broken.Broken", "--inputs",
              f"bin-{uid}", "--name", f"broken-{uid}")  # fmt: skip
    assert functions(capsys, url, *create)[0] == 0
    client = pulsar.Client(url)
    try:
        client.create_producer(f"bin-{uid}").send(b"x")
    finally:
        client.close()
    got = awaited(lambda: (s := status_of(capsys, url, f"broken-{uid}")["instances"][0]["status"])["numSystemExceptions"] and s, "a system exception")  # fmt: skip
    assert "subclasses json.encoder.JSONEncoder, not pulsar.Function" in got["error"]
    assert got["numSuccessfullyProcessed"] == 0 and got["numRestarts"] >= 1
    assert functions(capsys, url, "stop", "--name", f"broken-{uid}")[0] == 0  # no more retries
