"""Which service the ``magnetar`` CLI talks to, and ``magnetar jobs ... --help``."""

from __future__ import annotations

import json
import os
import subprocess
from importlib.metadata import version
from pathlib import Path
from types import SimpleNamespace

import pytest

from magnetar.cli import main as cli
from magnetar.cli.service_url import (
    DEFAULT_SERVICE_URL,
    AmbiguousService,
    auth_token,
    resolve_service_url,
)

LIVE, OTHER, DEAD = 4242, 4343, 4444


def alive(pid: int) -> bool:
    return pid in (LIVE, OTHER)


def write_record(
    folder: Path, url: str, pid: int, auth: bool = False, data_dir: str | None = None
) -> Path:
    """A running service's record, as ``magnetar local`` writes it."""
    (folder / "services").mkdir(parents=True, exist_ok=True)
    path = folder / "services" / f"{pid}.json"
    path.write_text(json.dumps({"pid": pid, "url": url, "auth": auth, "data_dir": data_dir}))
    return path


def test_the_flag_wins_over_the_environment_and_a_running_local_stack(tmp_path):
    write_record(tmp_path / ".magnetar", "http://127.0.0.1:9090", LIVE)
    env = {"MAGNETAR_SERVICE_URL": "http://env:1"}
    found = resolve_service_url("http://flag:2", env, tmp_path, alive)
    assert (found.url, found.source, found.explicit) == ("http://flag:2", "--service-url", True)


def test_the_environment_wins_over_a_running_local_stack(tmp_path):
    write_record(tmp_path / ".magnetar", "http://127.0.0.1:9090", LIVE)
    found = resolve_service_url(None, {"MAGNETAR_SERVICE_URL": "http://env:1"}, tmp_path, alive)
    assert (found.url, found.source) == ("http://env:1", "$MAGNETAR_SERVICE_URL")


def test_a_running_local_stack_of_the_current_directory_is_found_on_any_port(tmp_path):
    record = write_record(tmp_path / ".magnetar", "http://127.0.0.1:9090", LIVE)
    found = resolve_service_url(None, {}, tmp_path, alive)
    assert (found.url, found.explicit) == ("http://127.0.0.1:9090", False)
    assert str(record) in found.source and f"pid {LIVE}" in found.source


def test_a_running_local_stack_of_a_parent_folder_is_found_and_the_nearest_wins(tmp_path):
    write_record(tmp_path / ".magnetar", "http://127.0.0.1:1111", LIVE)
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert resolve_service_url(None, {}, deep, alive).url == "http://127.0.0.1:1111"
    write_record(tmp_path / "a" / ".magnetar", "http://127.0.0.1:2222", OTHER)
    assert resolve_service_url(None, {}, deep, alive).url == "http://127.0.0.1:2222"


def test_two_running_services_in_one_folder_are_not_guessed_between(tmp_path):
    write_record(tmp_path / ".magnetar", "http://127.0.0.1:1111", LIVE)
    write_record(tmp_path / ".magnetar", "http://127.0.0.1:2222", OTHER, auth=True)
    with pytest.raises(AmbiguousService) as refused:
        resolve_service_url(None, {}, tmp_path, alive)
    said = str(refused.value)
    assert "2 local services run here" in said and "--service-url" in said
    assert "http://127.0.0.1:1111" in said and "http://127.0.0.1:2222" in said
    assert "authentication on" in said


def test_stopping_one_of_two_services_leaves_the_other_found(tmp_path):
    """Two `magnetar local` in one folder each have their record: the second's stop removes
    only its own, and the CLI finds the first, never the default."""
    write_record(tmp_path / ".magnetar", "http://127.0.0.1:1111", LIVE)
    second = write_record(tmp_path / ".magnetar", "http://127.0.0.1:2222", OTHER)
    second.unlink()
    assert resolve_service_url(None, {}, tmp_path, alive).url == "http://127.0.0.1:1111"


def test_magnetar_home_names_the_state_folder_instead_of_the_current_directory(tmp_path):
    write_record(tmp_path / "cwd" / ".magnetar", "http://127.0.0.1:1111", LIVE)
    write_record(tmp_path / "home", "http://127.0.0.1:2222", LIVE)
    env = {"MAGNETAR_HOME": str(tmp_path / "home")}
    assert resolve_service_url(None, env, tmp_path / "cwd", alive).url == "http://127.0.0.1:2222"


@pytest.mark.parametrize(
    "content",
    [None, "not json", json.dumps({"url": "http://127.0.0.1:9090"}),
     json.dumps({"pid": DEAD, "url": "http://127.0.0.1:9090"})],
    ids=["no record", "malformed", "no pid", "its process is gone"],
)  # fmt: skip
def test_without_a_live_local_stack_the_default_port_8080_is_used_and_said(tmp_path, content):
    if content is not None:
        (tmp_path / ".magnetar" / "services").mkdir(parents=True)
        (tmp_path / ".magnetar" / "services" / "1.json").write_text(content)
    found = resolve_service_url(None, {}, tmp_path, alive)
    assert (found.url, found.explicit) == (DEFAULT_SERVICE_URL, False)
    assert found.source.startswith("the default: no running `magnetar local` in ")
    assert "parent folders" in found.source


def test_the_record_magnetar_local_writes_is_the_one_the_cli_reads(tmp_path):
    from magnetar_local.jobs import remove_state, write_state

    stack = SimpleNamespace(url="http://127.0.0.1:9191", aws_endpoint_url="http://127.0.0.1:1",
                            region="us-east-1", name=lambda logical: logical.lower(),
                            data_dir=tmp_path / "data")  # fmt: skip
    path = write_state(stack, tmp_path / ".magnetar", auth=True)  # this process's pid: alive
    assert json.loads(path.read_text())["data_dir"] == str(tmp_path / "data")
    found = resolve_service_url(None, {}, tmp_path)
    assert found.url == "http://127.0.0.1:9191" and "authentication on" in found.source
    remove_state(path)
    assert resolve_service_url(None, {}, tmp_path).url == DEFAULT_SERVICE_URL


def test_a_url_the_cli_found_is_said_on_stderr_and_a_given_one_is_not(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MAGNETAR_SERVICE_URL", raising=False)
    monkeypatch.delenv("MAGNETAR_HOME", raising=False)
    assert cli.main(["produce", "t", "-m", "x", "--service-url", "http://127.0.0.1:9"]) == 1
    assert "magnetar: using" not in capsys.readouterr().err
    assert cli.main(["admin", "tenants", "list"]) == 1  # nothing answers at the default
    err = capsys.readouterr().err
    assert f"magnetar: using {DEFAULT_SERVICE_URL}: the default: no running `magnetar local`" in err


def test_the_cli_refuses_to_guess_between_two_services(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MAGNETAR_SERVICE_URL", raising=False)
    monkeypatch.delenv("MAGNETAR_HOME", raising=False)
    write_record(tmp_path / ".magnetar", "http://127.0.0.1:1111", os.getpid())
    write_record(tmp_path / ".magnetar", "http://127.0.0.1:2222", os.getppid())
    assert cli.main(["produce", "t", "-m", "x"]) == 2
    assert cli.main(["admin", "tenants", "list"]) == 2
    assert capsys.readouterr().err.count("2 local services run here") == 2


def test_status_lists_the_running_services_and_says_when_there_is_none(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MAGNETAR_HOME", raising=False)
    assert cli.main(["status"]) == 0
    assert "no running `magnetar local` in" in capsys.readouterr().out
    data = str(tmp_path / ".magnetar" / "data")
    write_record(tmp_path / ".magnetar", "http://127.0.0.1:1111", os.getpid(), True, data)
    assert cli.main(["status"]) == 0
    out = capsys.readouterr().out
    assert f"http://127.0.0.1:1111  pid {os.getpid()}  authentication on  data {data}" in out
    write_record(tmp_path / ".magnetar", "http://127.0.0.1:1111", os.getpid(), auth=False)
    assert cli.main(["status"]) == 0
    assert "authentication off  data in memory" in capsys.readouterr().out


def test_stop_with_nothing_running_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MAGNETAR_HOME", raising=False)
    assert cli.main(["stop"]) == 1
    assert "no running `magnetar local` to stop here" in capsys.readouterr().err


def test_version_prints_the_clients_version(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"magnetar {version('magnetar-client')}"


def test_admin_takes_the_service_url_after_the_verb_too():
    from magnetar.cli.admin.command import hoist_global_options

    argv = ["tenants", "list", "--service-url", "http://x:1", "--auth-params=token:t"]
    assert hoist_global_options(argv) == [
        "--service-url", "http://x:1", "--auth-params=token:t", "tenants", "list"]  # fmt: skip


def test_an_absolute_token_path_is_read_as_a_token_file(tmp_path):
    token = tmp_path / "admin.token"
    token.write_text("secret\n")
    service = resolve_service_url("http://127.0.0.1:9")
    assert auth_token(str(token), service, {}) == token.as_uri()
    assert auth_token("/no/such/file", service, {}) == "/no/such/file"


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
