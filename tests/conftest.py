"""Shared fixtures and the suite's markers, for every test directory.

Fixtures from magnetar_local.testing: ``local_stack``, ``aws_clients``, ``engine_clients``
and ``spark`` (session-scoped: one of each per run, or per xdist worker), ``jobs_in_process``.

Markers (``--strict-markers``; declared in pyproject.toml):
  ``emulator``  needs the embedded AWS stack (moto server): every test of tests/integration
                and tests/e2e, and any test that uses ``local_stack`` or ``aws_clients``;
  ``spark``     needs a Spark session (a JVM): every test of tests/spark, any test that uses
                the ``spark`` fixture, and tests that run a job's main() (marked in place);
  ``slow``      takes long even on a quiet machine;
  ``fuzz``      the fuzz lane (schemathesis over openapi.yaml): every test of tests/fuzz; its
                memory-service part is fast, its emulator part is ``emulator`` by fixture.
``make test-fast`` runs ``-m "not emulator and not spark and not slow"``.

Tests run longest first (``run_order``): ``slow``, then ``spark``, then ``emulator``, then the
rest. Under pytest-xdist every worker has its own stack and, once it runs a ``spark`` test, its
own JVM (measured: spreading the Spark tests beats keeping them on one worker, which then
ends minutes after the other).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis_profiles import register_profiles

from magnetar_local.testing import (  # noqa: F401 - pytest fixtures
    aws_clients,
    engine_clients,
    jobs_in_process,
    local_stack,
    secured_gateway,
    spark,
)

TESTS = Path(__file__).resolve().parent
DIRECTORY_MARKERS = {
    "integration": "emulator",
    "e2e": "emulator",
    "spark": "spark",
    "fuzz": "fuzz",
}
"""tests/<directory> -> the marker every test in it carries."""
FIXTURE_MARKERS = {
    "local_stack": "emulator",
    "aws_clients": "emulator",
    "engine_clients": "emulator",
    "secured_gateway": "emulator",
    "spark": "spark",
}
"""fixture -> the marker of every test that uses it."""

register_profiles()


def markers_of(item: pytest.Item) -> set[str]:
    """The markers ``item`` gets from its directory and its fixtures."""
    try:
        directory = Path(item.path).resolve().relative_to(TESTS).parts[0]
    except ValueError:  # a test outside tests/
        directory = ""
    names = {DIRECTORY_MARKERS[directory]} if directory in DIRECTORY_MARKERS else set()
    fixtures = set(getattr(item, "fixturenames", ()))
    return names | {marker for fixture, marker in FIXTURE_MARKERS.items() if fixture in fixtures}


RUN_FIRST = ("slow", "spark", "emulator")
"""Markers in the order their tests start on each worker: the longest first, so that the end
of the run is short tests, not one long test on one worker (longest-processing-time-first)."""


def run_order(item: pytest.Item) -> int:
    """0 for ``slow`` tests, 1 for ``spark``, 2 for ``emulator``, 3 for the rest."""
    for rank, name in enumerate(RUN_FIRST):
        if item.get_closest_marker(name) is not None:
            return rank
    return len(RUN_FIRST)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        present = {mark.name for mark in item.iter_markers()}
        for name in sorted(markers_of(item) - present):
            item.add_marker(name)
    items.sort(key=run_order)  # stable: file order within each rank
    items[:] = dealt(items, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))


def dealt(items: list[pytest.Item], workers: int) -> list[pytest.Item]:
    """``items`` (longest first) dealt like cards to ``workers`` hands, the hands one after
    the other: pytest-xdist's ``worksteal`` gives each worker an equal contiguous slice of
    the collection to start with (and steals from a slice's end), so each slice must open
    with its share of the long tests, not one slice hold them all."""
    return [item for hand in range(workers) for item in items[hand::workers]]
