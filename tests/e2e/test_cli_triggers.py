"""``magnetar triggers`` on the embedded stack, as a user sets up push delivery: a trigger
created on a local function, refused twice under one name, listed, read, updated, then
deleted; a function that does not exist is refused before anything is stored."""

from __future__ import annotations

import json
import uuid

from magnetar.cli.main import main


def triggers(capsys, url: str, *args: str) -> tuple[int, str, str]:
    status = main(["triggers", "--service-url", url, *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_a_user_creates_lists_updates_and_deletes_a_trigger_with_the_cli(local_stack, capsys):
    url, name = local_stack.url, f"push-{uuid.uuid4().hex[:8]}"
    topic = f"persistent://public/default/{name}"
    local_stack.functions.register(f"{name}-fn", lambda event, context: None)
    create = ("create", topic, "push", "--lambda", f"{name}-fn", "--initial-position", "Earliest",
              "--batch-size", "5", "--max-redeliver-count", "3")  # fmt: skip
    status, out, err = triggers(capsys, url, *create)
    assert status == 0, err
    made = json.loads(out)
    assert made["target"] == {"type": "lambda", "function": f"{name}-fn"}
    assert (made["batchSize"], made["deadLetterPolicy"]["maxRedeliverCount"]) == (5, 3)
    status, _, err = triggers(capsys, url, *create)
    assert status == 1 and err.startswith("error: PreconditionFailed: Trigger push of ")
    assert "already exists (If-None-Match: *)" in err
    assert triggers(capsys, url, "list", topic)[:2] == (0, "push\n")
    status, out, _ = triggers(capsys, url, "update", topic, "push", "--lambda", f"{name}-fn",
                              "--batch-size", "7")  # fmt: skip
    assert status == 0 and json.loads(out)["batchSize"] == 7
    assert json.loads(triggers(capsys, url, "get", topic, "push")[1])["batchSize"] == 7
    assert triggers(capsys, url, "delete", topic, "push")[:2] == (0, "")
    assert triggers(capsys, url, "list", topic)[:2] == (0, "")
    status, _, err = triggers(capsys, url, "update", topic, "push", "--lambda", f"{name}-fn")
    assert status == 1 and "PreconditionFailed: Trigger push of " in err
    assert "does not exist (If-Match: *)" in err


def test_a_trigger_on_a_function_that_does_not_exist_is_refused_and_nothing_is_stored(
    local_stack, capsys
):
    url, name = local_stack.url, f"nofn-{uuid.uuid4().hex[:8]}"
    topic = f"persistent://public/default/{name}"
    status, _, err = triggers(capsys, url, "create", topic, "push", "--lambda", "no-such-fn")
    assert status == 1 and "Function no-such-fn does not exist" in err
    status, _, err = triggers(capsys, url, "list", topic)
    assert status == 1 and "TopicNotFound" in err  # the refused trigger did not make its topic
