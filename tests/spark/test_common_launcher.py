"""The JobLauncher port's adapters: the local stack's subprocess launcher
(magnetar_local.launcher), the Glue one (magnetar_core.adapters.aws.glue), and the engine's
choice between them by settings."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from magnetar_core.adapters.aws.glue import GlueJobLauncher
from magnetar_core.domain.jobs import JOBS
from magnetar_core.engine import launcher_from_settings
from magnetar_core.settings import Settings
from magnetar_local.launcher import (
    DEFAULT_SCRIPTS_DIR,
    SCRIPTS,
    LocalJobLauncher,
    UnknownJob,
    job_argv,
)

SETTINGS = Settings(
    topics_table="m-topics",
    log_table="m-log",
    cursors_table="m-cursors",
    entries_bucket="m-bucket",
    endpoint_url="http://127.0.0.1:4566",
    region="eu-west-1",
)


def test_a_runs_arguments_name_the_settings_tables_bucket_endpoint_and_the_extra_args():
    assert job_argv(SETTINGS, "compact-topic", {"topic": "persistent://a/b/c"}) == [
        "--JOB_NAME", "compact-topic",
        "--bucket", "m-bucket",
        "--topics-table", "m-topics",
        "--log-table", "m-log",
        "--cursors-table", "m-cursors",
        "--region", "eu-west-1",
        "--endpoint-url", "http://127.0.0.1:4566",
        "--topic", "persistent://a/b/c",
    ]  # fmt: skip


def test_an_unknown_job_is_refused_by_name():
    with pytest.raises(UnknownJob, match="unknown job 'vacuum': one of compact-segments, "):
        LocalJobLauncher(SETTINGS).command("vacuum", {})
    with pytest.raises(UnknownJob, match="unknown job 'vacuum': one of compact-segments, "):
        GlueJobLauncher(FakeGlue(), "magnetar").start("vacuum", {})


def test_every_job_has_a_script_in_the_checkouts_spark_glue_folder():
    assert sorted(SCRIPTS) == sorted(JOBS)
    assert DEFAULT_SCRIPTS_DIR.name == "spark_glue"
    assert all((DEFAULT_SCRIPTS_DIR / script).is_file() for script in SCRIPTS.values())


def test_the_local_launcher_runs_the_script_in_the_background_and_logs_its_output(tmp_path):
    scripts = tmp_path / "spark_glue"
    scripts.mkdir()
    (scripts / "expire.py").write_text(
        "import sys, magnetar_core\nprint('args', sys.argv[1:])\nsys.exit(3)\n"
    )
    launcher = LocalJobLauncher(
        SETTINGS, scripts_dir=scripts, log_dir=tmp_path / "logs", new_id=lambda: "r1"
    )
    run_id = launcher.start("expire", {"orphan-age-ms": "5"})

    assert run_id == "expire-r1"
    assert launcher.wait(run_id, timeout_s=60) == 3
    assert launcher.status(run_id) == "FAILED"
    assert launcher.status("other") == "UNKNOWN"
    assert launcher.log_path(run_id).read_text().splitlines() == [
        "args " + repr(job_argv(SETTINGS, "expire", {"orphan-age-ms": "5"}))
    ]
    assert launcher.command("expire", {})[:2] == [sys.executable, str(scripts / "expire.py")]


class FakeGlue:
    def __init__(self) -> None:
        self.calls: list[dict] = []

    def start_job_run(self, **kwargs) -> dict:
        self.calls.append(kwargs)
        return {"JobRunId": "jr_42"}


def test_the_glue_launcher_starts_the_stacks_glue_job_with_dashed_arguments():
    glue = FakeGlue()
    launcher = GlueJobLauncher(glue, "magnetar")
    assert launcher.start("compact-topic", {"topic": "t", "--grace-ms": "0"}) == "jr_42"
    assert glue.calls == [
        {
            "JobName": "magnetar-compact-topic",
            "Arguments": {"--topic": "t", "--grace-ms": "0"},
        }
    ]


def test_settings_choose_the_launcher():
    env = {
        "TOPICS_TABLE": "t",
        "LOG_TABLE": "l",
        "CURSORS_TABLE": "c",
        "ENTRIES_BUCKET": "b",
        "JOB_LAUNCHER": "glue",
        "GLUE_JOB_PREFIX": "prod",
    }
    glue = FakeGlue()
    launcher = launcher_from_settings(Settings.from_env(env), glue=glue)
    assert isinstance(launcher, GlueJobLauncher)
    assert launcher.job_name("expire") == "prod-expire"
    local = launcher_from_settings(Settings.from_env({**env, "JOB_LAUNCHER": "local"}))
    assert isinstance(local, LocalJobLauncher)
    with pytest.raises(ValueError, match="JOB_LAUNCHER must be local or glue, not 'k8s'"):
        launcher_from_settings(Settings.from_env({**env, "JOB_LAUNCHER": "k8s"}))


def test_stop_all_terminates_the_runs_still_running(tmp_path):
    scripts = tmp_path / "spark_glue"
    scripts.mkdir()
    (scripts / "compact_segments.py").write_text("import time\ntime.sleep(60)\n")
    (scripts / "expire.py").write_text("pass\n")
    ids = iter(["slow", "quick"])
    launcher = LocalJobLauncher(
        SETTINGS, scripts_dir=scripts, log_dir=tmp_path, new_id=lambda: next(ids)
    )
    slow = launcher.start("compact-segments", {})
    quick = launcher.start("expire", {})
    assert launcher.wait(quick, timeout_s=60) == 0

    assert launcher.stop_all(timeout_s=30) == [slow]
    assert launcher.status(slow) == "FAILED"
    assert launcher.running() == []


def test_a_finished_run_is_reaped_without_anyone_asking_for_its_status(tmp_path):
    """An admin-triggered compaction is started and never waited for: its process must not
    stay a <defunct> child of the local stack."""
    scripts = tmp_path / "spark_glue"
    scripts.mkdir()
    (scripts / "compact_topic.py").write_text("pass\n")
    launcher = LocalJobLauncher(SETTINGS, scripts_dir=scripts, log_dir=tmp_path)
    run_id = launcher.start("compact-topic", {"topic": "persistent://a/b/c"})
    process = launcher._runs[run_id]

    deadline = time.monotonic() + 60
    while process.returncode is None and time.monotonic() < deadline:
        time.sleep(0.05)  # polls an attribute only: poll() or wait() would reap it here
    assert process.returncode == 0
    assert not Path(f"/proc/{process.pid}").exists()
