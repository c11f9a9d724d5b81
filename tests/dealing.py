"""How the tests of a run are ordered and dealt to pytest-xdist's workers (tests/conftest.py's
``pytest_collection_modifyitems``): longest first (``run_order``), each file whole on one
worker's slice, the heavy files balanced by ``weight`` and the files that use a SparkSession
on half of the workers (``dealt``)."""

from __future__ import annotations

from collections.abc import Collection

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
    names = ("fuzz", *RUN_FIRST)
    return rank_of({name for name in names if item.get_closest_marker(name) is not None})


def rank_of(markers: Collection[str]) -> int:
    """``run_order`` of a test carrying ``markers`` (the names of all its markers)."""
    if "fuzz" in markers and "emulator" in markers:
        return -1
    for rank, name in enumerate(RUN_FIRST):
        if name in markers:
            return rank
    return len(RUN_FIRST)


WEIGHTS = {"slow": 20.0, "spark": 4.0, "emulator": 1.0}
"""A test's rough cost by its first marker in RUN_FIRST order (seconds, alone); others 0.05,
and 0.1 for the emulator fuzz lane (rank -1: 155 requests, 17 CPU-s in all, measured; it
weighed 20 each as ``slow``, 3,100 for the file, so one slice held it and no other heavy
file)."""


def weight(item: pytest.Item) -> float:
    return _weight_of(run_order(item))


def _weight_of(rank: int) -> float:
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


def dealt(
    items: list[pytest.Item], workers: int, ranks: dict[int, int] | None = None
) -> list[pytest.Item]:
    """``items`` (longest first) arranged as ``workers`` slices, one after the other, for
    pytest-xdist's ``worksteal``: it gives each worker an equal contiguous slice to start
    with and steals from a slice's end. Each test file stays whole on one slice (its module
    fixtures, a Spark session, are made once), heavy files go longest first to the lightest
    slice, and the light files fill every slice to its size, so each slice opens with its
    share of the long tests and ends with short ones. ``ranks``: each item's ``run_order`` by
    its ``id``, when the caller knows them (looking markers up costs)."""
    if workers <= 1:
        return items
    known = ranks if ranks is not None else {id(item): run_order(item) for item in items}

    def rank(item: pytest.Item) -> int:
        return known[id(item)]

    def file_weight(group: list[pytest.Item]) -> float:
        return sum(_weight_of(rank(item)) for item in group)

    def is_heavy(group: list[pytest.Item]) -> bool:
        return any(rank(item) < len(RUN_FIRST) for item in group)

    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(str(item.path), []).append(item)
    heavy_files = sorted(filter(is_heavy, files.values()), key=lambda f: -file_weight(f))
    light = [f for f in files.values() if not is_heavy(f)]
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
        loads[i] += file_weight(group)
    for group in light:
        while group:
            i = max(range(workers), key=lambda k: sizes[k] - len(slices[k]))
            room = max(1, sizes[i] - len(slices[i]))
            slices[i] += group[:room]
            group = group[room:]
    return [item for part in slices for item in sorted(part, key=rank)]
