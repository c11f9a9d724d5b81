"""How the tests of a run are ordered and dealt to pytest-xdist's workers (tests/conftest.py's
``pytest_collection_modifyitems``): longest first (``run_order``), each file whole on one
worker's slice, the heavy files balanced by ``weight`` and the files that use a SparkSession
on half of the workers (``dealt``)."""

from __future__ import annotations

import pytest

RUN_FIRST = ("slow", "spark", "emulator")
"""Markers in the order their tests start on each worker: the longest first, so that the end
of the run is short tests, not one long test on one worker (longest-processing-time-first)."""


def run_order(item: pytest.Item) -> int:
    """0 for ``slow`` tests, 1 for ``spark``, 2 for ``emulator``, 3 for the rest; -1, before
    all, for the emulator fuzz lane: after each request it reads the stack's tables back with
    filtered Scans, which moto answers by reading every item, so on a worker's stack that
    other tests have filled it cost several times more (measured: 0.2 s a scan at 5,000
    items, 5 ms on an empty table)."""
    if item.get_closest_marker("fuzz") and item.get_closest_marker("emulator"):
        return -1
    for rank, name in enumerate(RUN_FIRST):
        if item.get_closest_marker(name) is not None:
            return rank
    return len(RUN_FIRST)


WEIGHTS = {"slow": 20.0, "spark": 4.0, "emulator": 1.0}
"""A test's rough cost by its first marker in RUN_FIRST order (seconds, alone); others 0.05,
and 0.1 for the emulator fuzz lane (rank -1: 155 requests, 17 CPU-s in all, measured; it
weighed 20 each as ``slow``, 3,100 for the file, so one slice held it and no other heavy
file)."""


def weight(item: pytest.Item) -> float:
    rank = run_order(item)
    if rank < 0:
        return 0.1
    return WEIGHTS[RUN_FIRST[rank]] if rank < len(RUN_FIRST) else 0.05


def heavy(item: pytest.Item) -> bool:
    """A test of RUN_FIRST's markers or of the emulator fuzz lane: its file is dealt whole."""
    return run_order(item) < len(RUN_FIRST)


def uses_spark_session(item: pytest.Item) -> bool:
    """Whether ``item`` uses the worker's SparkSession (the ``spark`` fixture, directly or
    through another: ``jobs_in_process``), which the worker starts for its first such test."""
    return "spark" in getattr(item, "fixturenames", ())


def spark_workers(workers: int) -> int:
    """How many of ``workers`` slices hold the files that use a SparkSession: half of them.
    Each worker that runs one starts a JVM and warms it up again (measured alone: tests/spark/
    test_expire_transform.py 28.4 CPU-s and test_compact_topic_transform.py 19.7, 40.4 in
    one process: 10.5 CPU-s a JVM); on half the workers the Spark files still end within
    the others' time."""
    return max(1, workers // 2)


def dealt(items: list[pytest.Item], workers: int) -> list[pytest.Item]:
    """``items`` (longest first) arranged as ``workers`` slices, one after the other, for
    pytest-xdist's ``worksteal``: it gives each worker an equal contiguous slice to start
    with and steals from a slice's end. Each test file stays whole on one slice (its module
    fixtures, a Spark session, are made once), heavy files go longest first to the lightest
    slice, and the light files fill every slice to its size, so each slice opens with its
    share of the long tests and ends with short ones."""
    if workers <= 1:
        return items
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(str(item.path), []).append(item)
    heavy_files = sorted((f for f in files.values() if any(map(heavy, f))),
                         key=lambda f: -sum(map(weight, f)))  # fmt: skip
    light = [f for f in files.values() if not any(map(heavy, f))]
    sizes, left = [], len(items)
    for i in range(workers):  # as worksteal splits: floor(left / nodes left)
        sizes.append(left // (workers - i))
        left -= sizes[-1]
    slices: list[list[pytest.Item]] = [[] for _ in range(workers)]
    loads = [0.0] * workers
    with_spark = range(spark_workers(workers))
    for group in heavy_files:
        allowed = with_spark if any(map(uses_spark_session, group)) else range(workers)
        i = min(allowed, key=lambda k: loads[k])
        slices[i] += group
        loads[i] += sum(map(weight, group))
    for group in light:
        while group:
            i = max(range(workers), key=lambda k: sizes[k] - len(slices[k]))
            room = max(1, sizes[i] - len(slices[i]))
            slices[i] += group[:room]
            group = group[room:]
    return [item for part in slices for item in sorted(part, key=run_order)]
