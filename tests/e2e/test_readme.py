"""Every code block of README.md runs as written, each on its own, against the local stack.

A newcomer copies each fenced ``python`` or ``bash`` block into a file of its own and runs
it (``.venv/bin/python tour.py``, ``bash tour.sh``) from the repository root while ``make
run`` serves. These tests do the same: each block is written to a file and run in a
subprocess, from the repository root, with the venv's ``bin`` first on the PATH; the
README's ``http://127.0.0.1:8080`` is replaced by the test stack's URL (the README stays
literal), and ``MAGNETAR_HOME`` names a folder with the stack's record, so the CLI and
``magnetar jobs`` find the stack as they find ``make run``'s.

The rule for which blocks run, written in the README as an HTML comment on the line before
the block:

- ``<!-- not run: <reason> -->``: not run (set-up, installs, deploying to AWS);
- ``<!-- runs Spark -->``: starts a Spark job (a JVM, 15-30 s each): run by the ``spark``
  test, on a service of its own (``magnetar local`` in a subprocess: the jobs sweep the whole
  stack, which must not be the worker's shared one);
- ``<!-- runs with --auth -->``: Secure it's blocks, run by
  ``test_every_secured_readme_block_runs_twice_against_a_service_with_authentication_on``
  from a folder laid out as the repository root is while ``magnetar local --auth`` serves
  (``.venv``, ``.magnetar/services/<pid>.json``, ``local.token``, ``secret.key``);
- no comment: run by ``test_every_readme_block_runs_alone_in_order``.

Every run block must exit with status 0. Independence: every block runs in a process of its
own, in README order, on one stack; the python blocks then run once more in reverse order
(each after later blocks, and re-run), which a block that leans on an earlier one, or that
cannot run twice, fails.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
README_URL = "http://127.0.0.1:8080"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
MARK = re.compile(r"<!--\s*(not run|runs Spark|runs with --auth)(.*?)-->")
BLOCK_TIMEOUT_S = 180


@dataclass(frozen=True)
class Block:
    """A fenced block of README.md: its language, text, 1-based first line and marker
    (``not run``, ``runs Spark``, ``runs with --auth`` or None)."""

    language: str
    text: str
    line: int
    mark: str | None

    @property
    def name(self) -> str:
        return f"README.md:{self.line} ({self.language})"


def readme_blocks(text: str) -> list[Block]:
    """The fenced blocks of a markdown text with the marker comment on the line before each
    (blank lines between them allowed)."""
    blocks = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mark = MARK.search(before)
        line = text.count("\n", 0, match.start()) + 1
        blocks.append(Block(match.group(1), match.group(2), line, mark and mark.group(1)))
    return blocks


def runnable(blocks: list[Block], mark: str | None) -> list[Block]:
    """The python and bash blocks carrying ``mark``."""
    return [b for b in blocks if b.language in ("python", "bash") and b.mark == mark]


def run_block(block: Block, folder: Path, url: str, env: dict[str, str], cwd: Path = ROOT) -> str:
    """Write ``block`` to a file in ``folder`` (the README's URL replaced by ``url``) and run
    it from ``cwd`` (the repository root); returns its stdout. Fails the test on a non-zero
    status."""
    suffix = ".py" if block.language == "python" else ".sh"
    path = folder / f"block_{block.line}{suffix}"
    path.write_text(block.text.replace(README_URL, url))
    command = [sys.executable, str(path)] if suffix == ".py" else ["bash", "-e", str(path)]
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=BLOCK_TIMEOUT_S)  # fmt: skip
    assert done.returncode == 0, (
        f"{block.name} exited {done.returncode}\n--- stdout\n{done.stdout}\n"
        f"--- stderr\n{done.stderr}"
    )
    return done.stdout


@pytest.fixture
def newcomer_env(local_stack, tmp_path) -> dict[str, str]:
    """The environment of a newcomer's terminal next to ``make run``: the venv's bin first on
    the PATH, the stack's record in ``MAGNETAR_HOME``, no MAGNETAR_SERVICE_URL."""
    from magnetar_local.jobs import write_state

    home = tmp_path / "magnetar-home"
    write_state(local_stack, home)  # as `magnetar local` does, with this process's pid
    env = {k: v for k, v in os.environ.items() if k != "MAGNETAR_SERVICE_URL"}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["MAGNETAR_HOME"] = str(home)
    return env


def test_the_readme_marks_only_setup_installs_deploys_and_the_auth_service_as_not_run():
    blocks = readme_blocks(README.read_text())
    skipped = [b.text.split("\n", 1)[0] for b in runnable(blocks, "not run")]
    assert skipped == [
        "make run    # installs into .venv, starts the service on an embedded AWS emulator at http://127.0.0.1:8080",
        "pip install ./sdk",
        ".venv/bin/magnetar local --auth                  # prints the superuser's token; serves at http://127.0.0.1:8080",
        "# authentication is on by default: the authorizer reads the token key from SSM",
    ]  # fmt: skip
    assert len(runnable(blocks, None)) >= 9 and len(runnable(blocks, "runs Spark")) >= 2
    assert len(runnable(blocks, "runs with --auth")) == 3


@pytest.mark.slow
def test_every_readme_block_runs_alone_in_order(local_stack, newcomer_env, tmp_path):
    blocks = runnable(readme_blocks(README.read_text()), None)
    outputs = [run_block(b, tmp_path, local_stack.url, newcomer_env) for b in blocks]
    tour = outputs[0].splitlines()
    assert len(tour) == 10 and all("b'order-" in line for line in tour), outputs[0]
    cli = next(o for b, o in zip(blocks, outputs, strict=True) if "magnetar consume" in b.text)
    assert "3 messages successfully produced" in cli
    assert "3 messages successfully consumed" in cli
    python = [b for b in blocks if b.language == "python"]
    for block in reversed(python):  # after the later ones, and a second time
        run_block(block, tmp_path, local_stack.url, newcomer_env)


@pytest.fixture
def fresh_service(tmp_path):
    """``magnetar local --port 0`` in a subprocess, as ``make run`` starts it, with its state
    in ``MAGNETAR_HOME``; yields that environment (with the URL in its record,
    ``services/<pid>.json``, as the CLI finds it) once the service answers. The tests' cheaper JVM options and Spark settings go to every Spark job
    (``PYSPARK_SUBMIT_ARGS``): ``magnetar jobs run``'s and the ones the service launches."""
    from magnetar_local.testing import spark_submit_args_for_tests

    home = tmp_path / "magnetar-home"
    env = {k: v for k, v in os.environ.items() if k != "MAGNETAR_SERVICE_URL"}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["MAGNETAR_HOME"] = str(home)
    env["PYSPARK_SUBMIT_ARGS"] = spark_submit_args_for_tests()
    command = [sys.executable, "-m", "magnetar.cli.main", "local", "--port", "0"]
    service = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not (home / "services" / f"{service.pid}.json").exists():
            assert service.poll() is None, f"magnetar local exited {service.returncode}"
            assert time.monotonic() < deadline, "magnetar local did not start in 120 s"
            time.sleep(0.1)
        yield env
    finally:
        service.terminate()  # SIGTERM: a clean stop that removes its record
        service.wait(60)


@pytest.mark.spark
@pytest.mark.slow
def test_every_readme_block_that_runs_spark_runs_alone_on_a_fresh_service(fresh_service, tmp_path):
    records = (Path(fresh_service["MAGNETAR_HOME"]) / "services").glob("*.json")
    url = json.loads(next(records).read_text())["url"]
    blocks = runnable(readme_blocks(README.read_text()), "runs Spark")
    outputs = [run_block(b, tmp_path, url, fresh_service) for b in blocks]
    jobs = next(o for b, o in zip(blocks, outputs, strict=True) if "jobs run expire" in b.text)
    expire, segments = [json.loads(line.split(" ", 1)[1]) for line in jobs.splitlines()
                        if line.startswith("SUMMARY_JSON ")]  # fmt: skip
    assert expire["job"] == "expire" and segments["job"] == "compact-segments"
    assert segments["entries_compacted"] >= 3, jobs  # --min-tail-bytes 0 acts on three entries
    compaction = next(o for b, o in zip(blocks, outputs, strict=True) if "compaction" in b.text)
    assert '"SUCCESS"' in compaction, compaction


@pytest.fixture
def secured_root(secured_gateway, tmp_path) -> Path:
    """A folder as the repository root is while ``magnetar local --auth`` serves there:
    ``.venv`` (this one), ``.magnetar/services/<pid>.json`` naming the secured gateway (with this
    process's pid, as a live service), the superuser's ``local.token`` and the
    ``secret.key`` the gateway verifies tokens with."""
    root = tmp_path / "repo"
    state = root / ".magnetar"
    state.mkdir(parents=True)
    (root / ".venv").symlink_to(Path(sys.executable).parents[1])
    local = {"pid": os.getpid(), "url": secured_gateway.url, "auth": True}
    (state / "services").mkdir()
    (state / "services" / f"{os.getpid()}.json").write_text(json.dumps(local))
    (state / "local.token").write_text(secured_gateway.token(secured_gateway.superuser))
    (state / "secret.key").write_bytes(secured_gateway.secret_key)
    return root


@pytest.mark.slow
def test_every_secured_readme_block_runs_twice_against_a_service_with_authentication_on(
    secured_gateway, secured_root, tmp_path
):
    blocks = runnable(readme_blocks(README.read_text()), "runs with --auth")
    hidden = ("MAGNETAR_SERVICE_URL", "MAGNETAR_HOME", "MAGNETAR_AUTH_TOKEN")
    env = {k: v for k, v in os.environ.items() if k not in hidden}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    for _ in range(2):  # each block again after the others: a newcomer may rerun them
        curl, admin, sdk = [
            run_block(b, tmp_path, secured_gateway.url, env, cwd=secured_root) for b in blocks
        ]
        anonymous, superuser = curl.splitlines()
        assert json.loads(anonymous)["error"] == "AuthenticationError"
        assert "public" in json.loads(superuser)
        assert "content:invoice 1" in admin, admin
        assert re.search(r"^billing +consume$", admin, re.M), admin  # the permissions table
        assert "1 messages successfully consumed" in admin, admin
        assert sdk.startswith("refused:"), sdk
    assert not (secured_root / "billing.token").exists()
