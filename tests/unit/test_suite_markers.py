"""The suite's markers: every test of tests/integration and tests/e2e is ``emulator``, every
test of tests/spark is ``spark``, so ``make test-fast`` (``-m "not emulator and not spark and
not slow"``) never starts a stack or a JVM; every test of tests/fuzz is ``fuzz``, and those
on the emulator (tests/fuzz/test_fuzz_emulator.py) are ``emulator`` too.

Checked on the items this session collected when it collected those lanes (``make test``:
every xdist worker collects the whole suite); otherwise pytest collects them in a
subprocess.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LANES = {"integration": "emulator", "e2e": "emulator", "spark": "spark", "fuzz": "fuzz"}
EMULATOR_FUZZ = "test_fuzz_emulator.py"


def _lane_of(item: pytest.Item) -> str | None:
    try:
        parts = item.path.relative_to(ROOT / "tests").parts
    except ValueError:
        return None
    return parts[0] if parts and parts[0] in LANES else None


def _collected(marks: str, *directories: str) -> list[str]:
    """Node ids pytest collects from ``directories`` with ``-m marks`` (a subprocess)."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "-p", "no:xdist", "-m", marks, *directories],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode in (0, 5), done.stdout[-3000:] + done.stderr[-3000:]  # 5: none
    return [line for line in done.stdout.splitlines() if "::" in line]


@pytest.mark.slow
def test_every_integration_e2e_spark_and_fuzz_test_carries_its_marker(request):
    by_lane: dict[str, list[pytest.Item]] = {lane: [] for lane in LANES}
    for item in request.session.items:
        lane = _lane_of(item)
        if lane is not None:
            by_lane[lane].append(item)
    if all(by_lane.values()):  # this session collected every lane
        unmarked = [
            item.nodeid
            for lane, items in by_lane.items()
            for item in items
            if item.get_closest_marker(LANES[lane]) is None
        ]
        unmarked += [
            item.nodeid
            for item in by_lane["fuzz"]
            if EMULATOR_FUZZ in item.nodeid and item.get_closest_marker("emulator") is None
        ]
        assert unmarked == []
        return
    assert _collected("not emulator", "tests/integration", "tests/e2e") == []
    assert _collected("not spark", "tests/spark") == []
    assert _collected("not fuzz", "tests/fuzz") == []
    # the fuzz lane's emulator part is emulator (by its fixture), its memory part is not
    emulator = _collected("emulator", "tests/fuzz")
    assert emulator and all(EMULATOR_FUZZ in node for node in emulator)
    assert len(_collected("not emulator", "tests/fuzz/" + EMULATOR_FUZZ)) == 0
    assert _collected("emulator", "tests/integration")  # the selection does select
