"""Run pulsar-client's own test files against Magnetar: ``import pulsar`` is ``magnetar``.

Usage (the test files are pulsar-client-python's ``tests/*.py``, kept outside this repository)::

    .venv/bin/python tests/upstream/run_upstream.py /path/to/pulsar-client-python/tests \
        [--files pulsar_test.py schema_test.py ...] [-k EXPR] [--timeout 300] [--json out.json]

It starts ``magnetar local`` prepared as Pulsar's client test service (``service.py``),
copies each file into a run folder with Pulsar's URLs rewritten to the local https
listener, runs it with pytest (``tests/upstream/shim`` first on ``sys.path``) and prints,
per file, how many tests passed and failed and each failing test with a one-line reason.
Exit code 0 when it ran (whatever the counts), 2 when the service could not start.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from pathlib import Path

from service import HERE, UpstreamService, first_line

FILES = ["pulsar_test.py", "schema_test.py", "asyncio_test.py", "table_view_test.py", "reader_test.py"]  # fmt: skip


@dataclass
class FileResult:
    """One test file's outcome."""

    name: str
    passed: int = 0
    failed: dict[str, str] = field(default_factory=dict)
    skipped: int = 0

    @property
    def total(self) -> int:
        return self.passed + len(self.failed) + self.skipped


def _parse(name: str, junit: Path) -> FileResult:
    result = FileResult(name)
    if not junit.exists():
        result.failed["<file>"] = "pytest wrote no report (collection crashed?)"
        return result
    for case in ET.parse(junit).getroot().iter("testcase"):
        test = f"{case.get('classname', '').rsplit('.', 1)[-1]}.{case.get('name')}"
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        if problem is not None:
            message = (problem.get("message") or "").strip().splitlines()
            result.failed[test] = message[0][:200] if message else first_line(problem.text or "")
        elif case.find("skipped") is not None:
            result.skipped += 1
        else:
            result.passed += 1
    return result


def run_file(test: Path, ca: Path, timeout_s: int, keyword: str | None) -> FileResult:
    """``test`` under pytest in its folder; its JUnit report parsed."""
    junit = test.with_suffix(".xml")
    env = {**os.environ, "REQUESTS_CA_BUNDLE": str(ca), "SSL_CERT_FILE": str(ca),
           "PYTHONPATH": os.pathsep.join([str(HERE / "shim"), str(test.parent)])}  # fmt: skip
    command = [sys.executable, "-m", "pytest", test.name, "-q", "-p", "no:cacheprovider",
               "-p", "no:randomly", "-o", "addopts=", "-o", f"timeout={timeout_s}",
               "-o", "timeout_method=signal",  # no watchdog thread: tests count threads
               "--rootdir", str(test.parent), f"--junitxml={junit}"]  # fmt: skip
    if keyword:
        command += ["-k", keyword]
    with (test.parent / f"{test.stem}.out").open("w") as out:
        subprocess.run(command, cwd=test.parent, env=env, stdout=out, stderr=subprocess.STDOUT,  # noqa: S603
                       check=False)  # fmt: skip
    return _parse(test.name, junit)


def report(results: list[FileResult]) -> str:
    """Per file: passed of total, then each failing test and its reason."""
    lines = []
    for r in results:
        lines.append(f"{r.name}: {r.passed} passed of {r.total} ({len(r.failed)} failed, {r.skipped} skipped)")  # fmt: skip
        lines += [f"  FAILED {test}: {reason}" for test, reason in sorted(r.failed.items())]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "upstream",
        type=Path,
        nargs="?",
        default=os.environ.get("MAGNETAR_UPSTREAM_TESTS"),  # fmt: skip
        help="pulsar-client-python's tests/ folder (or $MAGNETAR_UPSTREAM_TESTS)",
    )
    parser.add_argument("--files", nargs="+", default=FILES, help="which test files (default: the five)")  # fmt: skip
    parser.add_argument("-k", dest="keyword", help="pytest's -k: only the matching tests")
    parser.add_argument(
        "--timeout",
        type=int,
        default=300,
        help="seconds a test may take (compaction runs a Spark job)",
    )
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--run-dir", type=Path, help="run here (kept) instead of a temporary folder")  # fmt: skip
    args = parser.parse_args(argv)
    if args.upstream is None or not Path(args.upstream).is_dir():
        parser.error("give pulsar-client-python's tests/ folder")
    run = args.run_dir or Path(tempfile.mkdtemp(prefix="magnetar-upstream-"))
    run.mkdir(parents=True, exist_ok=True)
    try:
        service = UpstreamService(run)
    except RuntimeError as error:
        print(error, file=sys.stderr)
        return 2
    try:
        folder = service.prepare()
        print(f"service {service.url}; run folder {run}", flush=True)
        results = []
        for test in service.copy_tests(Path(args.upstream), args.files):
            results.append(run_file(test, folder.ca, args.timeout, args.keyword))
            print(report(results[-1:]), flush=True)
    finally:
        service.stop()
    print("\n" + report(results))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
