"""``magnetar jobs run <job> [args]``: run a maintenance job now against the local stack.

``magnetar local`` writes where it runs (emulator endpoint, tables, bucket, region) to a
record of its own, ``services/<pid>.json`` in the state folder (``$MAGNETAR_HOME``, else
``.magnetar/`` in the current directory), and removes it on exit. ``magnetar jobs run`` reads it, or takes ``--bucket`` /
``--table-prefix`` / ``--endpoint-url`` itself (any stack, AWS included), and runs the job in
the foreground with the same launcher the local stack uses.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from magnetar.cli.service_url import SERVICES_DIR, AmbiguousService, running_services
from magnetar.cli.service_url import state_dir as client_state_dir
from magnetar_core.settings import Settings
from magnetar_local.launcher import SCRIPTS, LocalJobLauncher, UnknownJob

if TYPE_CHECKING:
    from magnetar_local.stack import LocalStack

USAGE = (
    "usage: magnetar jobs run <compact-segments|expire|compact-topic> [--topic T] [--key value ...]\n"
    "       magnetar jobs list\n"
    "Runs the job against the running `magnetar local` (its state file), or against the stack\n"
    "named by --bucket and --table-prefix (and --endpoint-url) when given."
)


def state_dir(env: Mapping[str, str] | None = None, cwd: Path | None = None) -> Path:
    """``$MAGNETAR_HOME`` or ``<cwd>/.magnetar`` (the folder the CLI looks in too)."""
    return client_state_dir(os.environ if env is None else env, cwd or Path.cwd())


def write_state(stack: LocalStack, folder: Path | None = None, auth: bool = False) -> Path:
    """Record a running LocalStack's endpoint and names as this process's record
    (``services/<pid>.json``: one per running service, so two stacks of one folder never
    overwrite each other); returns the file written."""
    folder = folder or state_dir()
    (folder / SERVICES_DIR).mkdir(parents=True, exist_ok=True)
    path = folder / SERVICES_DIR / f"{os.getpid()}.json"
    state = {
        "pid": os.getpid(),
        "url": stack.url,
        "auth": auth,
        "aws_endpoint_url": stack.aws_endpoint_url,
        "region": stack.region,
        "bucket": stack.name("EntriesBucket"),
        "topics_table": stack.name("TopicsTable"),
        "log_table": stack.name("LogTable"),
        "cursors_table": stack.name("CursorsTable"),
        "data_dir": None if stack.data_dir is None else str(stack.data_dir),
    }
    partial = path.with_suffix(".tmp")
    partial.write_text(json.dumps(state, indent=2) + "\n")
    partial.replace(path)  # a reader never sees half a record
    return path


def remove_state(path: Path) -> None:
    """Remove a record written by this process (another stack's is left alone)."""
    try:
        if json.loads(path.read_text()).get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError):
        pass


def read_state(folder: Path | None = None) -> dict:
    """The record of the one running local stack of ``folder``. Raises FileNotFoundError
    (none runs there) or AmbiguousService (several do)."""
    folder = folder or state_dir()
    services = running_services(folder)
    if not services:
        raise FileNotFoundError(f"no running local stack has a record in {folder / SERVICES_DIR}")
    if len(services) > 1:
        listed = ", ".join(service.describe() for service in services)
        raise AmbiguousService(
            f"{len(services)} local stacks run with records in {folder}: {listed}"
        )
    return json.loads((folder / SERVICES_DIR / f"{services[0].pid}.json").read_text())


def settings_of_state(state: Mapping[str, str]) -> Settings:
    """Engine settings pointing at the local stack described by ``state``."""
    return Settings(
        topics_table=state["topics_table"],
        log_table=state["log_table"],
        cursors_table=state["cursors_table"],
        entries_bucket=state["bucket"],
        endpoint_url=state["aws_endpoint_url"],
        region=state["region"],
        job_log_dir=str(state_dir() / "jobs"),
    )


def _emulator_env(env: dict[str, str]) -> dict[str, str]:
    from magnetar_local.emulator import FAKE_CREDENTIALS

    if not env.get("AWS_ACCESS_KEY_ID"):
        env.update(FAKE_CREDENTIALS)
    return env


def command_for(job: str, rest: Sequence[str], folder: Path | None = None) -> tuple[list, dict]:
    """(command, environment) of a foreground run. Raises UnknownJob, FileNotFoundError,
    AmbiguousService (see read_state)."""
    if job not in SCRIPTS:
        raise UnknownJob(f"unknown job {job!r}: one of {', '.join(sorted(SCRIPTS))}")
    explicit = any(a == "--bucket" or a.startswith("--bucket=") for a in rest)
    if explicit:
        launcher = LocalJobLauncher(Settings("", "", "", ""))
        script = launcher.scripts_dir / SCRIPTS[job]
        return [sys.executable, str(script), "--JOB_NAME", job, *rest], launcher.environment()
    launcher = LocalJobLauncher(settings_of_state(read_state(folder)))
    return [*launcher.command(job, {}), *rest], _emulator_env(launcher.environment())


HELP_FLAGS = ("-h", "--help")


def job_help(job: str, scripts_dir: Path | None = None) -> str:
    """The usage and options of ``job``: its script's docstring, read without importing it
    (no Spark starts). Raises UnknownJob."""
    if job not in SCRIPTS:
        raise UnknownJob(f"unknown job {job!r}: one of {', '.join(sorted(SCRIPTS))}")
    script = Path(scripts_dir or LocalJobLauncher(Settings("", "", "", "")).scripts_dir)
    tree = ast.parse((script / SCRIPTS[job]).read_text())
    doc = ast.get_docstring(tree) or ""
    return (
        f"usage: magnetar jobs run {job} [--topic T] [--key value ...]\n"
        "The local stack's --bucket, tables and --endpoint-url are added for you; the job's\n"
        f"script (spark_glue/{SCRIPTS[job]}) says:\n\n{doc}"
    )


def _print_help(argv: list[str]) -> int:
    """``magnetar jobs ... --help``: the job's help, else the general usage; runs nothing."""
    job = argv[1] if len(argv) > 1 and argv[0] == "run" else None
    if job in SCRIPTS:
        print(job_help(job))
    else:
        print(USAGE)
    return 0


def run(argv: Sequence[str]) -> int:
    """Entry of ``magnetar jobs``; returns the job's exit code (2: usage, 1: no stack).
    ``-h`` / ``--help`` anywhere prints help and runs nothing."""
    argv = list(argv)
    if any(a in HELP_FLAGS for a in argv):
        return _print_help(argv)
    if argv[:1] == ["list"]:
        for job, script in sorted(SCRIPTS.items()):
            print(f"{job:18} spark_glue/{script}")
        return 0
    if len(argv) < 2 or argv[0] != "run" or argv[1].startswith("-"):
        print(USAGE, file=sys.stderr)
        return 2
    job, rest = argv[1], argv[2:]
    try:
        command, env = command_for(job, rest)
    except UnknownJob as exc:
        print(f"magnetar jobs: {exc}", file=sys.stderr)
        return 2
    except AmbiguousService as exc:
        print(f"magnetar jobs: {exc}; pass --bucket, --table-prefix and --endpoint-url of one",
              file=sys.stderr)  # fmt: skip
        return 1
    except FileNotFoundError as exc:
        print(
            f"magnetar jobs: no running local stack ({exc}); start `magnetar local` in this "
            "directory (or set MAGNETAR_HOME), or pass --bucket, --table-prefix and "
            "--endpoint-url",
            file=sys.stderr,
        )
        return 1
    return subprocess.call(command, env=env)
