"""The tests' Spark worker daemon (magnetar_local.spark_daemon): what it changes around
pyspark's own daemon, checked without a JVM."""

from __future__ import annotations

import gc
import sys
import weakref
from importlib.metadata import distribution
from pathlib import Path

import pytest

from magnetar_local import spark_daemon
from magnetar_local.spark_jvm import TEST_SPARK_CONF


def test_the_tests_spark_starts_its_python_workers_through_this_daemon():
    assert TEST_SPARK_CONF["spark.python.daemon.module"] == spark_daemon.__name__


def test_a_task_leaves_nothing_for_the_daemons_collection_to_scan(heap_frozen_again):
    """What the task left alive is frozen (no later collection scans it) and its garbage is
    collected. Checked on the objects themselves, not on the collector's counts, which the
    worker's other threads (a stack's gateway and long-polls) move meanwhile."""
    frozen = gc.get_freeze_count()
    kept: list = []
    garbage: list = []

    class Cycle:
        pass

    def main(infile, outfile):
        kept.append([infile, outfile])  # a tracked container the task leaves alive
        cycle = Cycle()
        cycle.me = cycle  # freed only by a collection
        garbage.append(weakref.ref(cycle))
        return "done"

    try:
        assert spark_daemon._freezing(main)("in", "out") == "done"
        assert kept == [["in", "out"]]
        assert garbage[0]() is None  # the task's garbage was collected
        assert gc.get_freeze_count() > frozen
        assert not any(o is kept[0] for o in gc.get_objects())  # frozen: in no generation
    finally:
        gc.unfreeze()


def test_a_failing_task_is_collected_and_frozen_too(heap_frozen_again):
    def main(infile, outfile):
        raise SystemExit(3)  # how pyspark's worker exits on a failure

    try:
        with pytest.raises(SystemExit):
            spark_daemon._freezing(main)(None, None)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_the_installed_pyspark_comes_before_spark_zips_of_the_same_release(monkeypatch):
    home = Path(str(distribution("pyspark").locate_file("pyspark")))
    ours = str(home / "python" / "lib" / "pyspark.zip")
    py4j = str(home / "python" / "lib" / "py4j-0.10.9.9-src.zip")
    other = "/opt/spark/python/lib/pyspark.zip"  # another Spark's: stays where it is
    site = str(home.parent)  # where the installed pyspark is found
    monkeypatch.setattr(sys, "path", [ours, py4j, other, site])
    spark_daemon._installed_pyspark_first()
    assert sys.path == [other, site, ours, py4j]


def test_every_module_the_daemon_preloads_exists():
    for name in spark_daemon.PRELOAD:
        assert __import__(name) is not None
