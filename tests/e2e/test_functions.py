"""A Pulsar Function on the embedded stack: ``magnetar functions create`` registers it, the
SDK produces, the local trigger driver runs it in-process; every message fails its first
try (after a side publish), yet the output topic holds each result once, in input order."""

from __future__ import annotations

import json
import textwrap
import time
import uuid

import magnetar as pulsar
from magnetar.cli.main import main

CODE = textwrap.dedent("""
    import magnetar as pulsar

    class Exclaim(pulsar.Function):
        def process(self, input, context):
            tries = "tries:" + context.get_message_id()
            context.incr_counter(tries, 1)
            context.publish(context.get_user_config_value("audit"), input)
            if context.get_counter(tries) == 1:
                raise RuntimeError("every message fails its first try")
            return input + "!"
""")


def functions(capsys, url: str, *args: str) -> tuple[int, str, str]:
    status = main(["functions", "--service-url", url, *args])
    out, err = capsys.readouterr()
    return status, out, err


def drain(client: pulsar.Client, topic: str, count: int, timeout_s: float = 15.0) -> list[str]:
    """The payloads of ``topic`` once it holds ``count`` messages, then whatever else it
    holds (a duplicate would be there already: it is published before the result)."""
    reader = client.create_reader(topic, pulsar.MessageId.earliest)
    got: list[str] = []
    deadline = time.monotonic() + timeout_s
    while len(got) < count:
        assert time.monotonic() < deadline, f"{topic} holds only {got}"
        try:
            got.append(reader.read_next(200).data().decode())
        except pulsar.Timeout:
            continue
    while reader.has_message_available():
        got.append(reader.read_next(1000).data().decode())
    return got


def test_a_function_created_with_the_cli_publishes_each_result_once_though_retried(local_stack, capsys, tmp_path):  # fmt: skip
    url, uid = local_stack.url, uuid.uuid4().hex[:8]
    source, name = tmp_path / "exclaim.py", f"exclaim-{uid}"
    source.write_text(CODE)
    inputs, output, audit = f"fn-in-{uid}", f"fn-out-{uid}", f"fn-audit-{uid}"
    create = ("create", "--py", str(source), "--classname", "exclaim.Exclaim", "--inputs", inputs,
              "--output", output, "--name", name, "--user-config", json.dumps({"audit": audit}))  # fmt: skip

    status, out, err = functions(capsys, url, *create)
    assert (status, err) == (0, "") and json.loads(out)["name"] == name
    assert functions(capsys, url, "list")[1].split().count(name) == 1
    client = pulsar.Client(url)
    try:
        producer = client.create_producer(inputs)
        for word in ("alpha", "beta", "gamma"):
            producer.send(word.encode())

        assert drain(client, output, 3) == ["alpha!", "beta!", "gamma!"]
        assert drain(client, audit, 3) == ["alpha", "beta", "gamma"]  # each published twice
    finally:
        client.close()

    assert functions(capsys, url, "delete", "--name", name)[0] == 0
    status, _, err = functions(capsys, url, "get", "--name", name)
    assert status == 1 and "NotFound" in err and "does not exist" in err
