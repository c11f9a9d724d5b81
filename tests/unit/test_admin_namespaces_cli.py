"""``magnetar admin namespaces``' policy verbs against the memory service, and ``topics
compaction-status`` against a scripted service: what is asked before clearing a backlog,
removing a namespace's deduplication, and the compaction status lines."""

from __future__ import annotations

import argparse
import io
import json

import pytest

import magnetar
from magnetar.cli import main as cli
from magnetar.cli.admin.topic_lifecycle import CompactionFailed
from magnetar.cli.admin.topic_lifecycle import run as topic_run

NS = "public/default"


def admin(svc, capsys, *words: str) -> tuple[int, str, str]:
    status = cli.main(["admin", "--service-url", svc.url, *words])
    got = capsys.readouterr()
    return status, got.out, got.err


def backlog(svc, capsys, topic: str) -> int:
    status, out, _ = admin(svc, capsys, "topics", "stats", topic, "-o", "json")
    assert status == 0
    return json.loads(out)["subscriptions"]["s"]["msgBacklog"]


def test_clear_backlog_asks_first_and_an_answer_other_than_yes_clears_nothing(svc, capsys, monkeypatch):  # fmt: skip
    client = magnetar.Client(svc.url)
    try:
        client.subscribe("cli-ns-backlog", "s").close()
        producer = client.create_producer("cli-ns-backlog")
        producer.send(b"1")
        producer.send(b"2")
    finally:
        client.close()
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    status, _, err = admin(svc, capsys, "namespaces", "clear-backlog", NS, "-s", "s")
    assert status == 1 and "Clear the backlog of public/default? (y/n)" in err
    assert "error: not cleared" in err and backlog(svc, capsys, "cli-ns-backlog") == 2
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    assert admin(svc, capsys, "namespaces", "clear-backlog", NS, "-s", "s")[0] == 0
    assert backlog(svc, capsys, "cli-ns-backlog") == 0


def test_remove_deduplication_brings_the_namespace_back_to_the_default_off(svc, capsys):
    assert admin(svc, capsys, "namespaces", "set-deduplication", NS, "--enable") == (0, "", "")
    assert admin(svc, capsys, "namespaces", "get-deduplication", NS) == (0, "true\n", "")
    status, out, _ = admin(svc, capsys, "namespaces", "policies", NS, "-o", "json")
    assert status == 0 and json.loads(out)["deduplicationEnabled"] is True
    assert admin(svc, capsys, "namespaces", "remove-deduplication", NS) == (0, "", "")
    status, out, _ = admin(svc, capsys, "namespaces", "policies", NS, "-o", "json")
    assert status == 0 and json.loads(out)["deduplicationEnabled"] is None
    status, _, err = admin(svc, capsys, "namespaces", "remove-deduplication", "public/nope")
    assert status == 1 and err.startswith("error: NotFound: Namespace does not exist")


def scripted(*answers: dict):
    """A ``call`` answering each GET of the compaction status with the next of ``answers``."""
    calls: list[tuple[str, str]] = []
    left = list(answers)

    def call(method: str, path: str, body=None):
        calls.append((method, path))
        return left.pop(0)

    return call, calls


def status_args(**flags) -> argparse.Namespace:
    return argparse.Namespace(verb="compaction-status", topic="t", wait_complete=False, output="table", **flags)  # fmt: skip


def test_compaction_status_waits_while_it_runs_when_asked_and_prints_pulsar_admins_lines():
    call, calls = scripted({"status": "RUNNING"})
    assert topic_run(status_args(), call) == "Compaction is currently running"
    call, calls = scripted({"status": "RUNNING"}, {"status": "RUNNING"}, {"status": "SUCCESS"})
    slept: list[float] = []
    args = status_args()
    args.wait_complete = True
    assert topic_run(args, call, sleep_s=slept.append) == "Compaction was a success"
    assert len(calls) == 3 and slept == [1.0, 1.0]
    call, _ = scripted({"status": "NOT_RUN"})
    assert topic_run(status_args(), call) == (
        "Compaction has not been run for persistent://public/default/t since broker startup"
    )


def test_compaction_status_of_a_failed_compaction_is_an_error_with_its_reason():
    call, _ = scripted({"status": "ERROR", "lastError": "the job failed: OutOfMemory"})
    with pytest.raises(CompactionFailed, match="Error in compaction: the job failed: OutOfMemory"):
        topic_run(status_args(), call)
