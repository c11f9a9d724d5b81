"""The local stack's adapter of the JobLauncher port: a maintenance job (spark_glue/) runs
as ``python spark_glue/<script> ...`` in a background subprocess against the settings'
endpoint, tables and bucket (it works from inside the gateway process, which runs the
handlers in-process). The engine loads this module only when ``JOB_LAUNCHER=local``: the
Lambda layer does not ship it.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path

import magnetar_core
from magnetar_core.domain.jobs import UnknownJob, check_job
from magnetar_core.settings import Settings

__all__ = [
    "DEFAULT_SCRIPTS_DIR",
    "SCRIPTS",
    "LocalJobLauncher",
    "UnknownJob",
    "job_argv",
]

SCRIPTS = {
    "compact-segments": "compact_segments.py",
    "expire": "expire.py",
    "compact-topic": "compact_topic.py",
}
"""Job name (every one of ``domain.jobs.JOBS``) -> its script in spark_glue/."""

_CORE_DIR = Path(magnetar_core.__file__).resolve().parents[1]  # layers/core/python
DEFAULT_SCRIPTS_DIR = _CORE_DIR.parent.parent.parent / "spark_glue"
"""spark_glue/ of the checkout the core layer is in."""


def job_argv(settings: Settings, job: str, args: Mapping[str, str]) -> list[str]:
    """The Glue-style arguments of a run on the settings' tables, bucket and endpoint.
    Raises UnknownJob."""
    check_job(job)
    argv = ["--JOB_NAME", job, "--bucket", settings.entries_bucket]
    argv += ["--topics-table", settings.topics_table, "--log-table", settings.log_table]
    argv += ["--cursors-table", settings.cursors_table, "--region", settings.region]
    if settings.endpoint_url:
        argv += ["--endpoint-url", settings.endpoint_url]
    for key, value in args.items():
        argv += [f"--{key.removeprefix('--')}", str(value)]
    return argv


class LocalJobLauncher:
    """Runs ``python spark_glue/<script> ...`` in the background; output to a log file per
    run in ``log_dir``. ``popen`` is injectable for tests."""

    def __init__(
        self,
        settings: Settings,
        scripts_dir: Path | str | None = None,
        log_dir: Path | str | None = None,
        python: str = sys.executable,
        new_id: Callable[[], str] = lambda: uuid.uuid4().hex[:12],
        popen: Callable[..., subprocess.Popen] = subprocess.Popen,
    ) -> None:
        self._settings = settings
        self.scripts_dir = Path(scripts_dir or settings.job_scripts_dir or DEFAULT_SCRIPTS_DIR)
        default_logs = Path(tempfile.gettempdir()) / "magnetar-jobs"
        self.log_dir = Path(log_dir or settings.job_log_dir or default_logs)
        self._python = python
        self._new_id = new_id
        self._popen = popen
        self._runs: dict[str, subprocess.Popen] = {}
        self._lock = threading.Lock()

    def command(self, job: str, args: Mapping[str, str]) -> list[str]:
        """The command line of a run. Raises UnknownJob."""
        check_job(job)
        script = self.scripts_dir / SCRIPTS[job]
        return [self._python, str(script), *job_argv(self._settings, job, args)]

    def environment(self) -> dict[str, str]:
        """This process's environment with spark_glue/ and the core layer importable."""
        env = dict(os.environ)
        paths = [str(self.scripts_dir), str(_CORE_DIR), env.get("PYTHONPATH", "")]
        env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
        env.setdefault("PYSPARK_PYTHON", self._python)
        return env

    def start(self, job: str, args: Mapping[str, str]) -> str:
        """Start ``job`` in the background with ``args`` as ``--key value`` arguments;
        returns the run id ``<job>-<new id>``. Raises UnknownJob, OSError."""
        command = self.command(job, args)
        run_id = f"{job}-{self._new_id()}"
        self.log_dir.mkdir(parents=True, exist_ok=True)
        with open(self.log_path(run_id), "wb") as log:
            process = self._popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self.environment(),
                start_new_session=True,
            )
        with self._lock:
            if not self._runs:
                atexit.register(self.stop_all)  # runs die with the process that started them
            self._runs[run_id] = process
        # Reap the run as soon as it ends, whether or not anyone asks for its status: an
        # unwaited child stays a <defunct> entry of the stack's process until it exits.
        threading.Thread(target=process.wait, name=f"reap-{run_id}", daemon=True).start()
        return run_id

    def stop_all(self, timeout_s: float = 10.0) -> list[str]:
        """Terminate every run still running (its whole process group: Spark's JVM too);
        returns their run ids."""
        stopped = []
        with self._lock:
            runs = list(self._runs.items())
        for run_id, process in runs:
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGTERM)
                stopped.append(run_id)
        for run_id in stopped:
            process = self._runs[run_id]
            try:
                process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
        return stopped

    def log_path(self, run_id: str) -> Path:
        return self.log_dir / f"{run_id}.log"

    def status(self, run_id: str) -> str:
        """``RUNNING``, ``SUCCEEDED``, ``FAILED`` or ``UNKNOWN`` (not started here)."""
        with self._lock:
            process = self._runs.get(run_id)
        if process is None:
            return "UNKNOWN"
        code = process.poll()
        return "RUNNING" if code is None else ("SUCCEEDED" if code == 0 else "FAILED")

    def wait(self, run_id: str, timeout_s: float | None = None) -> int:
        """Wait for a run started here; returns its exit code (raises TimeoutExpired)."""
        with self._lock:
            process = self._runs[run_id]
        return process.wait(timeout=timeout_s)

    def running(self) -> list[str]:
        """Run ids still running."""
        with self._lock:
            runs = list(self._runs.items())
        return [run_id for run_id, p in runs if p.poll() is None]
