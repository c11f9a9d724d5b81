"""The ``magnetar`` CLI against the embedded stack."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.emulator

ROOT = Path(__file__).resolve().parents[2]


def run_cli(url: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, MAGNETAR_SERVICE_URL=url,
               PYTHONPATH=os.pathsep.join(str(ROOT / p) for p in ("sdk", "layers/core/python")))  # fmt: skip
    return subprocess.run([sys.executable, "-m", "magnetar.cli.main", *args], env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def test_cli_produces_and_consumes_through_the_stack(local_stack):
    topic = f"cli-{uuid.uuid4().hex[:8]}"
    produced = run_cli(local_stack.url, "produce", topic, "-m", "hello,world", "-n", "2")
    assert produced.returncode == 0, produced.stderr
    assert produced.stdout.strip() == "4 messages successfully produced"
    consumed = run_cli(local_stack.url, "consume", topic, "-s", "cli", "-n", "4",
                       "-p", "Earliest", "-t", "Shared")  # fmt: skip
    assert consumed.returncode == 0, consumed.stderr
    contents = [line.rsplit("content:", 1)[1] for line in consumed.stdout.splitlines()
                if "content:" in line]  # fmt: skip
    assert contents == ["hello", "world", "hello", "world"]
    assert consumed.stdout.endswith("4 messages successfully consumed\n")
    empty = run_cli(local_stack.url, "consume", topic, "-s", "cli", "-n", "1", "--timeout", "1")
    assert empty.stdout.endswith("0 messages successfully consumed\n")  # all were acknowledged
