"""Every code block of README.md and of the user guide (docs/guide/), and every program in
examples/, runs as written against the local stack, each on its own, twice.

A newcomer copies each fenced ``python`` or ``bash`` block into a file of its own and runs
it (``.venv/bin/python tour.py``, ``bash tour.sh``) from the repository root while ``make
run`` serves. These tests do the same: each block is written to a file and run in a
subprocess, from the repository root, with the venv's ``bin`` first on the PATH; the
pages' ``http://127.0.0.1:8080`` is replaced by the test stack's URL (the pages stay
literal), and ``MAGNETAR_HOME`` names a folder with the stack's record, so the CLI and
``magnetar jobs`` find the stack as they find ``make run``'s.

The rule for which blocks run, written as an HTML comment on the line before the block:

- ``<!-- not run: <reason> -->``: not run (set-up, installs, deploying to AWS);
- ``<!-- runs Spark -->``: starts a Spark job (a JVM, 15-30 s each): run by the ``spark``
  test, on a service of its own (``magnetar local`` in a subprocess: the jobs sweep the whole
  stack, which must not be the worker's shared one);
- ``<!-- runs with --auth -->``: the blocks of "Securing a service", run by
  ``test_every_secured_block_runs_twice_against_a_service_with_authentication_on``
  from a folder laid out as the repository root is while ``magnetar local --auth`` serves
  (``.venv``, ``.magnetar/services/<pid>.json``, ``local.token``, ``secret.key``);
- no comment: run by ``test_every_page_block_runs_twice_in_order_with_the_same_output``.

Every run block and example must exit with status 0, and print the same the second time as
the first (each has topics of its own and acknowledges what it receives), but for what names
one run (``same_run``: message ids, times, random ids). Examples read
``MAGNETAR_SERVICE_URL``; they run side by side on the worker's one stack, each twice in a
row.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs" / "guide").glob("*.md"))]
EXAMPLES = sorted(p for p in (ROOT / "examples").iterdir() if p.suffix in (".py", ".sh"))
README_URL = "http://127.0.0.1:8080"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
MARK = re.compile(r"<!--\s*(not run|runs Spark|runs with --auth)(.*?)-->")
BLOCK_TIMEOUT_S = 180
# a Spark block starts up to two JVM jobs (15-30 s each on an idle machine); the three took
# 97 s together at load 15-18, and the first alone passed 180 s in a full run at load ~20
# beside the spark lane's own JVMs
SPARK_BLOCK_TIMEOUT_S = 600


@dataclass(frozen=True)
class Block:
    """A fenced block of README.md: its language, text, 1-based first line and marker
    (``not run``, ``runs Spark``, ``runs with --auth`` or None)."""

    language: str
    text: str
    line: int
    mark: str | None
    page: str = "README.md"

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line} ({self.language})"


def readme_blocks(text: str, page: str = "README.md") -> list[Block]:
    """The fenced blocks of a markdown text with the marker comment on the line before each
    (blank lines between them allowed)."""
    blocks = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mark = MARK.search(before)
        line = text.count("\n", 0, match.start()) + 1
        blocks.append(Block(match.group(1), match.group(2), line, mark and mark.group(1), page))
    return blocks


def page_blocks() -> list[Block]:
    """The blocks of README.md, then of each user guide page."""
    return [b for page in PAGES for b in readme_blocks(page.read_text(), page.name)]


SAME_RUN = [
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?Z?"), "<time>"),
    (re.compile(r"\b\d+:\d+(:-?\d+:-?\d+)?\b"), "<message id>"),
    (re.compile(r"\b1\d{12}\b"), "<epoch ms>"),
    (re.compile(r"\b[0-9a-f]{12,}\b"), "<random id>"),
    (re.compile(r'"(ledgerId|entryId)": \d+'), r'"\1": <position>'),
]


def same_run(output: str) -> str:
    """``output`` with what names one run masked: times, message ids and positions, random
    ids."""
    for pattern, mask in SAME_RUN:
        output = pattern.sub(mask, output)
    return output


def runnable(blocks: list[Block], mark: str | None) -> list[Block]:
    """The python and bash blocks carrying ``mark``."""
    return [b for b in blocks if b.language in ("python", "bash") and b.mark == mark]


def run_block(block: Block, folder: Path, url: str, env: dict[str, str], cwd: Path = ROOT) -> str:
    """Write ``block`` to a file in ``folder`` (the README's URL replaced by ``url``) and run
    it from ``cwd`` (the repository root); returns its stdout. Fails the test on a non-zero
    status."""
    suffix = ".py" if block.language == "python" else ".sh"
    path = folder / f"{Path(block.page).stem}_{block.line}{suffix}"
    path.write_text(block.text.replace(README_URL, url))
    timeout_s = SPARK_BLOCK_TIMEOUT_S if block.mark == "runs Spark" else BLOCK_TIMEOUT_S
    return run_file(path, block.name, env, cwd, timeout_s)


def run_file(
    path: Path, name: str, env: dict[str, str], cwd: Path = ROOT, timeout_s: int = BLOCK_TIMEOUT_S
) -> str:
    """Run a python or bash file from ``cwd`` (killed after ``timeout_s``); returns its
    stdout. Fails the test on a non-zero status."""
    command = [sys.executable, str(path)] if path.suffix == ".py" else ["bash", "-e", str(path)]
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout_s)  # fmt: skip
    assert done.returncode == 0, (
        f"{name} exited {done.returncode}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
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


def test_the_pages_mark_only_setup_installs_deploys_and_the_auth_service_as_not_run():
    blocks = page_blocks()
    skipped = [b.text.split("\n", 1)[0] for b in runnable(blocks, "not run")]
    assert skipped == [
        "make run    # installs into .venv, starts the service on an embedded AWS emulator at http://127.0.0.1:8080",
        "pip install ./sdk",
        ".venv/bin/magnetar local --auth                  # prints the superuser's token; serves at http://127.0.0.1:8080",
    ]  # fmt: skip
    assert len(runnable(blocks, None)) >= 5 and len(runnable(blocks, "runs Spark")) >= 2
    assert len(runnable(blocks, "runs with --auth")) == 3


@pytest.mark.slow
def test_every_page_block_runs_twice_in_order_with_the_same_output(
    local_stack, newcomer_env, tmp_path
):
    blocks = runnable(page_blocks(), None)
    first = [run_block(b, tmp_path, local_stack.url, newcomer_env) for b in blocks]
    again = [run_block(b, tmp_path, local_stack.url, newcomer_env) for b in blocks]
    for block, one, two in zip(blocks, first, again, strict=True):
        assert one.strip(), f"{block.name} printed nothing"
        assert same_run(one) == same_run(two), f"{block.name}\n--- first\n{one}\n--- again\n{two}"
    out = dict(zip((b.text for b in blocks), first, strict=True))
    tour = next(o for text, o in out.items() if "tour-orders" in text).splitlines()
    assert len(tour) == 6 and tour[-1] == "b'order-3' customer-1 redelivered: 1", tour
    cli = next(o for text, o in out.items() if "magnetar consume tour-cli" in text)
    assert "3 messages successfully produced" in cli and "3 messages successfully consumed" in cli
    assert "backlog: 0" in cli, cli
    curl = next(o for text, o in out.items() if "tour-payments" in text)
    assert '{"acknowledged": 1}' in curl and '"InvalidTopicName"' in curl, curl
    assert "content:hello!" in next(o for text, o in out.items() if "Exclaim" in text)


# what each example prints, in part: the rest is held to the same output twice
EXAMPLE_SAYS = {
    "admin.sh": "backlog: 2",
    "asyncio_client.py": "b'hello'",
    "delayed_delivery.sh": "content:later",
    "encryption.py": "b'the code is 1234' ['vault-key']",
    "failover.py": "in use: the primary",
    "functions.sh": "content:hello!",
    "http_api.sh": '{"acknowledged": 2}',
    "inbound.sh": '"duplicate": true',
    "produce_and_consume.py": "b'order-3' customer-0 {'n': '3'} redelivered: 1",
    "producer_features.py": "chunked message arrives whole: 6000000",
    "redelivery.py": "dead letter: b'poison'",
    "schemas.py": "AvroSchema 1 c-7 ['book'] version 0",
    "subscription_types.py": "regex: [b'to a', b'to b']",
    "table_view.py": "None 1",
    "tokens.sh": '"sub": "billing"',
    "verify.sh": "cleanup passed",
}


def test_every_example_has_what_it_prints_named():
    assert sorted(EXAMPLE_SAYS) == [p.name for p in EXAMPLES]


# the examples that wait longest on the service (long polls, redeliveries, `magnetar
# verify`'s checks) start first, so the others fill in around them
SLOWEST_EXAMPLES = ("verify.sh", "admin.sh", "redelivery.py", "subscription_types.py")
# two at a time: the examples' requests then need no more Lambda containers of the stack
# than one at a time did (37 loads, each building an engine and its boto3 clients); four at a
# time needed 56, about 6 CPU-s more (measured)
EXAMPLES_AT_ONCE = 2


def _twice(example: Path, env: dict[str, str]) -> tuple[str, str]:
    """An example's output run once, then again."""
    first = run_file(example, f"examples/{example.name}", env)
    return first, run_file(example, f"examples/{example.name}", env)


@pytest.mark.slow
def test_every_example_runs_twice_with_the_same_output(local_stack, newcomer_env):
    """Each example runs twice in a row, ``EXAMPLES_AT_ONCE`` examples at a time on the one
    stack (each has topics and namespaces of its own, as a newcomer may run two in two
    terminals): an example mostly waits on the service (long polls, a nack's redelivery, a
    delay), so two side by side take about 60 % of the wall time one after the other took
    (measured: 60 s against 99-109 s, loaded machine), for the same CPU."""
    env = {**newcomer_env, "MAGNETAR_SERVICE_URL": local_stack.url}
    order = sorted(EXAMPLES, key=lambda p: (p.name not in SLOWEST_EXAMPLES, p.name))
    with ThreadPoolExecutor(EXAMPLES_AT_ONCE) as pool:
        outputs = dict(zip(order, pool.map(lambda p: _twice(p, env), order), strict=True))
    for example in EXAMPLES:
        first, again = outputs[example]
        assert EXAMPLE_SAYS[example.name] in first, f"examples/{example.name}\n{first}"
        assert same_run(first) == same_run(again), (
            f"examples/{example.name}\n--- first\n{first}\n--- again\n{again}"
        )


@pytest.fixture
def fresh_service(tmp_path):
    """``magnetar local --port 0`` in a subprocess, as ``make run`` starts it, with its state
    in ``MAGNETAR_HOME``; yields that environment (with the URL in its record,
    ``services/<pid>.json``, as the CLI finds it) once the service answers. The tests'
    master (``local[1]``), cheaper JVM options and Spark settings go to every Spark job
    (``PYSPARK_SUBMIT_ARGS``, ``spark_submit_args_for_tests``): ``magnetar jobs run``'s and
    the ones the service launches (the three jobs' JVMs 25 -> 21 CPU-s with the master,
    measured)."""
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
@pytest.mark.timeout(3 * SPARK_BLOCK_TIMEOUT_S)  # the blocks' own limit, not the suite's 300 s
def test_every_readme_block_that_runs_spark_runs_alone_on_a_fresh_service(fresh_service, tmp_path):
    records = (Path(fresh_service["MAGNETAR_HOME"]) / "services").glob("*.json")
    url = json.loads(next(records).read_text())["url"]
    blocks = runnable(page_blocks(), "runs Spark")
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
def test_every_secured_block_runs_twice_against_a_service_with_authentication_on(
    secured_gateway, secured_root, tmp_path
):
    blocks = runnable(page_blocks(), "runs with --auth")
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
