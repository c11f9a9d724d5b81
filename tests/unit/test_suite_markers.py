"""The suite's markers: every test of tests/integration and tests/e2e is ``emulator``, every
test of tests/spark is ``spark``, so ``make test-fast`` (``-m "not emulator and not spark and
not slow"``) never starts a stack or a JVM. Collected in a subprocess, as pytest does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _collected(marks: str, *directories: str) -> list[str]:
    """Node ids pytest collects from ``directories`` with ``-m marks``."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "-p", "no:xdist", "-m", marks, *directories],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode in (0, 5), done.stdout[-3000:] + done.stderr[-3000:]  # 5: none
    return [line for line in done.stdout.splitlines() if "::" in line]


@pytest.mark.slow
def test_every_integration_e2e_and_spark_test_carries_its_marker():
    assert _collected("not emulator", "tests/integration", "tests/e2e") == []
    assert _collected("not spark", "tests/spark") == []
    assert _collected("emulator", "tests/integration")  # the selection does select
