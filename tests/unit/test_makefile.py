"""What the Makefile's targets do, read from `make -n -B` (a dry run that prints every
command of a target and of all it depends on, running none)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")


def dry_run(target: str) -> str:
    done = subprocess.run(["make", "-n", "-B", target], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_make_run_never_installs_a_browser_or_anything_else_with_apt_get():
    commands = dry_run("run")
    assert "magnetar local --port" in commands
    assert "apt-get" not in commands and "chromium" not in commands


def test_make_test_installs_chromium_for_the_browser_test_and_says_so_first():
    commands = dry_run("test")
    assert "apt-get install -y -qq chromium" in commands
    assert commands.index("installing Debian's chromium") < commands.index("apt-get update")


def test_the_first_install_shows_pips_progress_and_says_how_long_it_takes():
    commands = dry_run("install")
    assert "1-3 minutes on a fresh machine" in commands
    pip_installs = [line for line in commands.splitlines() if "pip install" in line]
    assert len(pip_installs) == 2 and not any("--quiet" in line for line in pip_installs)
    assert "class data sharing archive (20-100 s, once" in commands


def test_make_stop_stops_the_services_started_here():
    assert "magnetar stop" in dry_run("stop")
