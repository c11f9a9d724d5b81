"""The local stack's job ticker and the `magnetar jobs` command's argument handling."""

from __future__ import annotations

import json
import os

import pytest

from magnetar_local import jobs
from magnetar_local.template import LocalTemplate
from magnetar_local.ticker import Schedule, Ticker, rate_seconds, schedules_from_template


def test_rate_expressions_become_seconds_and_cron_is_refused():
    assert rate_seconds("rate(15 minutes)") == 900
    assert rate_seconds("rate(1 hour)") == 3600
    assert rate_seconds("rate(2 days)") == 172_800
    with pytest.raises(ValueError, match="only rate"):
        rate_seconds("cron(0 * * * ? *)")


def test_the_ticker_runs_the_templates_schedules():
    assert schedules_from_template(LocalTemplate()) == [
        Schedule("compact-segments", 3600),
        Schedule("expire", 900),
    ]


class FakeLauncher:
    def __init__(self) -> None:
        self.started: list[str] = []
        self.states: dict[str, str] = {}

    def start(self, job: str, args) -> str:
        run_id = f"{job}-{len(self.started)}"
        self.started.append(run_id)
        self.states[run_id] = "RUNNING"
        return run_id

    def status(self, run_id: str) -> str:
        return self.states[run_id]


def test_a_job_starts_once_per_period_and_not_while_its_previous_run_is_running():
    launcher = FakeLauncher()
    ticker = Ticker(launcher, [Schedule("expire", 10), Schedule("compact-segments", 25)])
    assert ticker.tick(now=0) == []  # first runs one period after the start
    assert ticker.tick(now=9.9) == []
    assert ticker.tick(now=10) == ["expire-0"]
    assert ticker.tick(now=20) == []  # expire-0 still running: skipped
    launcher.states["expire-0"] = "SUCCEEDED"
    assert ticker.tick(now=25) == ["compact-segments-1"]
    assert ticker.tick(now=30) == ["expire-2"]


def test_jobs_list_names_every_job(capsys):
    assert jobs.run(["list"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "compact-segments   spark_glue/compact_segments.py",
        "compact-topic      spark_glue/compact_topic.py",
        "expire             spark_glue/expire.py",
    ]


def test_jobs_run_without_a_job_prints_the_usage(capsys):
    assert jobs.run(["run"]) == 2
    assert capsys.readouterr().err.startswith("usage: magnetar jobs run")


def test_jobs_run_of_an_unknown_job_names_the_known_ones(capsys):
    assert jobs.run(["run", "vacuum"]) == 2
    assert "unknown job 'vacuum': one of compact-segments, compact-topic, expire" in (
        capsys.readouterr().err
    )


def test_jobs_run_without_a_running_local_stack_says_how_to_start_one(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("MAGNETAR_HOME", str(tmp_path))
    assert jobs.run(["run", "expire"]) == 1
    assert "no running local stack" in capsys.readouterr().err
    (tmp_path / "services").mkdir()
    dead = {"pid": 2**22 + 12345, "url": "http://127.0.0.1:1"}
    (tmp_path / "services" / "dead.json").write_text(json.dumps(dead))
    assert jobs.run(["run", "expire"]) == 1  # its stack has exited
    assert "no running local stack" in capsys.readouterr().err


def test_jobs_run_uses_the_state_file_of_the_running_stack(tmp_path, monkeypatch):
    monkeypatch.setenv("MAGNETAR_HOME", str(tmp_path))
    state = {
        "pid": os.getpid(),
        "url": "http://127.0.0.1:8080",
        "aws_endpoint_url": "http://127.0.0.1:5555",
        "region": "us-east-1",
        "bucket": "b",
        "topics_table": "t",
        "log_table": "l",
        "cursors_table": "c",
    }
    (tmp_path / "services").mkdir()
    (tmp_path / "services" / f"{os.getpid()}.json").write_text(json.dumps(state))
    command, env = jobs.command_for("compact-segments", ["--topic", "x"])
    assert command[1].endswith("spark_glue/compact_segments.py")
    assert command[2:] == [
        "--JOB_NAME", "compact-segments", "--bucket", "b", "--topics-table", "t",
        "--log-table", "l", "--cursors-table", "c", "--region", "us-east-1",
        "--endpoint-url", "http://127.0.0.1:5555", "--topic", "x",
    ]  # fmt: skip
    assert env["PYTHONPATH"].split(os.pathsep)[0].endswith("spark_glue")


def test_jobs_run_with_explicit_names_needs_no_state_file(tmp_path, monkeypatch):
    monkeypatch.setenv("MAGNETAR_HOME", str(tmp_path))
    command, _ = jobs.command_for("expire", ["--bucket", "b", "--table-prefix", "p"])
    assert command[2:] == ["--JOB_NAME", "expire", "--bucket", "b", "--table-prefix", "p"]
