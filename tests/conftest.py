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
``make test-fast`` runs ``-m "not emulator and not spark and not slow and not fuzz"`` (the fuzz lane runs in ``make test``).

Tests run longest first (``run_order``): ``slow``, then ``spark``, then ``emulator``, then the
rest. Under pytest-xdist every worker has its own stack and, once it runs a test that uses a
SparkSession, its own JVM: those files go to half of the workers (tests/dealing.py; measured
before: spreading the Spark tests beats keeping them on one worker, which then ends minutes
after the others; each JVM more costs about 10 CPU-s).

With ``MAGNETAR_TEST_CPU=<file>`` each process records every test's CPU-seconds, its
subprocesses' included (tests/cpu_accounting.py).
"""

from __future__ import annotations

import functools
import gc
import itertools
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

# Bytecode caches are written, whatever the calling shell says (as the Makefile does for make's
# runs): with PYTHONDONTWRITEBYTECODE set (this machine's shells set it) a pytest run started
# directly compiled the project and rewrote every test module again in every xdist worker and
# in every subprocess the tests start (measured: pytest's assertion rewriting alone was more
# than half of a collection's time). Set before the modules below, and the tests', are loaded.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

import pytest  # noqa: E402
from _pytest.mark.expression import Expression  # noqa: E402
from cpu_accounting import register as register_cpu_accounting  # noqa: E402
from dealing import dealt, rank_of  # noqa: E402
from hypothesis_profiles import register_profiles  # noqa: E402

from magnetar_local.testing import (  # noqa: E402, F401 - pytest fixtures
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

FULL_COLLECTIONS_WHILE_COLLECTING = 1_000_000
"""The oldest generation's threshold while the suite is collected: no full garbage collection
until it is collected (``pytest_collection``)."""
FULL_COLLECTION_EVERY = 100
"""Collections of the middle generation between full ones while the tests run (Python's
default: 10). The fuzz lanes need it most: schemathesis and Hypothesis hold a large heap and
every operation's strategies push objects into the oldest generation (the memory lane: 25
full collections took 4.1 of its 42 CPU-s, 7 took 1.4 with this)."""


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session):
    """The heap that collecting built frozen (``gc.freeze``) once the tests are collected:
    what every process imports and builds to collect the suite (the test modules and what they
    import, schemathesis, hypothesis, moto, ...: 230,000-320,000 objects) lives as long as the
    process, and every later full garbage collection went through all of it (about 0.1 CPU-s
    each, dozens in a worker's tests). While collecting, no full collection runs (nine,
    0.8 CPU-s, of a 4.9 CPU-s collection); one runs before the freeze, so that no garbage is
    kept. The young generations are collected as usual throughout.

    Then, while the tests run, a full collection at most every ``FULL_COLLECTION_EVERY``
    collections of the middle generation: with the collected heap frozen, Python's own rule
    (a full collection once the objects that reached the oldest generation since the last
    one are a quarter of those it holds, frozen ones not counted) ran one every 2 s of the unit
    lane (measured in one process: 80 full collections, 9.4 of its 55 CPU-s; 53 and 12.3
    without the freeze). Cyclic garbage that reached the oldest generation waits longer for
    one; nothing a test checks depends on when (tests that need it collect, ``gc.collect``)."""
    young, middle, full = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_COLLECTIONS_WHILE_COLLECTING)
    try:
        return (yield)
    finally:
        gc.set_threshold(young, middle, max(full, FULL_COLLECTION_EVERY))
        gc.collect()
        gc.freeze()


def pytest_configure(config: pytest.Config) -> None:
    """Spark jobs tests start as subprocesses (the local stack's launcher) get the tests'
    JVM options and Spark settings, as the in-process session does."""
    from magnetar_local.testing import spark_submit_args_for_tests

    os.environ.setdefault("PYSPARK_SUBMIT_ARGS", spark_submit_args_for_tests())
    register_cpu_accounting(config)  # opt-in: $MAGNETAR_TEST_CPU (tests/cpu_accounting.py)


@pytest.fixture
def heap_frozen_again() -> Iterator[None]:
    """For a test that unfreezes the heap (``gc.unfreeze``) to check what freezes it: the
    process's heap collected and frozen again after it, as collection left it
    (``pytest_collection``); unfrozen, every later full collection of the worker went
    through the whole collected suite again."""
    yield
    gc.collect()
    gc.freeze()


def _having(markers: set[str]):
    """A matcher for ``Expression.evaluate``: true for the names in ``markers``."""
    return lambda name, /, **kwargs: not kwargs and name in markers


def deselects_every_test_marked(markexpr: str, marker: str) -> bool:
    """Whether the ``-m`` expression ``markexpr`` deselects every test carrying ``marker``,
    whatever other markers the test has (each combination of the names in ``markexpr``)."""
    names = set(re.findall(r"[A-Za-z_][\w.]*", markexpr)) - {"and", "or", "not", "True", "False"}
    if not markexpr or marker not in names:
        return False
    expression = Expression.compile(markexpr)
    others = sorted(names - {marker})
    for count in range(len(others) + 1):
        for extra in itertools.combinations(others, count):
            if expression.evaluate(_having({marker, *extra})):
                return False
    return True


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """tests/<directory> whose marker the ``-m`` expression deselects is not collected at all
    (``make test-fast`` leaves out tests/integration, e2e, spark and fuzz): importing their
    modules cost each xdist worker about 7 CPU-s, to deselect every test they hold. A
    directory named on the command line (or a path inside it) is collected as usual."""
    if collection_path.parent != TESTS or collection_path.name not in DIRECTORY_MARKERS:
        return None
    start = config.invocation_params.dir
    named = [(start / arg.split("::")[0]).resolve() for arg in config.args]
    if any(path == collection_path or collection_path in path.parents for path in named):
        return None
    marker = DIRECTORY_MARKERS[collection_path.name]
    return True if deselects_every_test_marked(config.getoption("markexpr", ""), marker) else None


@functools.cache
def _directory_of(path: str) -> str:
    """The directory of tests/ holding the file at ``path``, "" outside tests/ (resolved once
    a file, not once a test: 4,700 resolves cost each process collecting the suite 0.1 s)."""
    try:
        return Path(path).resolve().relative_to(TESTS).parts[0]
    except ValueError:  # a test outside tests/
        return ""


def markers_of(item: pytest.Item) -> set[str]:
    """The markers ``item`` gets from its directory and its fixtures."""
    directory = _directory_of(str(item.path))
    names = {DIRECTORY_MARKERS[directory]} if directory in DIRECTORY_MARKERS else set()
    fixtures = set(getattr(item, "fixturenames", ()))
    return names | {marker for fixture, marker in FIXTURE_MARKERS.items() if fixture in fixtures}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    ranks = {}  # id(item) -> run_order(item), from the markers it has once they are added
    for item in items:
        present = {mark.name for mark in item.iter_markers()}
        missing = markers_of(item) - present
        for name in sorted(missing):
            item.add_marker(name)
        ranks[id(item)] = rank_of(present | missing)
    items.sort(key=lambda item: ranks[id(item)])  # stable: file order within each rank
    items[:] = dealt(items, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")), ranks)
