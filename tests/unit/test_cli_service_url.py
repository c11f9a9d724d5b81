"""Which service the ``magnetar`` CLI talks to, and ``magnetar jobs ... --help``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from magnetar import cli
from magnetar._service_url import DEFAULT_SERVICE_URL, resolve_service_url

LIVE, DEAD = 4242, 4343


def alive(pid: int) -> bool:
    return pid == LIVE


def write_local_json(folder: Path, url: str, pid: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "local.json").write_text(json.dumps({"pid": pid, "url": url}))


def test_the_flag_wins_over_the_environment_and_a_running_local_stack(tmp_path):
    write_local_json(tmp_path / ".magnetar", "http://127.0.0.1:9090", LIVE)
    env = {"MAGNETAR_SERVICE_URL": "http://env:1"}
    found = resolve_service_url("http://flag:2", env, tmp_path, alive)
    assert (found.url, found.source) == ("http://flag:2", "--service-url")


def test_the_environment_wins_over_a_running_local_stack(tmp_path):
    write_local_json(tmp_path / ".magnetar", "http://127.0.0.1:9090", LIVE)
    found = resolve_service_url(None, {"MAGNETAR_SERVICE_URL": "http://env:1"}, tmp_path, alive)
    assert (found.url, found.source) == ("http://env:1", "$MAGNETAR_SERVICE_URL")


def test_a_running_local_stack_of_the_current_directory_is_found_on_any_port(tmp_path):
    write_local_json(tmp_path / ".magnetar", "http://127.0.0.1:9090", LIVE)
    found = resolve_service_url(None, {}, tmp_path, alive)
    assert found.url == "http://127.0.0.1:9090"
    assert str(tmp_path / ".magnetar" / "local.json") in found.source


def test_magnetar_home_names_the_state_folder_instead_of_the_current_directory(tmp_path):
    write_local_json(tmp_path / "cwd" / ".magnetar", "http://127.0.0.1:1111", LIVE)
    write_local_json(tmp_path / "home", "http://127.0.0.1:2222", LIVE)
    env = {"MAGNETAR_HOME": str(tmp_path / "home")}
    assert resolve_service_url(None, env, tmp_path / "cwd", alive).url == "http://127.0.0.1:2222"


@pytest.mark.parametrize(
    "content",
    [None, "not json", json.dumps({"url": "http://127.0.0.1:9090"}),
     json.dumps({"pid": DEAD, "url": "http://127.0.0.1:9090"})],
    ids=["no file", "malformed", "no pid", "its process is gone"],
)  # fmt: skip
def test_without_a_live_local_stack_the_default_port_8080_is_used(tmp_path, content):
    if content is not None:
        (tmp_path / ".magnetar").mkdir()
        (tmp_path / ".magnetar" / "local.json").write_text(content)
    found = resolve_service_url(None, {}, tmp_path, alive)
    assert (found.url, found.source) == (DEFAULT_SERVICE_URL, "the default")


def test_the_state_file_magnetar_local_writes_is_the_one_the_cli_reads(tmp_path):
    from magnetar_local.jobs import write_state

    stack = SimpleNamespace(url="http://127.0.0.1:9191", aws_endpoint_url="http://127.0.0.1:1",
                            region="us-east-1", name=lambda logical: logical.lower())  # fmt: skip
    write_state(stack, tmp_path / ".magnetar")  # this process's pid: alive
    assert resolve_service_url(None, {}, tmp_path).url == "http://127.0.0.1:9191"


def test_produce_with_nothing_answering_says_where_it_looked_and_what_to_do(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MAGNETAR_SERVICE_URL", "http://127.0.0.1:9")
    assert cli.main(["produce", "t", "-m", "x"]) == 1
    err = capsys.readouterr().err
    assert "ConnectError" in err
    assert "No Magnetar service answers at http://127.0.0.1:9 (from $MAGNETAR_SERVICE_URL)" in err
    assert "`make run`" in err and "--service-url" in err


@pytest.mark.parametrize(
    "argv",
    [["run", "expire", "--help"], ["run", "compact-segments", "-h"],
     ["run", "compact-topic", "--topic", "t", "--help"], ["--help"], ["run", "--help"],
     ["run", "vacuum", "--help"]],
)  # fmt: skip
def test_jobs_help_prints_help_and_runs_nothing(argv, monkeypatch, capsys):
    from magnetar_local import jobs

    def no_run(*args, **kwargs):
        raise AssertionError(f"ran {args}")

    monkeypatch.setattr(subprocess, "call", no_run)
    monkeypatch.setattr(jobs, "command_for", no_run)
    assert cli.main(["jobs", *argv]) == 0
    out = capsys.readouterr().out
    assert "usage: magnetar jobs run" in out
    job = argv[1] if len(argv) > 2 and argv[1] in jobs.SCRIPTS else None
    if job:
        assert f"spark_glue/{jobs.SCRIPTS[job]}" in out and "--topic" in out


def test_compact_segments_help_lists_its_min_tail_bytes_option(capsys):
    assert cli.main(["jobs", "run", "compact-segments", "--help"]) == 0
    assert "--min-tail-bytes" in capsys.readouterr().out
